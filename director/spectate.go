package director

import (
	"errors"
	"net/http"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/store"
)

// The console's Areas: an Area's detail and a spectator's grant, for
// admins only.

// maxAreaMembersListed bounds the members GET /v1/admin/areas/{id}
// names; maxAreaInvitesScanned the owner's invites it looks through.
const (
	maxAreaMembersListed  = 100
	maxAreaInvitesScanned = 500
)

// errSpectatorsFull: the Area, or its host, has its maximum of
// spectators (4 per Area, 16 per host).
var errSpectatorsFull = &apiError{Status: http.StatusServiceUnavailable, Code: "SPECTATORS_FULL",
	Message: "this area (or its host) has its maximum of spectators; try again when one has left", retry: 5 * time.Second}

// adminArea reads the {id} of an admin's Area route and the Area's record.
func (d *Director) adminArea(r *http.Request, acct store.Account) (store.Area, *apiError) {
	if !acct.Admin {
		return store.Area{}, errForbidden
	}
	id, e := pathArea(r)
	if e != nil {
		return store.Area{}, e
	}
	a, err := d.store.Area(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Area{}, errNoSuchArea
	} else if err != nil {
		return store.Area{}, storeErr(err)
	}
	return a, nil
}

// areaDetail: GET /v1/admin/areas/{id} (admins): the Area's record, its
// owner, its members (the first maxAreaMembersListed, with their
// accounts), the invites to it that can still be redeemed (invites are
// made by an Area's owner), and its live incarnation, if any.
func (d *Director) areaDetail(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	a, e := d.adminArea(r, acct)
	if e != nil {
		return 0, nil, e
	}
	ctx := r.Context()
	out := apijson.AreaDetail{Area: areaJSON(a), Created: a.Created.UTC(), Members: []apijson.AreaMember{}, Invites: []apijson.Invite{}}
	if !a.LastPlayed.IsZero() {
		lp := a.LastPlayed.UTC()
		out.LastPlayed = &lp
	}
	owner, err := d.store.Account(ctx, a.Owner)
	switch {
	case err == nil:
		oj := accountJSON(owner)
		out.OwnerAccount = &oj
	case !errors.Is(err, store.ErrNotFound):
		return 0, nil, storeErr(err)
	}
	ms, err := d.store.Members(ctx, a.ID)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out.MembersTotal = len(ms)
	if len(ms) > maxAreaMembersListed {
		ms, out.MembersMore = ms[:maxAreaMembersListed], true
	}
	for _, m := range ms {
		am := apijson.AreaMember{Account: apijson.Account{ID: uint64(m.Account)}, Role: string(m.Role), Added: m.Added.UTC()}
		if m.Account == owner.ID {
			am.Account = accountJSON(owner)
		} else if ma, err := d.store.Account(ctx, m.Account); err == nil {
			am.Account = accountJSON(ma)
		} else if !errors.Is(err, store.ErrNotFound) {
			return 0, nil, storeErr(err)
		}
		out.Members = append(out.Members, am)
	}
	invs, err := d.store.InvitesBy(ctx, a.Owner, time.Now(), maxAreaInvitesScanned)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	for _, inv := range invs {
		if inv.Area == a.ID {
			out.Invites = append(out.Invites, apijson.Invite{Code: inv.Code, Area: uint32(inv.Area), Expires: inv.Expires.UTC(), UsesLeft: inv.UsesLeft})
		}
	}
	for _, l := range d.registry.Areas() {
		if l.ID != a.ID {
			continue
		}
		lo := apijson.LiveArea{Area: uint32(l.ID), Template: l.Template, Host: l.Host, Epoch: uint64(l.Epoch), Peers: l.Peers, Closing: l.Closing,
			Accounts: make([]uint64, 0, len(l.Accounts))}
		for _, acc := range l.Accounts {
			lo.Accounts = append(lo.Accounts, uint64(acc))
		}
		out.Live = &lo
	}
	return http.StatusOK, out, nil
}

// spectate: POST /v1/admin/areas/{id}/spectate (admins): a spectator
// grant for the Area, answered as a join is ({grant, ws_url, join_id,
// area}): its hello watches the Area read-only, with no body
// (docs/protocol.md, "Spectators"). The Area is made live if it is not
// (it stays frozen with only spectators). Refusals: FORBIDDEN to a
// non-admin, NO_SUCH_AREA, SPECTATORS_FULL past the bounds, and a join's
// refusals of making the Area live (GRANT_FAILED, AT_CAPACITY,
// UNAVAILABLE).
func (d *Director) spectate(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	a, e := d.adminArea(r, acct)
	if e != nil {
		return 0, nil, e
	}
	l, err := d.registry.EnsureLive(r.Context(), a)
	if err != nil {
		return 0, nil, registryErr(err)
	}
	ans, err := d.registry.Spectate(r.Context(), l, acct.ID)
	switch {
	case errors.Is(err, registry.ErrSpectatorsFull):
		return 0, nil, withCause(errSpectatorsFull, err)
	case err != nil:
		return 0, nil, registryErr(err)
	}
	d.log.Info("an admin spectates an area", "admin", acct.ID, "area", a.ID)
	return http.StatusOK, ans, nil
}
