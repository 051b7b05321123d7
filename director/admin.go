package director

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/store"
)

// An admin's acts on accounts and memberships (the console's Accounts):
// each is recorded in the audit log in the same transaction as the act.

// maxFoundAccounts bounds a page of GET /v1/admin/accounts.
const maxFoundAccounts = 100

var (
	errNoSuchAccount = apiErr(404, "NO_SUCH_ACCOUNT", "no such account")
	errOwnerStays    = apiErr(409, "OWNER_STAYS", "the owner's membership is the Area's own: it cannot be changed or taken")
	errNotAMember    = apiErr(404, "NO_SUCH_MEMBER", "the account is not a member of this area")
)

// findAccounts: GET /v1/admin/accounts?q=<text>&limit=<n> (admins): the
// accounts whose email or name holds q (every account without q), newest
// first, at most limit (default 20), with where each character is and
// the Area it is bound in now; more says others match past them.
func (d *Director) findAccounts(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxFoundAccounts {
			return 0, nil, errBadRequest(fmt.Sprintf("limit must be 1..%d", maxFoundAccounts))
		}
		limit = n
	}
	text := q.Get("q")
	if len(text) > 256 {
		return 0, nil, errBadRequest("q must be at most 256 bytes")
	}
	found, err := d.store.FindAccounts(r.Context(), text, limit+1)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	more := len(found) > limit
	if more {
		found = found[:limit]
	}
	bound := map[store.AccountID]store.AreaID{}
	for _, l := range d.registry.Areas() {
		for _, a := range l.Accounts {
			bound[a] = l.ID
		}
	}
	out := make([]apijson.FoundAccount, len(found))
	for i, a := range found {
		out[i] = apijson.FoundAccount{Account: accountJSON(a), BoundIn: uint32(bound[a.ID])}
		ch, err := d.store.Character(r.Context(), a.ID)
		switch {
		case err == nil:
			out[i].Character = &apijson.Character{Area: uint32(ch.Area), Home: uint32(ch.Home), X: ch.X, Y: ch.Y, Placed: ch.Placed}
		case !errors.Is(err, store.ErrNotFound):
			return 0, nil, storeErr(err)
		}
	}
	return http.StatusOK, map[string]any{"accounts": out, "more": more}, nil
}

