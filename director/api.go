package director

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/store"
)

// handler is an API endpoint: it returns a value to encode as JSON (with
// status) or an apiError.
type handler func(w http.ResponseWriter, r *http.Request) (int, any, *apiError)

func (d *Director) serve(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		status, v, apiE := func() (status int, v any, apiE *apiError) {
			defer func() {
				if p := recover(); p != nil {
					apiE = internalErr(fmt.Errorf("panic: %v", p))
				}
			}()
			return h(w, r)
		}()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if apiE != nil {
			if apiE.cause != nil {
				e := *apiE
				e.ErrorID = randomHex(8)
				d.log.Error("api", "error_id", e.ErrorID, "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", apiE.cause)
				apiE = &e
			}
			if apiE.Status == http.StatusTooManyRequests || apiE.retry > 0 {
				w.Header().Set("Retry-After", retryAfter(apiE.retry))
			}
			w.WriteHeader(apiE.Status)
			_ = json.NewEncoder(w).Encode(apiE)
			return
		}
		if v == nil {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
}

type ctxKey struct{}

// authed requires a valid session and passes its account on.
func (d *Director) authed(h func(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError)) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		tok, ok := auth.ParseBearer(r.Header.Get("Authorization"))
		if !ok {
			return 0, nil, errUnauthorized
		}
		hash := store.HashToken(tok)
		if !d.apiLimiter.Allow(string(hash[:])) {
			return 0, nil, rateLimited(d.apiLimiter.Retry(string(hash[:])), "too many requests with this session; slow down")
		}
		account, err := d.sessions.touch(r.Context(), d.store, hash, time.Now())
		switch {
		case errors.Is(err, store.ErrExpired) || errors.Is(err, store.ErrRevoked):
			return 0, nil, errExpired
		case errors.Is(err, store.ErrNotFound):
			return 0, nil, errUnauthorized
		case err != nil:
			return 0, nil, storeErr(err)
		}
		acct, err := d.store.Account(r.Context(), account)
		if err != nil {
			return 0, nil, storeErr(err)
		}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, tok))
		return h(w, r, acct)
	}
}

// credentials is a sign-up's body; loginIn a login's.
type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name,omitempty"`
}

type loginIn struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// limitAddr takes one of the sign-up and login attempts of the client
// address whose key is addr, or refuses with 429 and when to retry.
func (d *Director) limitAddr(addr string) *apiError {
	if d.limiter.Allow(addr) {
		return nil
	}
	return rateLimited(d.limiter.Retry(addr), "too many attempts from your address; wait a little")
}

// signUp: POST /v1/accounts {email, password, name}. The new account
// becomes a member of every starter Area.
func (d *Director) signUp(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var c credentials
	if e := decode(r, &c); e != nil {
		return 0, nil, e
	}
	if e := d.limitAddr(d.clientKey(r)); e != nil {
		return 0, nil, e
	}
	email, err := auth.ParseEmail(c.Email)
	if err != nil {
		return 0, nil, errBadRequest(auth.Refusal(err))
	}
	if err := auth.CheckPassword(c.Password); err != nil {
		return 0, nil, errBadRequest(auth.Refusal(err))
	}
	if c.Name == "" {
		c.Name = "player-" + randomHex(3) // not the email's local part: others would read the address
	}
	name, err := auth.ParseName(c.Name)
	if err != nil {
		return 0, nil, errBadRequest(auth.Refusal(err))
	}
	phc, err := d.hasher.Hash(r.Context(), c.Password)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	acct, err := d.store.CreateAccount(r.Context(), store.NewAccount{Email: email, Name: name, PasswordPHC: phc, Created: time.Now()})
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return 0, nil, errEmailTaken
	case errors.Is(err, store.ErrNameTaken):
		return 0, nil, errNameTaken
	case err != nil:
		return 0, nil, storeErr(err)
	}
	if err := d.joinStarterAreas(r.Context(), acct.ID); err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusCreated, accountJSON(acct), nil
}

