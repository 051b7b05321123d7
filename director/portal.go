package director

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/control/failpoint"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// Transfer timing, director side.
const (
	// transferMargin is how long before the source host's deadline the
	// director stops completing a crossing, so one the host gave up on is
	// never completed behind its back (clocks of one realm's machines are
	// assumed within this of each other).
	transferMargin = 2 * time.Second
	// cacheSize and cacheTTL bound the cache of answered crossings that
	// lets a resent portal_out be answered without the store.
	cacheSize = 500
	cacheTTL  = time.Hour
	// reconcileEvery is the reconciliation loop's period.
	reconcileEvery = 30 * time.Second
	// maxPortals bounds an Area's portals (its rules).
	maxPortals = 64
)

// Switches that remove a fence of the crossing protocol, for the transfer
// model test's mutation check only (director/model_test.go), which sets
// them before it starts any director: sourceEpochOff takes a portal_out
// from any host and incarnation of its source Area, not only the live
// incarnation the director placed (the source epoch check);
// accountLockOff lets a crossing run without its account's lock, so that
// it may interleave with a join of the same player. Both are false in
// every other use.
var sourceEpochOff, accountLockOff bool

// Rules is an Area's rules blob (stored opaque by the store): its portals.
type Rules struct {
	Portals []PortalRule `json:"portals,omitempty"`
}

// PortalRule is one portal: square (X, Y) leads to (ToX, ToY) of ToArea.
type PortalRule struct {
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	ToArea uint32 `json:"to_area"`
	ToX    int32  `json:"to_x"`
	ToY    int32  `json:"to_y"`
}

func parseRules(b []byte) (Rules, error) {
	var r Rules
	if len(b) == 0 {
		return r, nil
	}
	err := json.Unmarshal(b, &r)
	return r, err
}

// leadsTo reports whether one of the portals leads where m goes.
func (r Rules) leadsTo(m *control.PortalOut) bool {
	for _, p := range r.Portals {
		if p.ToArea == m.ToArea && p.ToX == m.ToX && p.ToY == m.ToY {
			return true
		}
	}
	return false
}

func (r Rules) controlPortals() []control.Portal {
	out := make([]control.Portal, len(r.Portals))
	for i, p := range r.Portals {
		out[i] = control.Portal{X: p.X, Y: p.Y, ToArea: p.ToArea, ToX: p.ToX, ToY: p.ToY}
	}
	return out
}

// setPortals: PUT /v1/areas/{id}/portals {portals: [...]} (the owner).
// They take effect when the Area next goes live.
func (d *Director) setPortals(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	var in Rules
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	role, err := d.store.MemberRole(r.Context(), id, acct.ID)
	if errors.Is(err, store.ErrNotMember) || (err == nil && role != store.RoleOwner) {
		return 0, nil, errForbidden
	} else if err != nil {
		return 0, nil, internalErr(err)
	}
	a, err := d.store.Area(r.Context(), id)
	if err != nil {
		return 0, nil, internalErr(err)
	}
	if len(in.Portals) > maxPortals {
		return 0, nil, errBadRequest(fmt.Sprintf("at most %d portals", maxPortals))
	}
	for _, p := range in.Portals {
		// Only to an Area the caller is a member of, and a missing Area is
		// refused alike: nothing is told of one it cannot see, not even
		// whether it exists or its size.
		if ok, err := d.store.IsMember(r.Context(), store.AreaID(p.ToArea), acct.ID); err != nil {
			return 0, nil, internalErr(err)
		} else if !ok {
			return 0, nil, errBadRequest("a portal leads to no such area, or to one you are not a member of")
		}
		to, err := d.store.Area(r.Context(), store.AreaID(p.ToArea))
		if err != nil {
			return 0, nil, internalErr(err)
		}
		if p.X < 0 || p.Y < 0 || int(p.X) >= a.W || int(p.Y) >= a.H || p.ToX < 0 || p.ToY < 0 || int(p.ToX) >= to.W || int(p.ToY) >= to.H {
			return 0, nil, errBadRequest("a portal square is off its area's grid")
		}
	}
	b, _ := json.Marshal(in)
	if err := d.store.SetAreaRules(r.Context(), id, b); err != nil {
		return 0, nil, internalErr(err)
	}
	return http.StatusOK, in, nil
}

