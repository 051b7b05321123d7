package transfer

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// Timing of crossings, director side.
const (
	// Margin is how long before the source host's deadline the director
	// stops completing a crossing, so one the host gave up on is never
	// completed behind its back (clocks of one realm's machines are
	// assumed within this of each other).
	Margin = 2 * time.Second
	// cacheSize and cacheTTL bound the cache of answered crossings that
	// lets a resent portal_out be answered without the store.
	cacheSize = 500
	cacheTTL  = time.Hour
	// ReconcileEvery is the reconciliation loop's period.
	ReconcileEvery = 30 * time.Second
)

// Store is what the transfers need of the director's store: the crossing
// records and the one-transaction move, and what a crossing checks.
type Store interface {
	BeginTransfer(ctx context.Context, t store.Transfer) (store.Transfer, error)
	MoveCharacter(ctx context.Context, t store.Transfer, now time.Time) (store.Transfer, error)
	RejectTransfer(ctx context.Context, id store.TransferID, result store.TransferResult) (store.Transfer, error)
	ExpireTransfers(ctx context.Context, now time.Time) ([]store.Transfer, error)
	PruneTransfers(ctx context.Context, olderThan time.Time) (int, error)
	Character(ctx context.Context, account store.AccountID) (store.Character, error)
	MemberArea(ctx context.Context, area store.AreaID, account store.AccountID) (store.Area, store.Account, error)
}

// Transfers moves characters between Areas: portal crossings (a host's
// portal_out, answered portal_result) and moves by the door (a join to
// another Area), one account at a time (Lock), and rolls back crossings
// left pending (Reconcile).
//
// A crossing's answer is idempotent on its transfer id: a replay is
// answered what was decided (from a cache, or the store). Every failure
// answers with a wire code, and the character stays where it was unless
// the answer is OK; the move is the crossing's last step, one transaction,
// taken only within the window the source host still waits, only while
// the asking incarnation is the source's current one, and only once the
// store holds the source's snapshot with the character's state at the
// portal.
//
// Safe for concurrent use.
type Transfers struct {
	log   *slog.Logger
	store Store
	reg   *registry.Registry
	cache cache

	mu       sync.Mutex // guards crossing
	crossing map[string]bool

	results *prometheus.CounterVec // result: moved, refused
}

