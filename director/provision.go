package director

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/store"
)

// maxProvision bounds one bulk provisioning call.
const maxProvision = 20000

type provisionIn struct {
	Prefix   string `json:"prefix"`   // accounts are <prefix>-<i>@load.ley
	Count    int    `json:"count"`    // accounts
	Areas    int    `json:"areas"`    // Areas, owned by the caller; account i joins Area i % Areas
	Kind     string `json:"kind"`     // the Areas' kind (default village, or the template's)
	Template string `json:"template"` // the Areas' template (default the kind's; "empty" for an open floor of W x H)
	W        int    `json:"w"`        // the Areas' size: the template's map's, or any for "empty"
	H        int    `json:"h"`        //
	Password string `json:"password"` // every account's password
	// Pairs also makes account i a member of Area (i % Areas) ^ 1, the
	// other Area of its pair (for portal hopping); Areas must be even.
	Pairs bool `json:"pairs,omitempty"`
}

type provisioned struct {
	Email   string `json:"email"`
	Account uint64 `json:"account"`
	Area    uint32 `json:"area"`
}

// provision: POST /v1/admin/provision (admins). The bulk path the load
// driver uses: it creates (or reuses, by email) accounts and Areas (an
// Area reused by name keeps its kind, template and size) and
// grants membership through the same store operations as the single-item
// endpoints, so the realm's rules hold for load as for players. The
// password is hashed once for the whole batch.
func (d *Director) provision(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	var in provisionIn
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	switch {
	case in.Count < 1 || in.Count > maxProvision || in.Areas < 1 || in.Areas > in.Count:
		return 0, nil, errBadRequest(fmt.Sprintf("count 1..%d and areas 1..count", maxProvision))
	case in.Pairs && in.Areas%2 != 0:
		return 0, nil, errBadRequest("pairs needs an even number of areas")
	case len(in.Prefix) < 1 || len(in.Prefix) > 32:
		return 0, nil, errBadRequest("prefix must be 1..32 bytes")
	}
	shape, e := d.newAreaShape(in.Kind, in.Template, in.W, in.H, "village")
	if e != nil {
		return 0, nil, e
	}
	if err := auth.CheckPassword(in.Password); err != nil {
		return 0, nil, errBadRequest(auth.Refusal(err))
	}
	ctx := r.Context()
	now := time.Now()
	// The Areas: reuse the caller's Areas named <prefix>-<j>, create the rest.
	owned, err := d.store.AreasOf(ctx, acct.ID)
	if err != nil {
		return 0, nil, internalErr(err)
	}
	byName := map[string]store.AreaID{}
	for _, a := range owned {
		if a.Owner == acct.ID {
			byName[a.Name] = a.ID
		}
	}
	areas := make([]store.AreaID, in.Areas)
	for j := range areas {
		name := fmt.Sprintf("%s-%d", in.Prefix, j)
		if id, ok := byName[name]; ok {
			areas[j] = id
			continue
		}
		a, err := d.store.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: shape.kind, Template: shape.template, Name: name,
			W: shape.w, H: shape.h, Seed: uint64(j + 1), Created: now})
		if err != nil {
			return 0, nil, internalErr(err)
		}
		areas[j] = a.ID
	}
	phc, err := d.hasher.Hash(ctx, in.Password)
	if err != nil {
		return 0, nil, internalErr(err)
	}
	out := make([]provisioned, in.Count)
	for i := range out {
		email := fmt.Sprintf("%s-%d@load.ley", in.Prefix, i)
		a, _, err := d.store.AccountByEmail(ctx, email)
		if errors.Is(err, store.ErrNotFound) {
			a, err = d.store.CreateAccount(ctx, store.NewAccount{Email: email, Name: fmt.Sprintf("%s-%d", in.Prefix, i), PasswordPHC: phc, Created: now})
		}
		if err != nil {
			return 0, nil, internalErr(err)
		}
		area := areas[i%len(areas)]
		member := []store.AreaID{area}
		if in.Pairs {
			member = append(member, areas[(i%len(areas))^1])
		}
		for _, m := range member {
			if err := d.store.AddMember(ctx, m, a.ID, store.RoleMember, now); err != nil && !errors.Is(err, store.ErrDuplicate) {
				return 0, nil, internalErr(err)
			}
		}
		out[i] = provisioned{Email: email, Account: uint64(a.ID), Area: uint32(area)}
	}
	ids := make([]uint32, len(areas))
	for j, a := range areas {
		ids[j] = uint32(a)
	}
	return http.StatusOK, map[string]any{"accounts": out, "areas": ids}, nil
}

type hostOut struct {
	ID        uint32 `json:"id"`
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	WSURL     string `json:"ws_url"`
	Spawned   bool   `json:"spawned"`
	Areas     int    `json:"areas"`
	Active    int    `json:"active"`
	Peers     int    `json:"peers"`
	RSSKiB    int64  `json:"rss_kib"`
	TickP99us int64  `json:"tick_p99_us"`
	BeatAgeMS int64  `json:"beat_age_ms"`
}

// hostsStats: GET /v1/admin/hosts (admins): every registered host with
// its last heartbeat (Areas, active Areas, peers, RSS, worst tick p99).
func (d *Director) hostsStats(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	d.mu.Lock()
	out := make([]hostOut, 0, len(d.hosts))
	for _, h := range d.hosts {
		out = append(out, hostOut{ID: h.id, Name: h.name, PID: h.pid, WSURL: h.wsURL, Spawned: h.child != nil,
			Areas: h.beat.Areas, Active: h.beat.Active, Peers: h.beat.Peers, RSSKiB: h.beat.RSSKiB,
			TickP99us: h.beat.TickP99, BeatAgeMS: time.Since(h.lastBeat).Milliseconds()})
	}
	d.mu.Unlock()
	return http.StatusOK, map[string]any{"hosts": out}, nil
}

type liveOut struct {
	Area     uint32   `json:"area"`
	Template string   `json:"template"`
	Host     uint32   `json:"host"`
	Epoch    uint64   `json:"epoch"`
	Peers    int      `json:"peers"`
	Accounts []uint64 `json:"accounts"`
	Closing  bool     `json:"closing"`
}

// liveAreas: GET /v1/admin/areas (admins): every live Area, its host,
// incarnation, and the accounts its host reports bound there.
func (d *Director) liveAreas(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	d.mu.Lock()
	out := make([]liveOut, 0, len(d.areas))
	for _, l := range d.areas {
		if l.host == nil {
			continue
		}
		lo := liveOut{Area: uint32(l.id), Template: l.template, Host: l.host.id, Epoch: uint64(l.epoch), Peers: l.peers, Closing: l.closing,
			Accounts: make([]uint64, 0, len(l.accounts))} // [] rather than null when none
		for _, a := range l.accounts {
			lo.Accounts = append(lo.Accounts, uint64(a))
		}
		out = append(out, lo)
	}
	d.mu.Unlock()
	return http.StatusOK, map[string]any{"areas": out}, nil
}