// transferCache remembers answered crossings (bounded, expiring), so a
// resent portal_out is answered without touching the store.
type transferCache struct {
	mu    sync.Mutex
	m     map[string]cached
	order []string
}

type cached struct {
	res *control.PortalResult
	at  time.Time
}

func (c *transferCache) get(id string) *control.PortalResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || time.Since(e.at) > cacheTTL {
		return nil
	}
	return e.res
}

func (c *transferCache) put(id string, res *control.PortalResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cached{}
	}
	if _, ok := c.m[id]; !ok {
		c.order = append(c.order, id)
	}
	c.m[id] = cached{res: res, at: time.Now()}
	for len(c.order) > cacheSize {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// portalOut handles a crossing request from host h, once per transfer id
// at a time; the answer goes back to h (resends are answered the same).
//
// Only the source Area's host, for its current incarnation, may ask: any
// other sender is refused before the cache or the store is looked at (a
// replay's answer carries a grant into the destination), and answered
// AREA_CLOSING so an honest zombie restores its player.
func (d *Director) portalOut(ctx context.Context, h *host, m *control.PortalOut) {
	failpoint.Hit(failpoint.DirectorPortalIn)
	d.mu.Lock()
	_, reason := d.ownedLocked(h, m.Area, m.Epoch, true)
	d.mu.Unlock()
	if reason != "" && !sourceEpochOff {
		d.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "transfer", m.Transfer)
		_ = h.conn.Send(&control.PortalResult{Transfer: m.Transfer, Area: m.Area, Account: m.Account, ToArea: m.ToArea, Code: uint16(wire.CodeAreaClosing)})
		return
	}
	if res := d.transfers.get(m.Transfer); res != nil {
		if res.Area != m.Area || res.Account != m.Account {
			d.refuseHost(h, m.Type(), refuseTransfer, m.Area, "transfer", m.Transfer, "account", m.Account)
			return
		}
		_ = h.conn.Send(res)
		return
	}
	d.mu.Lock()
	if d.crossing[m.Transfer] {
		d.mu.Unlock()
		return // being answered; the answer goes to the same host
	}
	d.crossing[m.Transfer] = true
	d.mu.Unlock()
	go func() {
		defer func() {
			d.mu.Lock()
			delete(d.crossing, m.Transfer)
			d.mu.Unlock()
		}()
		res := d.cross(ctx, h, m)
		if res == nil {
			return // no answer: the host resends, and its timeout restores the player
		}
		if res.OK {
			d.counters.transfers.WithLabelValues("moved").Inc()
		} else {
			d.counters.transfers.WithLabelValues("refused").Inc()
		}
		d.transfers.put(m.Transfer, res)
		if err := h.conn.Send(res); err != nil {
			d.log.Warn("portal result not delivered", "transfer", m.Transfer, "err", err)
		}
	}()
}