// New returns the Transfers of reg on st; results, if not nil, counts
// crossings answered by result.
func New(st Store, reg *registry.Registry, log *slog.Logger, registerer prometheus.Registerer) *Transfers {
	t := &Transfers{log: log, store: st, reg: reg, crossing: map[string]bool{},
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_transfers_total", Help: "Portal crossings answered, by result."}, []string{"result"})}
	if registerer != nil {
		registerer.MustRegister(t.results)
	}
	return t
}

// Lock takes acct's lock and returns its release: joins and crossings of
// one account never interleave, so a join's grant always reflects where
// the character is.
func (t *Transfers) Lock(acct store.AccountID) func() { return t.reg.LockAccount(acct) }

// PortalOut handles a crossing request from host h (the registry's
// OnPortalOut hook), once per transfer id at a time, in the background;
// the answer goes back to h (resends are answered the same).
//
// Only the source Area's host, for its current incarnation, may ask: any
// other sender is refused before the cache or the store is looked at (a
// replay's answer carries a grant into the destination), and answered
// AREA_CLOSING so an honest zombie restores its player.
func (t *Transfers) PortalOut(ctx context.Context, h *registry.Host, m *control.PortalOut) {
	failpoint.Hit(failpoint.DirectorPortalIn)
	if _, reason := t.reg.Owned(h, m.Area, m.Epoch, true); reason != "" && !sourceEpochOff() {
		t.reg.Refuse(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "transfer", m.Transfer)
		t.reg.SendSoon(h, &control.PortalResult{Transfer: m.Transfer, Area: m.Area, Account: m.Account, ToArea: m.ToArea, Code: uint16(wire.CodeAreaClosing)})
		return
	}
	if res := t.cache.get(m.Transfer); res != nil {
		if res.Area != m.Area || res.Account != m.Account {
			t.reg.Refuse(h, m.Type(), registry.RefuseTransfer, m.Area, "transfer", m.Transfer, "account", m.Account)
			return
		}
		t.reg.SendSoon(h, res)
		return
	}
	t.mu.Lock()
	if t.crossing[m.Transfer] {
		t.mu.Unlock()
		return // being answered; the answer goes to the same host
	}
	t.crossing[m.Transfer] = true
	t.mu.Unlock()
	go func() {
		defer func() {
			t.mu.Lock()
			delete(t.crossing, m.Transfer)
			t.mu.Unlock()
		}()
		res := t.cross(ctx, h, m)
		if res == nil {
			return // no answer: the host resends, and its timeout restores the player
		}
		if res.OK {
			t.results.WithLabelValues("moved").Inc()
		} else {
			t.results.WithLabelValues("refused").Inc()
		}
		t.cache.put(m.Transfer, res)
		if err := h.Send(res); err != nil {
			t.log.Warn("portal result not delivered", "transfer", m.Transfer, "err", err)
		}
	}()
}

// cross carries out one crossing: every failure branch answers with a
// reason, and the player stays in the source Area unless the answer is OK.
// A nil answer means "ask again": a store failure after which the move may
// have committed (the replay finds out).
//
// With the destination live, it costs three store round trips: the
// transfer's record (a replay finds the recorded one), the destination's
// membership and record, and the move.
func (t *Transfers) cross(ctx context.Context, h *registry.Host, m *control.PortalOut) *control.PortalResult {
	res := &control.PortalResult{Transfer: m.Transfer, Area: m.Area, Account: m.Account, ToArea: m.ToArea}
	reject := func(code wire.Code, why string) *control.PortalResult {
		res.Code = uint16(code)
		t.log.Info("portal crossing refused", "transfer", m.Transfer, "account", m.Account, "from", m.Area, "to", m.ToArea, "code", code, "why", why)
		return res
	}
	acctID, from, to := store.AccountID(m.Account), store.AreaID(m.Area), store.AreaID(m.ToArea)
	if !accountLockOff() {
		defer t.Lock(acctID)()
	}
	l, reason := t.reg.Owned(h, m.Area, m.Epoch, true)
	if reason != "" && !sourceEpochOff() {
		return reject(wire.CodeAreaClosing, "the source is not this area's live incarnation")
	}
	if l != nil && !leadsTo(l.Portals(), m) {
		return reject(wire.CodeNotAllowed, "no such portal in the source area")
	}
	// The record first: a replay of a crossing the store already finished
	// answers the same; an id of another account's or Area's crossing is
	// refused.
	expires := time.UnixMilli(m.DeadlineMS).Add(-Margin)
	tr := store.Transfer{ID: store.TransferID(m.Transfer), Account: acctID, From: from, To: to, X: m.ToX, Y: m.ToY, State: m.State,
		Created: time.Now(), Expires: expires}
	rec, err := t.store.BeginTransfer(ctx, tr)
	switch {
	case errors.Is(err, store.ErrConflict):
		t.reg.Refuse(h, m.Type(), registry.RefuseTransfer, m.Area, "transfer", m.Transfer, "account", m.Account)
		return reject(wire.CodeNotAllowed, "the transfer id names another crossing")
	case errors.Is(err, store.ErrUnavailable):
		return reject(wire.CodeUnavailable, "the store is unavailable: nothing was written") // nothing could have committed
	case err != nil:
		t.log.Error("portal: begin transfer", "transfer", m.Transfer, "err", err)
		return nil
	}
	switch rec.Status {
	case store.TransferRejected:
		return reject(wire.CodeTimeout, "replay of a rejected transfer: "+string(rec.Result))
	case store.TransferDone:
		return t.finish(ctx, res, acctID, to, m)
	}
	dest, acct, err := t.store.MemberArea(ctx, to, acctID)
	switch {
	case errors.Is(err, store.ErrNotMember):
		t.rejectPending(ctx, tr.ID, "not_member")
		return reject(wire.CodeNotMember, "not a member of the destination")
	case err != nil:
		t.log.Warn("portal: destination", "transfer", m.Transfer, "err", err)
		t.rejectPending(ctx, tr.ID, "store_unavailable")
		return reject(wire.CodeUnavailable, "the destination could not be read") // nothing moved: the transfer stays pending or refused
	}
	// B must be able to start, and the grant be registered there, before
	// the character moves: the move is the crossing's commit. Whatever
	// fails before it leaves the player in A (a grant left in B unused
	// simply expires).
	ans, code, err := t.arrive(ctx, dest, acct, m.ToX, m.ToY, m.State)
	if err != nil {
		t.rejectPending(ctx, tr.ID, "grant_failed")
		return reject(code, "the destination cannot take the player: "+err.Error())
	}
	failpoint.Hit(failpoint.DirectorPortalGrant)
	if time.Now().After(expires) {
		t.rejectPending(ctx, tr.ID, store.ResultTimeout)
		return reject(wire.CodeTimeout, "the crossing's window passed")
	}
	if m.Seq > 0 && !fromSeqOff() && t.reg.Flush(ctx, from) < store.Seq(m.Seq) {
		// The snapshot holding the character's state at the portal is not
		// stored (the store refused or failed it): the move would take the
		// character on with a state its Area's blob does not agree with.
		t.rejectPending(ctx, tr.ID, store.ResultUnsaved)
		return reject(wire.CodeUnavailable, "the source's snapshot at the portal is not stored")
	}
	tr.FromEpoch = store.Epoch(m.Epoch) // only while the asking incarnation of A is still A's
	tr.FromSeq = store.Seq(m.Seq)
	tr.Placed = true
	rec, err = t.store.MoveCharacter(ctx, tr, time.Now())
	if err != nil {
		t.log.Error("portal: move character", "transfer", m.Transfer, "err", err)
		return nil // it may have committed: the replay finds out
	}
	switch rec.Result {
	case store.ResultMoved:
	case store.ResultTimeout:
		return reject(wire.CodeTimeout, "the crossing's window passed")
	case store.ResultStaleSource:
		return reject(wire.CodeAreaClosing, "the source area was restarted since the crossing began")
	case store.ResultUnsaved:
		return reject(wire.CodeUnavailable, "the source's snapshot at the portal is not stored")
	default:
		return reject(wire.CodeInternal, "the character is not in the source area: "+string(rec.Result))
	}
	// The move's transaction may have waited on a lock past the window: if
	// the source host could time out before this answer reaches it, move
	// the character back rather than contradict the portal_blocked it
	// would send.
	if late := time.UnixMilli(m.DeadlineMS).Add(-Margin / 2); time.Now().After(late) {
		undo := store.Transfer{ID: store.TransferID(m.Transfer + "-late"), Account: acctID, From: to, To: from, X: m.FromX, Y: m.FromY, Placed: true}
		if _, err := t.store.MoveCharacter(ctx, undo, time.Now()); err != nil {
			t.log.Error("portal: move back a late crossing", "transfer", m.Transfer, "err", err)
			return nil
		}
		return reject(wire.CodeTimeout, "the move committed too late for the source host")
	}
	failpoint.Hit(failpoint.DirectorPortalMoved)
	t.log.Info("player crossed a portal", "transfer", m.Transfer, "account", m.Account, "from", m.Area, "to", m.ToArea, "epoch", m.Epoch)
	res.OK, res.WSURL, res.Grant, res.JoinID = true, ans.WSURL, ans.Grant, ans.JoinID
	return res
}

// finish answers a replay of a crossing the store completed: a fresh
// grant in the destination, if the character is still there (it may have
// been moved back since, or crossed again): otherwise the replay is
// refused, and the source keeps the player it has.
func (t *Transfers) finish(ctx context.Context, res *control.PortalResult, acctID store.AccountID, to store.AreaID, m *control.PortalOut) *control.PortalResult {
	ch, err := t.store.Character(ctx, acctID)
	if err != nil {
		t.log.Error("portal: character", "err", err)
		return nil
	}
	if ch.Area != to {
		res.Code = uint16(wire.CodeTimeout)
		return res
	}
	res.OK = true // the character is in the destination: never tell A otherwise
	dest, acct, err := t.store.MemberArea(ctx, to, acctID)
	if err != nil {
		t.log.Warn("portal: no grant for a completed crossing; the player joins by the door", "transfer", m.Transfer, "err", err)
		return res
	}
	ans, _, err := t.arrive(ctx, dest, acct, m.ToX, m.ToY, ch.State)
	if err != nil {
		t.log.Warn("portal: no grant for a completed crossing; the player joins by the door", "transfer", m.Transfer, "err", err)
		return res
	}
	res.WSURL, res.Grant, res.JoinID = ans.WSURL, ans.Grant, ans.JoinID
	return res
}

// arrive makes dest live and registers a portal arrival's grant there for
// acct, placing it on (x, y) with the character's state (what it
// carries: the state of the source's snapshot at the portal, which the
// move waits for); a failure says which wire code refuses the crossing.
func (t *Transfers) arrive(ctx context.Context, dest store.Area, acct store.Account, x, y int32, state []byte) (registry.Answer, wire.Code, error) {
	l, err := t.reg.EnsureLive(ctx, dest)
	if err != nil {
		return registry.Answer{}, codeOf(err), err
	}
	char := store.Character{Account: acct.ID, Area: dest.ID, X: x, Y: y, State: state, Placed: true}
	ans, err := t.reg.Grant(ctx, l, acct.ID, acct.Name, char, registry.Arrival{Builder: acct.Role == store.RoleOwner || acct.Role == store.RoleBuilder, Portal: true})
	if err != nil {
		return registry.Answer{}, codeOf(err), err
	}
	return ans, wire.CodeOK, nil
}

// codeOf is the wire code that refuses a crossing for a registry error.
func codeOf(err error) wire.Code {
	switch {
	case errors.Is(err, registry.ErrAtCapacity):
		return wire.CodeAreaFull
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, registry.ErrHostLost):
		return wire.CodeUnavailable
	}
	return wire.CodeInternal
}

