package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// know records that acct may have a body in l, unreported until until.
// r.mu held.
func (l *Live) know(acct store.AccountID, until time.Time) {
	if l.known == nil {
		l.known = map[store.AccountID]time.Time{}
	}
	if until.After(l.known[acct]) {
		l.known[acct] = until
	}
}

// grantWindow is how long after a grant is sent its player may bind with
// it: the host may take the grant as late as the join's timeout after it
// was sent, and keeps it for its TTL from then.
func (r *Registry) grantWindow() time.Duration { return r.cfg.JoinTimeout + r.cfg.GrantTTL }

// Portals are the portals the incarnation was spawned with.
func (l *Live) Portals() []control.Portal { return l.portals }

// Errors of making an Area live and of granting a join there. Test with
// errors.Is; each is wrapped with what failed.
var (
	// ErrAtCapacity: no host has room, and no new one may start (the
	// process rail) or came in time.
	ErrAtCapacity = errors.New("registry: no area host has room for this area")
	// ErrHostsCannotStart: no host has room and the ones started exit
	// before they register (HostFailure says why).
	ErrHostsCannotStart = errors.New("registry: area hosts cannot start")
	// ErrNotLive: the Area could not be made live, or its host went away,
	// or did not answer in time.
	ErrNotLive = errors.New("registry: the area could not be made live")
	// ErrGrantFailed: the Area's host refused the grant, went away, or did
	// not register it in time.
	ErrGrantFailed = errors.New("registry: the grant was not registered")
	// ErrHostLost: the Area was live on a host cut off from the director,
	// whose lease has not run out: it cannot be made live elsewhere yet.
	ErrHostLost = errors.New("registry: the area's host is out of touch; it cannot be made live elsewhere before its lease runs out")
	// ErrElsewhere: the character's body elsewhere cannot leave now (it
	// crosses a portal, or its host is out of touch).
	ErrElsewhere = errors.New("registry: the character is elsewhere and cannot leave now")
	// ErrUnsaved: the character's final state where it was could not be
	// stored (the store refused or failed the snapshot).
	ErrUnsaved = errors.New("registry: the character's state could not be saved")
)

// RetryError is an error after which the same request may succeed later:
// Retry says when (a 503's or 409's Retry-After).
type RetryError struct {
	Err   error
	Retry time.Duration
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// Area returns area's live record, or nil.
func (r *Registry) Area(area store.AreaID) *Live {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.areas[area]
}

// EnsureLive returns the live record of a, making it live first if it is
// not: pick a host with room (or start one), begin a new incarnation with
// a fresh placement credential, hydrate the Area from its last snapshot.
// Concurrent calls share one attempt. An Area whose host is out of touch
// (Lost), or whose incarnation a host of an earlier director may still
// run (the adoption window after a start), is not made live elsewhere:
// EnsureLive waits for it (bounded), then fails with ErrHostLost.
func (r *Registry) EnsureLive(ctx context.Context, a store.Area) (*Live, error) {
	deadline := time.Now().Add(r.cfg.JoinTimeout)
	for {
		r.mu.Lock()
		l := r.areas[a.ID]
		switch {
		case l != nil && !l.closing:
			r.mu.Unlock()
			select {
			case <-l.ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: gave up waiting for the area to start", ErrNotLive)
			}
			if l.err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNotLive, l.err)
			}
			select {
			case <-l.Host.gone:
				return nil, fmt.Errorf("%w: the area's host is gone; try again", ErrNotLive)
			default:
			}
			return l, nil
		case l != nil: // closing: wait for it to unload, then make it live again
		default:
			until, lost := r.lost[a.ID]
			if lost && !time.Now().Before(until) {
				delete(r.lost, a.ID) // its lease ran out (the loop of Run forgets it too)
				lost = false
			}
			if !lost && r.adoptingLocked(time.Now()) && a.Placement != (store.TokenHash{}) {
				// A host of the director before this one may run it still.
				until, lost = r.adoptUntil, true
			}
			if !lost {
				l = &Live{ID: a.ID, Kind: a.Kind, Template: a.Template, ready: make(chan struct{}), zeroSince: time.Now()}
				r.areas[a.ID] = l
				r.mu.Unlock()
				return r.place(ctx, a, l)
			}
			if !time.Now().Before(deadline) || until.After(deadline) {
				r.mu.Unlock()
				return nil, &RetryError{Err: ErrHostLost, Retry: time.Until(until)}
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: the join was cancelled", ErrNotLive)
		case <-time.After(time.Until(deadline)):
			return nil, &RetryError{Err: fmt.Errorf("%w: the area is closing; try again in a moment", ErrNotLive), Retry: time.Second}
		}
	}
}