// cross carries out one crossing: every failure branch answers with a
// reason, and the player stays in the source Area unless the answer is OK.
// A nil answer means "ask again" (a store failure).
func (d *Director) cross(ctx context.Context, h *host, m *control.PortalOut) *control.PortalResult {
	res := &control.PortalResult{Transfer: m.Transfer, Area: m.Area, Account: m.Account, ToArea: m.ToArea}
	reject := func(code wire.Code, why string) *control.PortalResult {
		res.Code = uint16(code)
		d.log.Info("portal crossing refused", "transfer", m.Transfer, "account", m.Account, "from", m.Area, "to", m.ToArea, "code", code, "why", why)
		return res
	}
	acctID, from, to := store.AccountID(m.Account), store.AreaID(m.Area), store.AreaID(m.ToArea)
	if !accountLockOff {
		defer d.accounts.lock(acctID)()
	}
	// A replay of a crossing the store already finished answers the same;
	// an id of another account's or Area's crossing is refused.
	if t, err := d.store.Transfer(ctx, store.TransferID(m.Transfer)); err == nil && (t.Account != acctID || t.From != from) {
		d.refuseHost(h, m.Type(), refuseTransfer, m.Area, "transfer", m.Transfer, "account", m.Account)
		return reject(wire.CodeNotAllowed, "the transfer id names another crossing")
	} else if err == nil && t.Status != store.TransferPending {
		if t.Status == store.TransferRejected {
			return reject(wire.CodeTimeout, "replay of a rejected transfer: "+string(t.Result))
		}
		return d.finish(ctx, res, acctID, to, m)
	}
	d.mu.Lock()
	l := d.areas[from]
	fromLive := (l != nil && l.host == h && uint64(l.epoch) == m.Epoch) || sourceEpochOff
	d.mu.Unlock()
	if !fromLive {
		return reject(wire.CodeAreaClosing, "the source is not this area's live incarnation")
	}
	src, err := d.store.Area(ctx, from)
	if err != nil {
		d.log.Error("portal: source area", "err", err)
		return nil
	}
	if !d.leadsTo(src, m) {
		return reject(wire.CodeNotAllowed, "no such portal in the source area")
	}
	member, err := d.store.IsMember(ctx, to, acctID)
	if err != nil {
		d.log.Error("portal: membership", "err", err)
		return nil
	}
	if !member {
		return reject(wire.CodeNotMember, "not a member of the destination")
	}
	if _, err := d.store.Area(ctx, to); err != nil {
		return reject(wire.CodeNotMember, "destination area unknown")
	}
	// B must be able to start, and the grant be registered there, before
	// the character moves: the move is the crossing's last step, its
	// commit, taken only within the window the source host still waits.
	// Whatever fails before it leaves the player in A (a grant left in B
	// unused simply expires).
	expires := time.UnixMilli(m.DeadlineMS).Add(-transferMargin)
	t := store.Transfer{ID: store.TransferID(m.Transfer), Account: acctID, From: from, To: to, X: m.ToX, Y: m.ToY, State: m.State,
		Created: time.Now(), Expires: expires}
	if _, err := d.store.BeginTransfer(ctx, t); err != nil {
		d.log.Error("portal: begin transfer", "transfer", m.Transfer, "err", err)
		return nil
	}
	ans, apiE := d.grantArrival(ctx, acctID, to, m.ToX, m.ToY)
	if apiE != nil {
		code := wire.CodeInternal
		if apiE == errAtCapacity {
			code = wire.CodeAreaFull
		}
		d.rejectPending(ctx, t.ID, store.TransferResult("grant_failed"))
		return reject(code, "destination cannot take the player: "+apiE.Message)
	}
	failpoint.Hit(failpoint.DirectorPortalGrant)
	if time.Now().After(expires) {
		d.rejectPending(ctx, t.ID, store.ResultTimeout)
		return reject(wire.CodeTimeout, "the crossing's window passed")
	}
	t.FromEpoch = store.Epoch(m.Epoch) // only while the asking incarnation of A is still A's
	t, err = d.store.MoveCharacter(ctx, t, time.Now())
	if err != nil {
		d.log.Error("portal: move character", "transfer", m.Transfer, "err", err)
		return nil
	}
	switch t.Result {
	case store.ResultMoved:
	case store.ResultTimeout:
		return reject(wire.CodeTimeout, "the crossing's window passed")
	case store.ResultStaleSource:
		return reject(wire.CodeAreaClosing, "the source area was restarted since the crossing began")
	default:
		return reject(wire.CodeInternal, "the character is not in the source area: "+string(t.Result))
	}
	// The move's transaction may have waited on a lock past the window: if
	// the source host could time out before this answer reaches it, move
	// the character back rather than contradict the portal_blocked it
	// would send.
	if late := time.UnixMilli(m.DeadlineMS).Add(-transferMargin / 2); time.Now().After(late) {
		undo := store.Transfer{ID: store.TransferID(m.Transfer + "-late"), Account: acctID, From: to, To: from, X: m.FromX, Y: m.FromY, State: m.State}
		if _, err := d.store.MoveCharacter(ctx, undo, time.Now()); err != nil {
			d.log.Error("portal: move back a late crossing", "transfer", m.Transfer, "err", err)
			return nil
		}
		return reject(wire.CodeTimeout, "the move committed too late for the source host")
	}
	failpoint.Hit(failpoint.DirectorPortalMoved)
	d.log.Info("player crossed a portal", "transfer", m.Transfer, "account", m.Account, "from", m.Area, "to", m.ToArea, "epoch", m.Epoch)
	res.OK, res.WSURL, res.Grant, res.JoinID = true, ans.WSURL, ans.Grant, ans.JoinID
	return res
}