// leadsTo reports whether one of the portals an incarnation was spawned
// with (an owner's or its map's) leads where m goes.
func leadsTo(ps []control.Portal, m *control.PortalOut) bool {
	for _, p := range ps {
		if p.ToArea == m.ToArea && p.ToX == m.ToX && p.ToY == m.ToY {
			return true
		}
	}
	return false
}

// rejectPending records a pending crossing as refused (best effort: the
// reconciliation loop expires it anyway).
func (t *Transfers) rejectPending(ctx context.Context, id store.TransferID, why store.TransferResult) {
	if _, err := t.store.RejectTransfer(ctx, id, why); err != nil {
		t.log.Warn("portal: reject transfer", "transfer", id, "err", err)
	}
}

// MoveByDoor moves acct's character from from (where the store has it)
// to to, unplaced (the Area puts it where newcomers go), once from's
// snapshot fromSeq, which holds its final state there, is stored (0: no
// snapshot to wait for). fence, when not nil, is from's incarnation as
// the store has it, from running on no host the director has: the move
// ends that incarnation (store.Transfer.FenceFrom), so that a host cut
// off with it can never store what the character did there after the
// snapshot the move takes it with. The caller holds acct's lock, and has
// evicted the character's bodies elsewhere.
func (t *Transfers) MoveByDoor(ctx context.Context, acct store.AccountID, from, to store.AreaID, fromSeq store.Seq, fence *store.Epoch) error {
	id := store.TransferID("join-" + rand.Text())
	tr := store.Transfer{ID: id, Account: acct, From: from, To: to, FromSeq: fromSeq}
	if fence != nil {
		tr.FromEpoch, tr.FenceFrom = *fence, true
	}
	rec, err := t.store.MoveCharacter(ctx, tr, time.Now())
	if err != nil {
		return err
	}
	if rec.Result != store.ResultMoved {
		return fmt.Errorf("transfer: could not move the character: %s", rec.Result)
	}
	t.log.Info("character moved by the door", "account", acct, "from", from, "to", to)
	return nil
}

