package director

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/store"
)

// maxProvision bounds one bulk provisioning call.
const maxProvision = 20000

// provision: POST /v1/admin/provision (admins). The bulk path the load
// driver uses: it creates (or reuses, by email) accounts and Areas (an
// Area reused by name keeps its kind, template and size) and
// grants membership through the same store operations as the single-item
// endpoints, so the realm's rules hold for load as for players. The
// password is hashed once for the whole batch.
//
// It is served only by a director started for load tests
// (Config.LoadProvisioning, --load-provisioning); otherwise the route
// answers 404 NOT_FOUND as if it did not exist.
func (d *Director) provision(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !d.cfg.LoadProvisioning {
		return 0, nil, errNoRoute
	}
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	var in apijson.ProvisionRequest
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
		return 0, nil, storeErr(err)
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
			return 0, nil, storeErr(err)
		}
		areas[j] = a.ID
	}
	phc, err := d.hasher.Hash(ctx, in.Password)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := make([]apijson.Provisioned, in.Count)
	for i := range out {
		email := fmt.Sprintf("%s-%d@load.ley", in.Prefix, i)
		a, _, err := d.store.AccountByEmail(ctx, email)
		if errors.Is(err, store.ErrNotFound) {
			a, err = d.store.CreateAccount(ctx, store.NewAccount{Email: email, Name: fmt.Sprintf("%s-%d", in.Prefix, i), PasswordPHC: phc, Created: now})
		}
		if err != nil {
			return 0, nil, storeErr(err)
		}
		area := areas[i%len(areas)]
		member := []store.AreaID{area}
		if in.Pairs {
			member = append(member, areas[(i%len(areas))^1])
		}
		for _, m := range member {
			if err := d.store.AddMember(ctx, m, a.ID, store.RoleMember, now); err != nil && !errors.Is(err, store.ErrDuplicate) {
				return 0, nil, storeErr(err)
			}
		}
		out[i] = apijson.Provisioned{Email: email, Account: uint64(a.ID), Area: uint32(area)}
	}
	ids := make([]uint32, len(areas))
	for j, a := range areas {
		ids[j] = uint32(a)
	}
	return http.StatusOK, map[string]any{"accounts": out, "areas": ids}, nil
}

// hostsStats: GET /v1/admin/hosts (admins): every registered host with
// its last heartbeat (Areas, active Areas, peers, RSS, worst tick p99).
func (d *Director) hostsStats(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	hosts := d.registry.Hosts()
	out := make([]apijson.HostStats, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, apijson.HostStats{ID: h.ID, Name: h.Name, PID: h.PID, WSURL: h.WSURL, Spawned: h.Spawned,
			Areas: h.Beat.Areas, Active: h.Beat.Active, Peers: h.Beat.Peers, RSSKiB: h.Beat.RSSKiB,
			TickP99us: h.Beat.TickP99, BeatAgeMS: h.BeatAge.Milliseconds()})
	}
	return http.StatusOK, map[string]any{"hosts": out}, nil
}

// liveAreas: GET /v1/admin/areas (admins): every live Area, its host,
// incarnation, and the accounts its host reports bound there.
func (d *Director) liveAreas(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	areas := d.registry.Areas()
	out := make([]apijson.LiveArea, 0, len(areas))
	for _, l := range areas {
		lo := apijson.LiveArea{Area: uint32(l.ID), Template: l.Template, Host: l.Host, Epoch: uint64(l.Epoch), Peers: l.Peers, Closing: l.Closing,
			Accounts: make([]uint64, 0, len(l.Accounts))} // [] rather than null when none
		for _, a := range l.Accounts {
			lo.Accounts = append(lo.Accounts, uint64(a))
		}
		out = append(out, lo)
	}
	return http.StatusOK, map[string]any{"areas": out}, nil
}