// place makes a live on a host; l is already in r.areas.
func (r *Registry) place(ctx context.Context, a store.Area, l *Live) (*Live, error) {
	err := r.start(ctx, a, l)
	r.mu.Lock()
	l.err = err
	if err != nil && r.areas[a.ID] == l {
		delete(r.areas, a.ID)
	}
	close(l.ready)
	r.notify()
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("area failed to start", "area", a.ID, "err", err)
		return nil, err
	}
	return l, nil
}

// start makes area live on a host; l is already in r.areas. A snapshot
// of area the store could not take (a host stopped or died in an
// outage) is written first: the new incarnation starts from what the
// store holds.
func (r *Registry) start(ctx context.Context, a store.Area, l *Live) error {
	if err := r.flushPending(ctx, a.ID); err != nil {
		return fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	h, err := r.pickHost(ctx, a)
	if err != nil {
		return err
	}
	need, placed := placeCost(a.W, a.H), false
	defer func() { // the slot pickHost took, if the Area never came to take it
		if !placed {
			r.mu.Lock()
			h.placing, h.placingCost = h.placing-1, h.placingCost-need
			r.mu.Unlock()
		}
	}()
	placement := newCredential()
	epoch, err := r.store.BeginIncarnation(ctx, a.ID, store.HashToken(placement))
	if err != nil {
		return fmt.Errorf("%w: begin incarnation: %w", ErrNotLive, err)
	}
	blob, seq, _, err := r.store.AreaSnapshot(ctx, a.ID)
	if err != nil {
		return fmt.Errorf("%w: read its snapshot: %w", ErrNotLive, err)
	}
	plan := Plan{W: a.W, H: a.H}
	if r.cfg.Plan != nil {
		plan = r.cfg.Plan(ctx, a)
	}
	if plan.Stale && len(blob) > 0 {
		blob = nil // its map has no place for what its blob kept: it starts from its map
	}
	call, err := h.ready.Expect(a.ID)
	if err != nil {
		return fmt.Errorf("%w: host %d: %w", ErrNotLive, h.ID, err)
	}
	r.mu.Lock()
	h.placing, h.placingCost, placed = h.placing-1, h.placingCost-need, true
	l.Host, l.Epoch, l.portals = h, epoch, plan.Portals
	l.width, l.height, l.seqFrom, l.seqSince, l.tickRate = plan.W, plan.H, seq, time.Now(), r.tickRate(h)
	l.storedSeq, l.maxNPCs = seq, plan.maxNPCs()
	h.areas[a.ID] = l
	r.mu.Unlock()
	err = h.conn.Send(&control.SpawnArea{Area: uint32(a.ID), Epoch: uint64(epoch), Kind: a.Kind, Template: a.Template,
		W: plan.W, H: plan.H, Seq: uint64(seq), Blob: blob, Seed: a.Seed, Portals: plan.Portals, Placement: placement})
	sent := err == nil
	var ready *control.AreaReady
	if sent {
		wctx, cancel := context.WithTimeout(ctx, r.cfg.JoinTimeout)
		ready, err = call.Wait(wctx)
		cancel()
		if err == nil && ready.Error != "" {
			err = fmt.Errorf("host %d: %s", h.ID, ready.Error)
		}
	} else {
		call.Cancel()
	}
	if err != nil {
		r.mu.Lock()
		if h.areas[a.ID] == l {
			delete(h.areas, a.ID)
		}
		if sent && ready == nil {
			r.gaveUpLocked(h, uint32(a.ID), uint64(epoch)) // it may come live there yet: closed then
		}
		r.mu.Unlock()
		return fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	r.log.Info("area live", "area", a.ID, "host", h.ID, "epoch", epoch, "seq", seq)
	return nil
}

// areaCost is what an Area is assumed to take of its host's memory, by
// its size: a base for its world and buffers, and a share per
// square of its grid layers, static map, A* and flow-field scratch (the
// host's own estimate, area/cost.go, is 33 to 59 B a square by its rules;
// area's TestUnloadedAreasFreeTheirMemory measured a 1024x1024 Area's heap
// at ~37 MiB).
func areaCost(w, h int) int64 {
	const base, perSquare = 48 << 10, 36
	return base + int64(w)*int64(h)*perSquare
}

// bodyCost is what each body in an Area (its player's character, bound,
// away, or granted its way in) adds to the Area's cost: its connection,
// views and buffers, its entity. Measured (bench/RESULTS.md): a live 32x32
// home with its player holds some 125 KiB of its host (areaCost 84 KiB),
// a 64x64 village of 20 some 650 KiB (areaCost 192 KiB).
const bodyCost = 32 << 10

// placeCost is the room an Area placed for a join takes: its size and
// the body of the player whose join places it.
func placeCost(w, h int) int64 { return areaCost(w, h) + bodyCost }

// liveCost is the room l takes now: its size and its bodies. r.mu held.
func liveCost(l *Live) int64 {
	return areaCost(l.width, l.height) + bodyCost*int64(len(l.accounts)+len(l.away)+len(l.grants))
}

// NominalAreaCost is the memory a host's pool counts per Area slot (a
// host with pool n has room for n times it): about a live home with its
// player. An Area takes the room it costs (liveCost), so a host fills
// with homes by its slots and with villages by their room.
const NominalAreaCost = 128 << 10

// pickHost returns the registered host with the most room for a, starting
// a new one (within the process rail) when none has any. Room is counted
// in memory, by the Areas' sizes and bodies (a host's pool is its
// capacity in bytes over NominalAreaCost); an Area picked for a host and
// not yet live there takes its slot and room from the pick on
// (Host.placing). While
// spawned hosts exit before they register, it refuses at once rather
// than wait JoinTimeout for one that will not come.
func (r *Registry) pickHost(ctx context.Context, a store.Area) (*Host, error) {
	deadline := time.Now().Add(r.cfg.JoinTimeout)
	need := placeCost(a.W, a.H)
	started := false
	for {
		r.mu.Lock()
		var best *Host
		var bestRoom int64
		for _, h := range r.hosts {
			room := int64(h.Pool)*NominalAreaCost - r.usedLocked(h) - h.placingCost
			if room >= need && len(h.areas)+h.placing < h.Pool && (best == nil || room > bestRoom) {
				best, bestRoom = h, room
			}
		}
		if best != nil { // taken now: start gives it back if the Area does not come
			best.placing, best.placingCost = best.placing+1, best.placingCost+need
		}
		failed := r.hostFailure
		starting := false
		for _, ch := range r.spawned {
			select {
			case <-ch.registered:
			default:
				starting = true
			}
		}
		others := 0
		for _, h := range r.hosts {
			if !h.spawned {
				others++
			}
		}
		r.mu.Unlock()
		if best != nil {
			return best, nil
		}
		if failed != nil && time.Since(failed.At) < hostRetryAfter {
			return nil, fmt.Errorf("%w: %d in a row exited before they registered: %s", ErrHostsCannotStart, failed.Count, failed.Reason)
		}
		// One new host at a time: joins that find every host full while one
		// is already starting wait for it instead of each starting another.
		if st := r.starter(); !started && !starting && st != nil {
			if err := st.StartExtra(others); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrAtCapacity, err)
			}
			started = true
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return nil, ErrAtCapacity
		}
		r.wait(ctx, time.Until(deadline))
	}
}