// Reconcile runs at start-up and every ReconcileEvery until ctx is done:
// pending transfers past their expiry are rejected (the character stays
// where the store says), and finished transfer records older than the
// cache are pruned (never a pending one). A failed pass is a warning; the
// next one retries.
func (t *Transfers) Reconcile(ctx context.Context) {
	pass := func() {
		now := time.Now()
		expired, err := t.store.ExpireTransfers(ctx, now)
		if err != nil {
			if ctx.Err() == nil {
				t.log.Warn("reconcile: expire transfers", "err", err)
			}
			return
		}
		for _, tr := range expired {
			t.log.Info("reconcile: rolled back an expired transfer", "transfer", tr.ID, "account", tr.Account, "from", tr.From, "to", tr.To)
		}
		if n, err := t.store.PruneTransfers(ctx, now.Add(-cacheTTL)); err != nil {
			if ctx.Err() == nil {
				t.log.Warn("reconcile: prune transfers", "err", err)
			}
		} else if n > 0 {
			t.log.Info("reconcile: pruned transfer records", "n", n)
		}
	}
	pass()
	tk := time.NewTicker(ReconcileEvery)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			pass()
		}
	}
}

// cache remembers answered crossings (bounded, expiring), so a resent
// portal_out is answered without touching the store.
type cache struct {
	mu    sync.Mutex
	m     map[string]cached
	order []string
}

type cached struct {
	res *control.PortalResult
	at  time.Time
}

func (c *cache) get(id string) *control.PortalResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || time.Since(e.at) > cacheTTL {
		return nil
	}
	return e.res
}

func (c *cache) put(id string, res *control.PortalResult) {
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