// login: POST /v1/session {email, password} -> {token, account, expires}.
// A new login revokes the account's older sessions (a takeover).
func (d *Director) login(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var c loginIn
	if e := decode(r, &c); e != nil {
		return 0, nil, e
	}
	if c.Email == "" || c.Password == "" {
		return 0, nil, errBadRequest("email and password are required")
	}
	addr := d.clientKey(r)
	if e := d.limitAddr(addr); e != nil {
		return 0, nil, e
	}
	// Failures delay the next try of this account from this address only:
	// a stranger elsewhere cannot hold its owner out.
	key := auth.LoginKey(addr, c.Email)
	if wait := d.logins.Wait(key); wait > 0 {
		return 0, nil, rateLimited(wait, "too many wrong passwords for this account from your address; wait before trying again")
	}
	acct, id, err := d.store.AccountByEmail(r.Context(), c.Email)
	if errors.Is(err, store.ErrNotFound) {
		d.hasher.VerifyUnknown(r.Context(), c.Password) // same cost as a wrong password
		d.logins.Fail(key)                              // and the same delays
		return 0, nil, errBadLogin
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	ok, rehash, err := d.hasher.Verify(r.Context(), id.PasswordPHC, c.Password)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	if !ok {
		d.logins.Fail(key)
		return 0, nil, errBadLogin
	}
	d.logins.Reset(key)
	if rehash {
		if phc, err := d.hasher.Hash(r.Context(), c.Password); err == nil {
			_ = d.store.UpdatePassword(r.Context(), acct.ID, phc)
		}
	}
	if _, err := d.store.RevokeAccountSessions(r.Context(), acct.ID); err != nil {
		return 0, nil, storeErr(err)
	}
	d.sessions.dropAccount(acct.ID)
	tok, hash := auth.NewToken()
	sess, err := d.store.CreateSession(r.Context(), store.TokenHash(hash), acct.ID, time.Now(), d.cfg.SessionIdle, d.cfg.SessionAbsolute)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, map[string]any{"token": tok, "account": accountJSON(acct), "expires": sess.Expires.UTC()}, nil
}

// logout: DELETE /v1/session. The session ends, and so does the
// account's play: a grant it took and has not used binds no more, and a
// session it plays (or may resume) in an Area ends (taken_over), its body
// leaving with its state stored, as a join elsewhere would have it.
func (d *Director) logout(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	tok := r.Context().Value(ctxKey{}).(string)
	if err := d.store.RevokeSession(r.Context(), store.HashToken(tok)); err != nil {
		return 0, nil, storeErr(err)
	}
	d.sessions.drop(store.HashToken(tok))
	unlock := d.transfers.Lock(acct.ID)
	defer unlock()
	if err := d.registry.EvictElsewhere(r.Context(), acct.ID, 0, 0); err != nil {
		// The session is over all the same; a grant left behind expires
		// unused (Config.GrantTTL).
		d.log.Warn("logout: the account's play did not end everywhere", "account", acct.ID, "err", err)
	}
	return http.StatusNoContent, nil, nil
}

// me: GET /v1/me: the account and where its character is (the Area a
// client should join to resume play).
func (d *Director) me(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	out := apijson.Me{Account: accountJSON(acct)}
	ch, err := d.store.Character(r.Context(), acct.ID)
	switch {
	case err == nil:
		out.Character = &apijson.Character{Area: uint32(ch.Area), Home: uint32(ch.Home), X: ch.X, Y: ch.Y, Placed: ch.Placed}
	case !errors.Is(err, store.ErrNotFound):
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, out, nil
}

func (d *Director) myAreas(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	areas, err := d.store.AreasOf(r.Context(), acct.ID)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := make([]apijson.Area, len(areas))
	for i, a := range areas {
		out[i] = areaJSON(a)
	}
	return http.StatusOK, map[string]any{"areas": out}, nil
}

// createArea: POST /v1/areas {name, kind, template, w, h}; the creator
// owns it. See newAreaShape for how kind, template and size go together
// (a home of the default template when none is named).
func (d *Director) createArea(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	var in apijson.NewArea
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	shape, e := d.newAreaShape(in.Kind, in.Template, in.W, in.H, "home")
	if e != nil {
		return 0, nil, e
	}
	name, err := auth.ParseName(in.Name)
	if err != nil {
		return 0, nil, errBadRequest(auth.Refusal(err))
	}
	defer d.quotas.creating.Lock(acct.ID)()
	if e := d.ownedAreas(r.Context(), acct, shape.w, shape.h); e != nil {
		return 0, nil, e
	}
	a, err := d.store.CreateArea(r.Context(), store.NewArea{Owner: acct.ID, Kind: shape.kind, Template: shape.template, Name: name,
		W: shape.w, H: shape.h, Seed: uint64(time.Now().UnixNano()), Created: time.Now()})
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusCreated, areaJSON(a), nil
}

func (d *Director) members(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	role, err := d.store.MemberRole(r.Context(), id, acct.ID)
	switch {
	case errors.Is(err, store.ErrNotMember) && acct.Admin:
		role, err = "", nil // an admin sees any Area's members
	case errors.Is(err, store.ErrNotMember):
		return 0, nil, errNotMember
	case err != nil:
		return 0, nil, storeErr(err)
	}
	var ms []store.Member
	if role != "" {
		ms = []store.Member{{Account: acct.ID, Name: acct.Name, Role: role}}
	}
	if role == store.RoleOwner || acct.Admin {
		// Only the Area's owner and the realm's admins see who else is in
		// it: a member learns its own row, not every account id.
		if ms, err = d.store.Members(r.Context(), id); err != nil {
			return 0, nil, storeErr(err)
		}
	}
	out := make([]apijson.Member, len(ms))
	for i, m := range ms {
		out[i] = apijson.Member{Account: uint64(m.Account), Name: m.Name, Role: string(m.Role)}
	}
	return http.StatusOK, map[string]any{"members": out}, nil
}

// setRole: PUT /v1/areas/{id}/members/{account} {role}; the Area's owner
// names a member a builder ("builder": it may place, take back, gather and
// use containers where the Area's rules build by builders, as in a home)
// or takes that back ("member"). It takes effect at the member's next
// arrival in the Area (a join or a portal): its grant carries it.
func (d *Director) setRole(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	target, e := pathAccount(r)
	if e != nil {
		return 0, nil, e
	}
	role, e := decodeRole(r)
	if e != nil {
		return 0, nil, e
	}
	mine, err := d.store.MemberRole(r.Context(), id, acct.ID)
	if errors.Is(err, store.ErrNotMember) || (err == nil && mine != store.RoleOwner) {
		return 0, nil, errForbidden
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	was, err := d.store.MemberRole(r.Context(), id, target)
	switch {
	case errors.Is(err, store.ErrNotMember):
		return 0, nil, errNotAMember
	case err != nil:
		return 0, nil, storeErr(err)
	case was == store.RoleOwner:
		return 0, nil, errOwnerStays
	}
	if err := d.store.SetMemberRole(r.Context(), id, target, role); errors.Is(err, store.ErrNotMember) {
		return 0, nil, errNotAMember
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	who, err := d.store.Account(r.Context(), target)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, apijson.Member{Account: uint64(target), Name: who.Name, Role: string(role)}, nil
}

type inviteIn struct {
	Uses       int `json:"uses"`
	TTLSeconds int `json:"ttl_seconds"`
}

// createInvite: POST /v1/areas/{id}/invites {uses, ttl_seconds}; owner only.
func (d *Director) createInvite(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	var in inviteIn
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	if in.Uses == 0 {
		in.Uses = 1
	}
	if in.TTLSeconds == 0 {
		in.TTLSeconds = 7 * 24 * 3600
	}
	if in.Uses < 1 || in.Uses > 10000 || in.TTLSeconds < 60 || in.TTLSeconds > 90*24*3600 {
		return 0, nil, errBadRequest("uses 1..10000, ttl_seconds 60..7776000")
	}
	role, err := d.store.MemberRole(r.Context(), id, acct.ID)
	if errors.Is(err, store.ErrNotMember) || (err == nil && role != store.RoleOwner) {
		return 0, nil, errForbidden
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	defer d.quotas.creating.Lock(acct.ID)()
	if e := d.liveInvites(r.Context(), acct); e != nil {
		return 0, nil, e
	}
	now := time.Now()
	code := randomHex(8)
	if err := d.store.CreateInvite(r.Context(), store.Invite{Code: code, Area: id, CreatedBy: acct.ID, UsesLeft: in.Uses, Expires: now.Add(time.Duration(in.TTLSeconds) * time.Second), Created: now}); err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusCreated, map[string]any{"code": code, "area": uint32(id), "uses": in.Uses}, nil
}

// redeem: POST /v1/invites/{code}/redeem -> {area}.
func (d *Director) redeem(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, err := d.store.RedeemInvite(r.Context(), r.PathValue("code"), acct.ID, time.Now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, nil, apiErr(404, "NO_SUCH_INVITE", "no such invite code")
	case errors.Is(err, store.ErrExpired):
		return 0, nil, apiErr(410, "INVITE_EXPIRED", "the invite code expired")
	case errors.Is(err, store.ErrUsedUp):
		return 0, nil, apiErr(410, "INVITE_USED_UP", "the invite code has no uses left")
	case err != nil:
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, map[string]any{"area": uint32(id)}, nil
}

// joinArea: POST /v1/areas/{id}/join -> {grant, ws_url, join_id, area}.
func (d *Director) joinArea(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	var ans *JoinAnswer
	if e = d.joinRate(acct); e == nil {
		ans, e = d.join(r.Context(), acct, id)
	}
	if e != nil {
		d.counters.refusals.WithLabelValues(e.Code).Inc()
		return 0, nil, e
	}
	return http.StatusOK, ans, nil
}

// readyz: GET /readyz, public (load balancers and probes): 200
// {"ready": true, "role": "leader", "hosts": n, "term": t} while the
// director leads, serves and can start Areas, and 200 {"ready": true,
// "role": "follower", "term": t, "hosts": 0} while it
// follows a leader it forwards to; 503 {"ready": false, "reason": ...}
// while it waits to lead with no other leader known, is not serving,
// cannot reach the store (play goes on; joins are refused UNAVAILABLE),
// or while no host is registered and the hosts it spawned exit before they
// register (the reason is the last one's own words, e.g. an address
// already in use). With hosts registered, a failing extra host shows as
// host_start_failure and the director stays ready.
func (d *Director) readyz(w http.ResponseWriter, _ *http.Request) {
	status, out := http.StatusOK, map[string]any{"ready": true}
	hosts, f := len(d.registry.Hosts()), d.registry.Failure()
	ld := d.otherLeader()
	switch {
	case !d.leading.Load() && ld != nil:
		// A follower serves by forwarding to the leader.
		// The leader's address is internal: not for a public probe.
		out["role"], out["term"], hosts = "follower", ld.Term, 0
	case !d.leading.Load():
		status, out = http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": "waiting for the leadership, and no other director leads"}
	case !d.ready.Load():
		status, out = http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": "the director is not serving"}
	case d.registry.StoreInDoubt():
		status, out = http.StatusServiceUnavailable, map[string]any{"ready": false,
			"reason": "the store is unavailable: play goes on in the live areas, their snapshots wait in memory; joins and crossings are refused UNAVAILABLE until it is back"}
	case f != nil && hosts == 0:
		status, out = http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": "area hosts cannot start: " + f.Reason,
			"failed_starts": f.Count, "last_failure": f.At.UTC().Format(time.RFC3339)}
	case f != nil:
		out["host_start_failure"] = f.Reason
	}
	if status == http.StatusOK {
		out["hosts"] = hosts
		if out["role"] == nil {
			out["role"], out["term"] = "leader", d.term
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

// info: GET /director/info, public: the realm door as a player sees it.
func (d *Director) info(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	s, err := d.realmSettings(r.Context())
	if err != nil {
		return 0, nil, storeErr(err)
	}
	areas := d.registry.Areas()
	players := map[store.AccountID]bool{}
	for _, l := range areas {
		for _, a := range l.Accounts {
			players[a] = true
		}
	}
	live, hosts := len(areas), len(d.registry.Hosts())
	out := map[string]any{
		"open": s.Open, "cap": s.Cap, "players": len(players), "new_players_welcome": s.NewPlayersWelcome,
		"message": s.Message, "live_areas": live, "hosts": hosts,
		"knobs": map[string]any{
			"tick_rate": d.cfg.Spawn.TickRate, "interest_radius": d.cfg.Spawn.InterestRadius, "cell_size": d.cfg.Spawn.CellSize,
			"pool_size": d.cfg.Spawn.Pool(), "process_rail": d.cfg.Spawn.MaxHosts, "persist_every": d.cfg.Spawn.PersistEvery.String(),
			"snapshot_rate_hz": d.cfg.Spawn.TickRate / max(d.cfg.Spawn.SnapshotEvery, 1), "max_live_areas": d.cfg.Spawn.Pool() * d.cfg.Spawn.MaxHosts,
			"resume_grace_ms": d.cfg.Spawn.ResumeGrace.Milliseconds(),
		},
	}
	if demo, ok := d.demoLogin(); ok {
		out["demo"] = demo
	}
	return http.StatusOK, out, nil
}