// hostRetryAfter is how long after a host failed to start a join refuses
// at once rather than start another host to try again.
const hostRetryAfter = 5 * time.Second

// usedLocked is the room h's Areas take. r.mu held.
// By the Areas' sizes and bodies (liveCost), or by the host's own count
// of its Areas' memory (its last heartbeat) when that says more (their
// rules, creatures and line of sight cost more than the size alone
// tells); to the host's count go the Areas placed on it since that
// heartbeat, which it could not know.
func (r *Registry) usedLocked(h *Host) int64 {
	var bySize, since int64
	for _, l := range h.areas {
		c := liveCost(l)
		bySize += c
		if l.seqSince.After(h.lastBeat) {
			since += c
		}
	}
	return max(bySize, h.beat.AreaBytes+since)
}

// presence records an Area's connected peers and bodies, from the Area's
// host only.
func (r *Registry) presence(h *Host, m *control.Presence) {
	r.mu.Lock()
	l, reason := r.ownedLocked(h, m.Area, 0, false)
	if l == nil {
		late := r.givenUpLocked(h, m.Area, 0, false)
		r.mu.Unlock()
		if !late { // a late incarnation's presence, before its close: nothing to record
			r.refuseHost(h, m.Type(), reason, m.Area)
		}
		return
	}
	unknown := 0
	defer func() {
		r.mu.Unlock()
		if unknown > 0 {
			r.refuseHost(h, m.Type(), RefuseUnknownAccount, m.Area, "accounts", unknown)
		}
	}()
	if m.Peers > 0 {
		l.zeroSince = time.Time{}
	} else if l.zeroSince.IsZero() {
		l.zeroSince = time.Now()
	}
	l.peers = m.Peers
	// Believed: at most as many bodies as the grid holds, each of an
	// account the registry let in here (the rest are refused, once a
	// report); the accounts known from now on are the ones reported and
	// the ones on their way in.
	believe := func(in []uint64) []store.AccountID {
		out := make([]store.AccountID, 0, min(len(in), l.maxBodies()))
		for _, a := range in {
			acct := store.AccountID(a)
			if _, known := l.known[acct]; len(out) == l.maxBodies() || !known {
				unknown++
				continue
			}
			out = append(out, acct)
			delete(l.grants, acct) // arrived: counted by presence now
		}
		return out
	}
	l.accounts = believe(m.Accounts)
	l.away = believe(m.Away)
	// Not reported is not gone for good: a body reported away may leave
	// (its grace ran out) and its player's grant, counted used when the
	// away body was reported, still bind a new one.
	now := time.Now()
	for acct, until := range l.known {
		if now.After(until) && !slices.Contains(l.accounts, acct) && !slices.Contains(l.away, acct) {
			delete(l.known, acct)
		}
	}
}

