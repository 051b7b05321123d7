package area

import (
	"cmp"
	"context"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/control/failpoint"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// portalResend is how often an unanswered portal_out is sent again
// (the director answers replays from its cache or the store).
const portalResend = 2 * time.Second

// settleFor is how long a timed-out crossing keeps asking the director
// for its outcome: if the director did move the player after all (its
// answer was delayed or lost), the player follows the store rather than
// being left behind as a ghost.
const settleFor = 10 * time.Minute

// crossing is a player on their way through a portal: their body stands on
// the portal square, in transit, until the director answers.
type crossing struct {
	b        *body
	out      *control.PortalOut
	from     ecs.Cell
	deadline time.Time
	sentAt   time.Time
}

// setPortals indexes an Area's portal squares.
func (ha *hostArea) setPortals(ps []control.Portal) {
	ha.portals = ps
	ha.portalAt = nil
	if len(ps) == 0 {
		return
	}
	g := ha.a.Grid
	ha.portalAt = make([]int16, g.Len())
	for i := range ha.portalAt {
		ha.portalAt[i] = -1
	}
	for i, p := range ps {
		if g.In(p.X, p.Y) {
			ha.portalAt[g.Cell(p.X, p.Y)] = int16(i)
		}
	}
}

// checkPortals starts a crossing for every player body that stepped onto a
// portal this tick (from the Area's move log). After-tick, so no query runs.
func (ha *hostArea) checkPortals(now time.Time) {
	if ha.portalAt == nil || ha.closing != nil {
		return
	}
	for _, m := range ha.a.Moves {
		if m.To == ecs.NoCell || m.From == ecs.NoCell {
			continue // spawns and despawns never cross
		}
		i := ha.portalAt[m.To]
		if i < 0 {
			continue
		}
		id := m.Entity.ID()
		if int(id) >= len(ha.routes) || ha.routes[id].entity != m.Entity || ha.routes[id].b == nil {
			continue // not a player's body
		}
		b := ha.routes[id].b
		if ha.a.InTransit(b.entity) {
			continue
		}
		ha.startCrossing(b, m.From, ha.portals[i], now)
	}
}

func (ha *hostArea) startCrossing(b *body, from ecs.Cell, p control.Portal, now time.Time) {
	transfer := newToken()
	if err := ha.a.SetTransit(b.entity, 1, true); err != nil {
		ha.h.log.Error("portal: set transit", "area", ha.id, "err", err)
		return
	}
	fx, fy := ha.a.Grid.XY(from)
	c := &crossing{b: b, from: from, deadline: now.Add(ha.h.cfg.TransferTimeout), sentAt: now, out: &control.PortalOut{
		Transfer: transfer, Area: ha.id, Epoch: ha.epoch, Account: b.account,
		FromX: fx, FromY: fy, ToArea: p.ToArea, ToX: p.ToX, ToY: p.ToY,
		SentMS: now.UnixMilli(), DeadlineMS: now.Add(ha.h.cfg.TransferTimeout).UnixMilli(),
	}}
	ha.crossings[transfer] = c
	ha.persist(now, false) // the player's state at the portal, out of cadence
	failpoint.Hit(failpoint.HostPortalOut)
	ha.h.link.send(c.out)
	failpoint.Hit(failpoint.HostPortalSent)
	ha.scheduleChores(now.Add(portalResend))
}

// portalChores resends unanswered crossings and times out stale ones.
func (ha *hostArea) portalChores(now time.Time) {
	for tr, c := range ha.crossings {
		if now.After(c.deadline) {
			delete(ha.crossings, tr)
			ha.restore(c, wire.TypePortalBlocked, wire.CodeTimeout)
			if settlingOff.Load() {
				continue
			}
			c.deadline = now.Add(settleFor)
			ha.settling[tr] = c
			continue
		}
		if now.Sub(c.sentAt) >= portalResend {
			c.sentAt = now
			ha.h.link.send(c.out)
		}
	}
	for tr, c := range ha.settling {
		if now.After(c.deadline) {
			delete(ha.settling, tr)
			continue
		}
		if now.Sub(c.sentAt) >= portalResend {
			c.sentAt = now
			ha.h.link.send(c.out)
		}
	}
}

// onPortalResult acts on the director's answer to a crossing.
func (ha *hostArea) onPortalResult(m *control.PortalResult) {
	failpoint.Hit(failpoint.HostPortalResult)
	c := ha.crossings[m.Transfer]
	if c == nil {
		// An answer to a crossing that timed out (settling): if the move
		// happened after all, the player follows the store rather than
		// linger as a ghost. Answers to crossings this host does not know
		// (duplicates, crossings long settled) change nothing: acting on an
		// old success could move a player who has come back since.
		s := ha.settling[m.Transfer]
		if s == nil {
			return
		}
		delete(ha.settling, m.Transfer)
		if b := ha.bodies[m.Account]; m.OK && b == s.b {
			// The store has the player in the other Area: a newer crossing
			// the body may have started since is moot (the director will
			// find the character not in this Area and refuse it).
			for tr, c := range ha.crossings {
				if c.b == b {
					delete(ha.crossings, tr)
				}
			}
			ha.moveOut(b, m)
		}
		return
	}
	delete(ha.crossings, m.Transfer)
	if !m.OK {
		ha.restore(c, wire.TypePortalTransferRejected, wire.Code(m.Code))
		return
	}
	ha.moveOut(c.b, m)
}

// moveOut removes the body of a player who crossed and sends their client
// to the destination.
func (ha *hostArea) moveOut(b *body, m *control.PortalResult) {
	if p := b.peer; p != nil {
		p.bind.Store(nil)
		p.lost.Store(uint32(wire.CodeRehello))
		// A last snapshot, sent reliably: it carries the session's final
		// ack_seq, which the volatile ones might not deliver before the close.
		p.send(ha.finalSnapshot(b))
		p.send(&wire.PortalMoved{Area: m.ToArea, WSURL: m.WSURL, Grant: m.Grant, JoinID: m.JoinID})
		p.conn.Close(gate.CloseNormal, "moved to another area")
		// The peer is no longer this body's: a drop it reports later (its
		// close raced this crossing) must find nothing to do.
		b.peer = nil
		ha.bound--
	}
	ha.a.Despawn(b.entity)
	ha.dropBody(b)
	// A join grant for this player registered here before the crossing is
	// stale now: used, it would put the player back in an Area the store
	// says they left.
	for tok, g := range ha.grants {
		if g.char.Account == b.account {
			delete(ha.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
		}
	}
	ha.presence(time.Now())
	ha.h.log.Debug("player crossed a portal", "area", ha.id, "account", b.account, "to", m.ToArea)
}

// restore puts a player whose crossing failed back on its from-square (or
// the nearest free one), out of transit, and tells the client why.
func (ha *hostArea) restore(c *crossing, t wire.Type, code wire.Code) {
	b := c.b
	if ha.bodies[b.account] != b || !ha.a.Alive(b.entity) {
		return
	}
	_ = ha.a.SetTransit(b.entity, 0, false)
	g := ha.a.Grid
	if p := ha.positions.Get(b.entity); p != nil {
		x, y := g.XY(c.from)
		if fx, fy, ok := ha.nearestFree(x, y); ok {
			ha.a.MoveBody(b.entity, p, fx, fy)
		}
	}
	if b.peer != nil {
		switch t {
		case wire.TypePortalBlocked:
			b.peer.send(&wire.PortalBlocked{Reason: code})
		default:
			b.peer.send(&wire.PortalTransferRejected{Reason: code})
		}
	}
}

// dropBody forgets a body (it left the Area).
func (ha *hostArea) dropBody(b *body) {
	delete(ha.bodies, b.account)
	ha.h.dropIndex(ha.h.resumes, b.resume)
	kept := ha.order[:0]
	for _, x := range ha.order {
		if x != b {
			kept = append(kept, x)
		}
	}
	clear(ha.order[len(kept):])
	ha.order = kept
}

// settlingOff turns settling off, process-wide: a timed-out crossing is
// forgotten at once instead of asking on. Only the director's model test
// sets it (SetSettling), as a mutation check: without settling the model
// must find a ghost.
var settlingOff atomic.Bool

// SetSettling turns settling on (the default) or off for every Host of
// the process. Tests only: it exists so that the transfer model test can
// show that removing this fence makes it fail.
func SetSettling(on bool) { settlingOff.Store(!on) }

// Sim is a Host run inside an in-process simulation of the transfer
// protocol (the director's model test, director/model_test.go): the
// host's own Areas, crossing state machine, grants and persistence, with
// no client listener and no control socket. The simulation carries the
// control messages (Outbox, Deliver), plays the link's registration
// (Register, Linked, Unlinked), drives the Areas' clock (Run), and stands
// in for the clients (Hello, MoveTo), whose bodies it reads back from the
// Areas' worlds (Areas). It exists for tests; production never makes one.
//
// A body a simulated client holds has no peer: the host tells that client
// nothing (the simulation reads outcomes from the control messages and
// the world), and the body is never dropped for a missing peer.
//
// Concurrency: Run on a goroutine of its own; the other methods from one
// goroutine at a time. Hello, MoveTo, Drop and Areas run their work on
// each Area's goroutine (ecs.Area.PostNow: at once when the Area is not
// ticking, which also takes in the control work waiting for it) and wait
// for it, so they never race a tick; Areas is a snapshot of a moving
// world unless the host is quiescent (as after testing/synctest.Wait).
type Sim struct {
	h *Host
}

// NewSim returns a simulated Host: cfg as for New (cfg.PublicURL names the
// host in grants and portal results; cfg.Listen is not used). Its clock
// has one worker, so one slot ticks the Areas in one order and their
// messages leave in that order.
func NewSim(cfg Config) (*Sim, error) {
	h, err := New(cfg)
	if err != nil {
		return nil, err
	}
	h.clock.Close()
	if h.clock, err = ecs.NewClock(ecs.ClockConfig{TickRate: h.cfg.TickRate, FrozenPollRate: 4, Workers: 1}); err != nil {
		return nil, err
	}
	h.wsURL = h.cfg.PublicURL
	return &Sim{h: h}, nil
}

// Run ticks the host's Areas in (the caller's) real time until ctx is
// done, then stops the clock.
func (s *Sim) Run(ctx context.Context) {
	_ = s.h.clock.Run(ctx)
	s.h.clock.Close()
}

// Register is the registration the host's link would send now.
func (s *Sim) Register() *control.Register {
	h := s.h
	return &control.Register{SpawnToken: h.cfg.SpawnToken, HostKey: h.cfg.HostKey, Name: h.cfg.Name, WSURL: h.wsURL,
		PoolSize: h.cfg.PoolSize, PID: os.Getpid(), Areas: h.areaRefs(), Boot: h.boot}
}

// Linked does what the link does once a director accepted its
// registration: drop what was queued for an earlier connection, take
// messages again, and have every Area resend its unacked snapshot, its
// crossings and its presence.
func (s *Sim) Linked(hostID uint32) {
	l := s.h.link
	s.h.hostID.Store(hostID)
	for len(l.out) > 0 {
		<-l.out
	}
	l.up.Store(true)
	s.h.relinked()
}

// Unlinked marks the link down (its connection ended): the host drops what
// it sends until Linked.
func (s *Sim) Unlinked() { s.h.link.up.Store(false) }

// Outbox yields what the host sends the director, in order.
func (s *Sim) Outbox() <-chan control.Message { return s.h.link.out }

// Deliver hands the host a message from the director, as its link's
// reader does.
func (s *Sim) Deliver(m control.Message) { s.h.dispatch(m) }

// Hello is a simulated client's hello with a join grant: the grant is
// taken as a real hello takes it (single use, unexpired, its join id, the
// Area not closing) and the player's body is spawned (or kept, if the
// Area has it). It returns CodeOK, or the code a client would be told.
func (s *Sim) Hello(grant string, joinID uint64) wire.Code {
	h := s.h
	h.mu.Lock()
	ha := h.grants[grant]
	h.mu.Unlock()
	if ha == nil {
		if h.expiredGrant(grant) {
			return wire.CodeGrantExpired
		}
		return wire.CodeBadGrant
	}
	code := wire.CodeInternal // the Area failed before it took the hello
	ha.simRun(func() { code = ha.simHello(grant, joinID) })
	return code
}

// simHello is hello's taking of the grant and the body (the part before
// a peer is bound), for a client with no peer. Area goroutine.
func (ha *hostArea) simHello(token string, joinID uint64) wire.Code {
	g := ha.grants[token]
	if g == nil || g.joinID != joinID {
		return wire.CodeBadGrant
	}
	delete(ha.grants, token)
	ha.h.dropIndex(ha.h.grants, token)
	switch {
	case time.Now().After(g.expires):
		ha.h.expire(token)
		return wire.CodeGrantExpired
	case ha.closing != nil:
		return wire.CodeAreaClosing
	}
	b := ha.bodies[g.char.Account]
	if b == nil {
		e, err := ha.spawnPlayer(g.char)
		if err != nil {
			return wire.CodeAreaFull
		}
		b = &body{account: g.char.Account, name: g.name, entity: e}
		ha.bodies[b.account] = b
		ha.order = append(ha.order, b)
	}
	b.droppedAt = time.Time{}
	ha.newSession(b)
	ha.setRoute(b)
	ha.a.Touch(b.entity)
	ha.presence(time.Now())
	return wire.CodeOK
}

// MoveTo has a simulated client's body walk to (x, y) (a move-to intent,
// applied by the Area's systems from its next tick). It reports whether
// an Area of this host holds the account's body.
func (s *Sim) MoveTo(account uint64, x, y int32) bool {
	found := false
	for _, ha := range s.h.sortedAreas() {
		ha.simRun(func() {
			b := ha.bodies[account]
			if b == nil {
				return
			}
			found = true
			seq := uint32(b.seqs.Load()) + 1
			if b.accept(b.session, seq) == seqNext {
				ha.a.Post(b.entity, ecs.Intent{Seq: seq, Kind: ecs.IntentMoveTo, X: x, Y: y, Tag: b.session})
			}
		})
	}
	return found
}

// Drop is a simulated client's connection ending: its body stays for a
// resume (ResumeGrace), as a real peer's drop leaves it. It reports
// whether an Area of this host holds the account's body.
func (s *Sim) Drop(account uint64) bool {
	found := false
	for _, ha := range s.h.sortedAreas() {
		ha.simRun(func() {
			b := ha.bodies[account]
			if b == nil || !b.droppedAt.IsZero() {
				return
			}
			found = true
			b.droppedAt = time.Now()
			ha.stopWalking(b)
			ha.a.Touch(b.entity)
			ha.presence(b.droppedAt)
			ha.scheduleChores(b.droppedAt)
		})
	}
	return found
}

// SimArea is one Area of a simulated host as its own goroutine sees it.
type SimArea struct {
	ID    uint32
	Epoch uint64
	// Closing is set while the Area closes; Fenced once the director
	// refused its snapshots.
	Closing, Fenced bool
	// Crossings and Settling count the crossings waiting for the
	// director's answer, and the timed-out ones still asking.
	Crossings, Settling int
	// Bodies are the player bodies in the Area's world (an ECS query, not
	// the host's bookkeeping), by account.
	Bodies []SimBody
}

// SimBody is a player body in an Area's world.
type SimBody struct {
	Account uint64
	X, Y    int32
	Transit bool // in a portal crossing
	// Dropped is set for a body whose client left (Drop): no client holds
	// it, and it goes when its resume grace ends.
	Dropped bool
}

// Areas reads every Area of the host, by id: its crossings from the
// host's bookkeeping, its bodies from its world.
func (s *Sim) Areas() []SimArea {
	var out []SimArea
	for _, ha := range s.h.sortedAreas() {
		ha.simRun(func() {
			st := SimArea{ID: ha.id, Epoch: ha.epoch, Closing: ha.closing != nil, Fenced: ha.fenced,
				Crossings: len(ha.crossings), Settling: len(ha.settling)}
			q := ecs.NewFilter2[ecs.Position, ecs.Player]().Query(&ha.a.World)
			for q.Next() {
				p, pl := q.Get()
				b := ha.bodies[pl.Account]
				dropped := b != nil && b.entity == q.Entity() && !b.droppedAt.IsZero()
				st.Bodies = append(st.Bodies, SimBody{Account: pl.Account, X: p.X, Y: p.Y, Transit: ha.a.InTransit(q.Entity()), Dropped: dropped})
			}
			slices.SortFunc(st.Bodies, func(a, b SimBody) int { return cmp.Compare(a.Account, b.Account) })
			out = append(out, st)
		})
	}
	return out
}

// simRun runs fn on ha's goroutine, at once when the Area is not running
// (else at its next tick or poll), and waits for it. It reports false if
// fn did not run within inspectWait (the Area failed: it never will).
func (ha *hostArea) simRun(fn func()) bool {
	done := make(chan struct{})
	ha.a.PostNow(func(*ecs.Area) { fn(); close(done) })
	select {
	case <-done:
		return true
	case <-time.After(inspectWait):
		return false
	}
}

// sortedAreas returns the host's Areas by id.
func (h *Host) sortedAreas() []*hostArea {
	h.mu.Lock()
	areas := make([]*hostArea, 0, len(h.areas))
	for _, ha := range h.areas {
		areas = append(areas, ha)
	}
	h.mu.Unlock()
	slices.SortFunc(areas, func(a, b *hostArea) int { return cmp.Compare(a.id, b.id) })
	return areas
}