// finish answers a replay of a crossing the store completed: a fresh
// grant in the destination, if the character is still there (it may have
// been moved back since, or crossed again): otherwise the replay is
// refused, and the source keeps the player it has.
func (d *Director) finish(ctx context.Context, res *control.PortalResult, acctID store.AccountID, to store.AreaID, m *control.PortalOut) *control.PortalResult {
	ch, err := d.store.Character(ctx, acctID)
	if err != nil {
		d.log.Error("portal: character", "err", err)
		return nil
	}
	if ch.Area != to {
		res.Code = uint16(wire.CodeTimeout)
		return res
	}
	ans, apiE := d.grantArrival(ctx, acctID, to, m.ToX, m.ToY)
	if apiE != nil {
		d.log.Warn("portal: no grant for a completed crossing; the player joins by the door", "transfer", m.Transfer, "err", apiE.Message)
		res.OK = true // the character is in the destination: never tell A otherwise
		return res
	}
	res.OK, res.WSURL, res.Grant, res.JoinID = true, ans.WSURL, ans.Grant, ans.JoinID
	return res
}

// grantArrival makes area to live and registers a portal arrival's grant
// there for the account, placing it on (x, y).
func (d *Director) grantArrival(ctx context.Context, acctID store.AccountID, to store.AreaID, x, y int32) (*JoinAnswer, *apiError) {
	acct, err := d.store.Account(ctx, acctID)
	if err != nil {
		return nil, internalErr(err)
	}
	dest, err := d.store.Area(ctx, to)
	if err != nil {
		return nil, internalErr(err)
	}
	l, apiE := d.ensureLive(ctx, dest)
	if apiE != nil {
		return nil, apiE
	}
	char := store.Character{Account: acctID, Area: to, X: x, Y: y, Placed: true}
	return d.grantAs(ctx, l, acct, char, true)
}

// rejectPending records a pending crossing as refused (best effort: the
// reconciliation loop expires it anyway).
func (d *Director) rejectPending(ctx context.Context, id store.TransferID, why store.TransferResult) {
	if _, err := d.store.RejectTransfer(ctx, id, why); err != nil {
		d.log.Warn("portal: reject transfer", "transfer", id, "err", err)
	}
}

// reconcile runs at start-up and every reconcileEvery: pending transfers
// past their expiry are rejected (the character stays where the store
// says), and finished transfer records older than the cache are pruned
// (never a pending one). A failed pass is a warning; the next one retries.
func (d *Director) reconcile(ctx context.Context) {
	pass := func() {
		now := time.Now()
		expired, err := d.store.ExpireTransfers(ctx, now)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("reconcile: expire transfers", "err", err)
			}
			return
		}
		for _, t := range expired {
			d.log.Info("reconcile: rolled back an expired transfer", "transfer", t.ID, "account", t.Account, "from", t.From, "to", t.To)
		}
		if n, err := d.store.PruneTransfers(ctx, now.Add(-cacheTTL)); err != nil {
			if ctx.Err() == nil {
				d.log.Warn("reconcile: prune transfers", "err", err)
			}
		} else if n > 0 {
			d.log.Info("reconcile: pruned transfer records", "n", n)
		}
	}
	pass()
	t := time.NewTicker(reconcileEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pass()
		}
	}
}