// maxBodies bounds the bodies a presence report of l may claim: at most
// one per square of its grid, and no more than a host could serve.
func (l *Live) maxBodies() int { return min(l.width*l.height, 4096) }

// areaClosed handles an Area's host telling it unloaded (or failed).
func (r *Registry) areaClosed(ctx context.Context, h *Host, m *control.AreaClosed) {
	id := store.AreaID(m.Area)
	r.mu.Lock()
	// An epoch of 0 is a close from a host that does not send one: the
	// Area is still this host's.
	l, reason := r.ownedLocked(h, m.Area, m.Epoch, m.Epoch != 0)
	if l != nil {
		delete(h.areas, id)
		delete(r.areas, id)
		r.notify()
	}
	late := reason != "" && m.Epoch != 0 && r.givenUpLocked(h, m.Area, m.Epoch, true)
	r.mu.Unlock()
	if late {
		r.log.Info("a late incarnation closed, as asked", "area", m.Area, "host", h.ID, "epoch", m.Epoch)
		return
	}
	if reason != "" {
		r.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "failed", m.Failed)
		return
	}
	if m.Failed {
		r.metrics.failures.Inc()
		r.log.Error("area failed on its host; the next join makes it live again from its last snapshot", "area", m.Area, "host", h.ID, "epoch", m.Epoch, "last_acked_seq", m.Seq, "reason", m.Reason)
		return
	}
	r.log.Info("area closed", "area", m.Area, "host", h.ID, "final_seq", m.Seq, "acked", m.Acked)
}

// closeIdle closes Areas whose host has reported zero peers for the idle
// grace, with no grant pending.
func (r *Registry) closeIdle(now time.Time) {
	var idle []*Live
	r.mu.Lock()
	for _, l := range r.areas {
		if l.closing || l.Host == nil || l.peers > 0 || l.zeroSince.IsZero() || now.Sub(l.zeroSince) < r.cfg.AreaIdleGrace {
			continue
		}
		select {
		case <-l.ready:
		default:
			continue // still starting
		}
		if l.err != nil || r.grantPendingLocked(l, now) {
			continue
		}
		l.closing = true
		idle = append(idle, l)
	}
	r.mu.Unlock()
	for _, l := range idle {
		r.log.Info("closing an idle area", "area", l.ID, "host", l.Host.ID)
		_ = l.Host.conn.Send(&control.CloseArea{Area: uint32(l.ID), Reason: uint16(wire.CodeAreaClosing), GraceMS: 0})
	}
}

