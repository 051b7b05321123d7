//go:build leytest

package area

import (
	"cmp"
	"context"
	"os"
	"slices"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// Sim is a Host run inside an in-process simulation of the transfer
// protocol (the director's model test, director/model_test.go): the
// host's own Areas, crossing state machine, grants and persistence, with
// no client listener and no control socket. The simulation carries the
// control messages (Outbox, Deliver), plays the link's registration
// (Register, Linked, Unlinked), drives the Areas' clock (Run), and stands
// in for the clients (Hello, MoveTo, Item), whose bodies it reads back from the
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
// registration (ack): drop what was queued for an earlier connection,
// close the Areas the director did not adopt and let go of the bodies it
// evicts, take messages again, and have every Area resend its unacked
// snapshot, its crossings and its presence.
func (s *Sim) Linked(ack *control.Registered) {
	l := s.h.link
	s.h.hostID.Store(ack.HostID)
	for len(l.out) > 0 {
		<-l.out
	}
	s.h.adopted(ack)
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
		b = &body{account: g.char.Account, name: g.name, entity: e, since: time.Now()}
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
	return s.post(account, ecs.Intent{Kind: ecs.IntentMoveTo, X: x, Y: y})
}

// Item has a simulated client's body carry out an item intent (place,
// take, move_item, craft, use or a trade's: its Kind, Dir, From, To and
// Count),
// numbered as the session's next and applied by the Area's systems at its
// next tick. It reports whether an Area of this host holds the account's
// body.
func (s *Sim) Item(account uint64, it ecs.Intent) bool {
	return s.post(account, ecs.Intent{Kind: it.Kind, Dir: it.Dir, From: it.From, To: it.To, Count: it.Count})
}

// DirTo returns the direction from the account's body to other's when
// the two stand side by side in one Area of this host.
func (s *Sim) DirTo(account, other uint64) (d ecs.Dir, ok bool) {
	for _, ha := range s.h.sortedAreas() {
		ha.simRun(func() {
			a, b := ha.bodies[account], ha.bodies[other]
			if a == nil || b == nil {
				return
			}
			pa, oka := ha.a.PositionOf(a.entity)
			pb, okb := ha.a.PositionOf(b.entity)
			if !oka || !okb {
				return
			}
			for dir := range ecs.NumDirs {
				if dx, dy := dir.Delta(); pa.X+dx == pb.X && pa.Y+dy == pb.Y {
					d, ok = dir, true
				}
			}
		})
	}
	return d, ok
}

// TradeRev reports the revision of the open trade of the account's body,
// whether it has one, and whether the other player has confirmed it.
func (s *Sim) TradeRev(account uint64) (rev uint16, open, theirs bool) {
	for _, ha := range s.h.sortedAreas() {
		ha.simRun(func() {
			b := ha.bodies[account]
			if b == nil {
				return
			}
			if t := ha.eng.Items.OpenTrade(b.entity); t != nil {
				me := t.Side(b.entity)
				rev, open, theirs = t.Rev, true, t.Confirmed[1-me]
			}
		})
	}
	return rev, open, theirs
}

// post posts it for the account's body, numbered as its session's next
// intent, in the Area of this host that holds the body, and reports
// whether one does.
func (s *Sim) post(account uint64, it ecs.Intent) bool {
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
				it.Seq, it.Tag = seq, b.session
				ha.a.Post(b.entity, it)
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