// endSessions: POST /v1/admin/accounts/{account}/logout (admins): every
// session of the account ends, and its play with it, as its own log out
// would (a body bound or away leaves, a grant it holds binds no more).
func (d *Director) endSessions(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	id, e := pathAccount(r)
	if e != nil {
		return 0, nil, e
	}
	target, err := d.store.Account(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, errNoSuchAccount
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	ch := store.Change{At: time.Now(), Actor: acct.ID, Action: "account.logout", Target: accountWords(target),
		Detail: "its sessions ended, and its play"}
	n, err := d.store.EndAccountSessions(r.Context(), id, ch)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, errNoSuchAccount
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	d.sessions.dropAccount(id)
	unlock := d.transfers.Lock(id)
	defer unlock()
	if err := d.registry.EvictElsewhere(r.Context(), id, 0, 0); err != nil {
		// The sessions are over all the same; a grant left behind expires
		// unused (Config.GrantTTL).
		d.log.Warn("admin logout: the account's play did not end everywhere", "account", id, "err", err)
	}
	d.log.Info("an admin ended an account's sessions", "admin", acct.ID, "account", id, "sessions", n)
	return http.StatusOK, map[string]any{"sessions": n}, nil
}

// giveMembership: PUT /v1/admin/areas/{id}/members/{account} {role}
// (admins): the account becomes a member ("member") or a builder
// ("builder") of the Area, or changes between the two.
func (d *Director) giveMembership(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	area, target, e := d.membershipTarget(r)
	if e != nil {
		return 0, nil, e
	}
	role, e := decodeRole(r)
	if e != nil {
		return 0, nil, e
	}
	was := "none"
	if r, err := d.store.MemberRole(r.Context(), area.ID, target.ID); err == nil {
		was = string(r)
	}
	ch := store.Change{At: time.Now(), Actor: acct.ID, Action: "member.give", Target: areaWords(area),
		Detail: fmt.Sprintf("%s: %s -> %s", accountWords(target), was, role)}
	if err := d.store.GiveMembership(r.Context(), area.ID, target.ID, role, ch); err != nil {
		return 0, nil, membershipErr(err)
	}
	return http.StatusNoContent, nil, nil
}

// takeMembership: DELETE /v1/admin/areas/{id}/members/{account}
// (admins): the account is no longer a member of the Area; a body of it
// there leaves now (its session taken over, its state saved), and its
// next join of the Area is refused.
//
// The body leaves first, under the account's lock, and the membership
// goes after, under the same lock: no join can come between (a join
// takes the lock, and then reads the membership gone), and a body that
// cannot leave now (it is crossing a portal, or its host is out of touch)
// refuses the whole act, BODY_BUSY with when to ask again, with
// nothing changed: a membership taken while its body stayed would leave
// a non-member playing in the Area (a crossing refused brings the body
// back).
func (d *Director) takeMembership(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	area, target, e := d.membershipTarget(r)
	if e != nil {
		return 0, nil, e
	}
	unlock := d.transfers.Lock(target.ID)
	defer unlock()
	was, err := d.store.MemberRole(r.Context(), area.ID, target.ID)
	switch {
	case err != nil:
		return 0, nil, membershipErr(err)
	case was == store.RoleOwner:
		return 0, nil, errOwnerStays
	}
	if err := d.registry.EvictFrom(r.Context(), target.ID, area.ID); err != nil {
		return 0, nil, bodyBusy(err)
	}
	ch := store.Change{At: time.Now(), Actor: acct.ID, Action: "member.take", Target: areaWords(area),
		Detail: accountWords(target) + ": no longer a member"}
	if err := d.store.TakeMembership(r.Context(), area.ID, target.ID, ch); err != nil {
		return 0, nil, membershipErr(err)
	}
	return http.StatusNoContent, nil, nil
}

// membershipTarget reads the Area and the account a membership route
// names.
func (d *Director) membershipTarget(r *http.Request) (store.Area, store.Account, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return store.Area{}, store.Account{}, e
	}
	acctID, e := pathAccount(r)
	if e != nil {
		return store.Area{}, store.Account{}, e
	}
	area, err := d.store.Area(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Area{}, store.Account{}, apiErr(404, "NO_SUCH_AREA", "no such area")
	} else if err != nil {
		return store.Area{}, store.Account{}, storeErr(err)
	}
	target, err := d.store.Account(r.Context(), acctID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Area{}, store.Account{}, errNoSuchAccount
	} else if err != nil {
		return store.Area{}, store.Account{}, storeErr(err)
	}
	return area, target, nil
}

// bodyBusy answers an act on an account whose body could not leave its
// Area (crossing a portal, its host out of touch, its last state not
// saved yet): nothing changed, ask again after Retry-After.
func bodyBusy(err error) *apiError {
	if errors.Is(err, store.ErrUnavailable) {
		return withCause(errUnavailable, err)
	}
	e := &apiError{Status: http.StatusConflict, Code: "BODY_BUSY",
		Message: "the account's body cannot leave the area right now (it is crossing a portal, or its area's host is out of touch); try again in a moment",
		retry:   time.Second}
	var re *registry.RetryError
	if errors.As(err, &re) {
		e.retry = max(re.Retry, time.Second)
	}
	return withCause(e, err)
}

func membershipErr(err error) *apiError {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return errOwnerStays
	case errors.Is(err, store.ErrNotMember):
		return errNotAMember
	case errors.Is(err, store.ErrNotFound):
		return errNoSuchAccount
	}
	return storeErr(err)
}

// accountWords and areaWords name an account and an Area in the audit
// log: id and name.
func accountWords(a store.Account) string {
	return fmt.Sprintf("account %d (%s)", a.ID, cut(a.Name, 48))
}

func areaWords(a store.Area) string { return fmt.Sprintf("area %d (%s)", a.ID, cut(a.Name, 48)) }

// decodeRole reads a membership's role from r's body: a member or a
// builder (an owner's role is its Area's own).
func decodeRole(r *http.Request) (store.Role, *apiError) {
	var in apijson.Membership
	if e := decode(r, &in); e != nil {
		return "", e
	}
	role := store.Role(in.Role)
	if role != store.RoleMember && role != store.RoleBuilder {
		return "", errBadRequest(`role must be "member" or "builder"`)
	}
	return role, nil
}