// grantPendingLocked reports whether a grant for l is registered and not
// yet used or expired. r.mu held.
func (r *Registry) grantPendingLocked(l *Live, now time.Time) bool {
	for a, until := range l.grants {
		if now.After(until) {
			delete(l.grants, a)
			continue
		}
		return true
	}
	return false
}

// Drain tells every live Area to close with REALM_CLOSED after grace; the
// director itself stays up.
func (r *Registry) Drain(grace time.Duration) {
	r.mu.Lock()
	var all []*Live
	for _, l := range r.areas {
		if l.Host != nil && !l.closing {
			l.closing = true
			all = append(all, l)
		}
	}
	r.mu.Unlock()
	for _, l := range all {
		_ = l.Host.conn.Send(&control.CloseArea{Area: uint32(l.ID), Reason: uint16(wire.CodeRealmClosed), GraceMS: grace.Milliseconds()})
	}
	r.log.Info("realm drained", "areas", len(all))
}

// AreaStats is one live Area as the registry knows it.
type AreaStats struct {
	ID       store.AreaID
	Template string
	Host     uint32
	Epoch    store.Epoch
	Peers    int
	Accounts []store.AccountID
	Away     []store.AccountID
	Closing  bool
	LastSnap time.Time
}

// Areas returns the live Areas' figures.
func (r *Registry) Areas() []AreaStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]AreaStats, 0, len(r.areas))
	for _, l := range r.areas {
		if l.Host == nil {
			continue
		}
		out = append(out, AreaStats{ID: l.ID, Template: l.Template, Host: l.Host.ID, Epoch: l.Epoch, Peers: l.peers,
			Accounts: slices.Clone(l.accounts), Away: slices.Clone(l.away), Closing: l.closing, LastSnap: l.lastSnap})
	}
	slices.SortFunc(out, func(a, b AreaStats) int { return int(a.ID) - int(b.ID) })
	return out
}

// Inside counts the players inside the realm (bound, away for a resume,
// or holding a grant not yet used: on their way in) and reports whether
// acct is one of them: the realm door's head count.
func (r *Registry) Inside(acct store.AccountID) (inside bool, count int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[store.AccountID]bool{}
	add := func(a store.AccountID) {
		if !seen[a] {
			seen[a] = true
			count++
		}
		inside = inside || a == acct
	}
	now := time.Now()
	for _, l := range r.areas {
		for _, a := range l.accounts {
			add(a)
		}
		for _, a := range l.away {
			add(a)
		}
		for a, until := range l.grants {
			// A grant holds a seat while fresh: a player uses one within
			// seconds, and one never used must not keep the realm full for
			// its whole life (it still binds, should its player come late).
			if issued := until.Add(-r.cfg.GrantTTL); now.Before(until) && now.Before(issued.Add(r.cfg.GrantHold)) {
				add(a)
			}
		}
	}
	return inside, count
}

// PendingGrants counts acct's grants answered and neither used nor
// expired, for Areas other than except, and when the first of them lapses.
func (r *Registry) PendingGrants(acct store.AccountID, except store.AreaID) (n int, first time.Time) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, l := range r.areas {
		if until, ok := l.grants[acct]; ok && id != except && now.Before(until) {
			n++
			if first.IsZero() || until.Before(first) {
				first = until
			}
		}
	}
	return n, first
}

// tickRate is the tick rate the seq bound assumes for h: the one the
// director gave a host it spawned, the highest any host accepts for one
// started elsewhere (it chose its own).
func (r *Registry) tickRate(h *Host) int {
	if h.cred != (store.TokenHash{}) {
		return r.cfg.SpawnedTickRate
	}
	return maxHostTickRate
}

// newCredential returns a 128-bit random token as hex.
func newCredential() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
