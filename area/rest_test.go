package area

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/persist/blob"
)

// aloneAtHome binds one player at (2,2) of an empty 16x16 Area 1 and
// returns once its client sees itself, with that first snapshot.
func aloneAtHome(t *testing.T) (*Host, *director, *client, *wire.Snapshot) {
	t.Helper()
	h, d := testHost(t, nil)
	d.AutoAck.Store(true)
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(d.grant(1, 7, 1, 2, 2, time.Minute), 1)
	first := waitSnapshot(t, c, func(s *wire.Snapshot) bool { _, ok := c.v.Entities[c.entity]; return ok })
	return h, d, c, first
}

// TestAnAreaAtRestTellsTheTruth: a player standing alone in an Area lets
// it rest through its ticks and skip its rounds (ecs.Area.Rest,
// hostArea.rest), and still gets a snapshot at least every keep-alive
// (SnapshotKeepAlive, counted in the snapshots' tick numbers, which
// go on through the ticks rested); a step after the rest is answered and
// shown at once.
func TestAnAreaAtRestTellsTheTruth(t *testing.T) {
	h, _, c, first := aloneAtHome(t)
	a := h.area(1).a
	keepAlive := uint64(SnapshotKeepAlive / (time.Second / time.Duration(h.cfg.TickRate)))
	last := first.Tick
	for range 4 { // standing: only keep-alives come
		s := expectMsg[*wire.Snapshot](c, 5*time.Second)
		if s.Tick-last > keepAlive {
			t.Fatalf("snapshots at ticks %d and %d: %d ticks apart, more than the keep-alive's %d", last, s.Tick, s.Tick-last, keepAlive)
		}
		if len(s.Records) > 0 {
			t.Fatalf("a snapshot at tick %d carries %d bytes of records while nothing moved", s.Tick, len(s.Records))
		}
		last = s.Tick
	}
	st := a.Stats()
	t.Logf("rested %d of %d ticks", st.Rested, st.Tick)
	if st.Rested < st.Tick/2 {
		t.Fatalf("the Area rested %d of its %d ticks while its one player stood", st.Rested, st.Tick)
	}
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	waitSnapshot(t, c, func(s *wire.Snapshot) bool { return s.AckSeq >= 1 })
	if you := c.you(); you.X != 3 || you.Y != 2 {
		t.Fatalf("after a step east from (2,2) the client sees itself at (%d,%d)", you.X, you.Y)
	}
}

// TestAStepAtHomeIsFiveBytes: a player alone at home who steps is told
// by a short snapshot (docs/protocol.md, "Short snapshots") of five bytes,
// its step and nothing else, counted from the snapshot before; standing,
// it gets three-byte keep-alives.
func TestAStepAtHomeIsFiveBytes(t *testing.T) {
	_, _, c, _ := aloneAtHome(t)
	expectMsg[*wire.Snapshot](c, 5*time.Second) // a keep-alive: the first snapshot was written
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	stepped := waitSnapshot(t, c, func(s *wire.Snapshot) bool { return s.AckSeq >= 1 })
	want := append(wire.AppendShortSnapshotHeader(nil, stepped.Tick, 1, 2), wire.AppendStep(nil, c.entity, wire.DirE)...)
	shorts := c.shortFrames() // a keep-alive after the step may be among them
	steps := 0
	for _, b := range shorts {
		switch {
		case bytes.Equal(b, want):
			steps++
		case len(b) != 3:
			t.Errorf("a short snapshot of %d bytes (%x); want the step's five and keep-alives of 3", len(b), b)
		}
	}
	if steps != 1 {
		t.Fatalf("the step (%+v) came in %d short snapshots of the five bytes %x; the short ones: %x", stepped, steps, want, shorts)
	}
}

// TestAnAckAfterARestIsNotHeldBack: an intent applied in an Area at rest
// that changes nothing any client sees (a stack moved between two slots
// of the player's own inventory) moves its ack_seq, which is told before
// the next keep-alive: a resting Area never holds an ack back to it.
// Tried a few times, each sent just after a keep-alive: under load an
// intent may take a while to reach the host, but one that is never told
// before the next keep-alive is held back. That the round comes at the
// cadence right after the applying tick (not at the next chores' tick)
// is TestWhatKeepsAnAreaFromResting's "a tick ran since the last round".
func TestAnAckAfterARestIsNotHeldBack(t *testing.T) {
	h, d := testHost(t, nil)
	d.AutoAck.Store(true)
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(grantState(t, d, 7, 2, 2, blob.Stack{ID: 9<<32 | 1, Kind: kindCode(t, "plank"), Count: 8}), 7)
	waitSnapshot(t, c, func(s *wire.Snapshot) bool { _, ok := c.v.Entities[c.entity]; return ok })
	keepAlive := uint64(SnapshotKeepAlive / (time.Second / time.Duration(h.cfg.TickRate)))
	prompt := 0
	for seq := uint32(1); seq <= 3; seq++ {
		var kept *wire.Snapshot
		for kept == nil || len(kept.Records) > 0 || kept.AckSeq != seq-1 { // a keep-alive of an Area at rest
			kept = expectMsg[*wire.Snapshot](c, 5*time.Second)
		}
		from, to := uint8(seq-1), uint8(seq) // the stack moves on one slot each time
		c.send(&wire.Intent{Seq: seq, Kind: wire.IntentMoveItem, Item: wire.ItemSlots{From: from, To: to}})
		acked := waitSnapshot(t, c, func(s *wire.Snapshot) bool { return s.AckSeq >= seq })
		if acked.Tick-kept.Tick < keepAlive {
			prompt++
		}
		t.Logf("intent %d: sent after the keep-alive of tick %d, acked at tick %d", seq, kept.Tick, acked.Tick)
	}
	if prompt == 0 {
		t.Fatalf("no ack came before the next keep-alive (%d ticks): the rounds after the ticks that applied them were skipped", keepAlive)
	}
}

// TestWhatKeepsAnAreaFromResting holds hostArea.rest, the host's say in
// an Area's rest, to each thing it must not sleep through: it is asked
// on the Area's goroutine (control work) with each one set in turn, the
// Area otherwise at rest with one player bound.
func TestWhatKeepsAnAreaFromResting(t *testing.T) {
	h, _, c, _ := aloneAtHome(t)
	expectMsg[*wire.Snapshot](c, 5*time.Second) // a keep-alive: the view is at rest
	ha := h.area(1)
	every := uint64(h.cfg.SnapshotEvery)
	ask := func(set func(), unset func()) (tick, until, keepAlive uint64, round uint64) {
		done := make(chan struct{})
		ha.a.PostNow(func(a *ecs.Area) {
			defer close(done)
			tick = ha.atRest(a)
			set()
			until = ha.rest(a, tick)
			unset()
			keepAlive = ha.interest.KeepAliveAt(&ha.order[0].peer.view)
			round = ha.snapTick + every
		})
		<-done
		return
	}
	nothing := func() {}
	in3 := 3 * h.clock.Period()
	var (
		written   uint64
		dropped   *peer
		droppedAt time.Time
		bound     int
		bodies    map[uint64]*body
		dueIn     time.Duration
	)
	// The client may read the keep-alive before the host's writer has
	// recorded it written whole (the view is not at rest until then): ask
	// again until it has, for 5 s at most.
	tick, until, keepAlive, _ := ask(nothing, nothing)
	for deadline := time.Now().Add(5 * time.Second); until != keepAlive-1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		tick, until, keepAlive, _ = ask(nothing, nothing)
	}
	if until < tick || until != keepAlive-1 {
		t.Fatalf("at rest: rests through tick %d from %d; want through %d, the tick before the keep-alive", until, tick, keepAlive-1)
	}
	for _, tc := range []struct {
		name       string
		set, unset func()
		before     func(tick, round uint64) uint64 // the last tick it may rest through
	}{
		{"chores asked for now", func() { ha.choresRan, ha.nextChores = ha.a.Now, ha.a.Now }, nothing, func(tick, _ uint64) uint64 { return tick - 1 }},
		{"chores asked for in 3 ticks", func() { ha.choresRan, ha.nextChores = ha.a.Now, ha.a.Now.Add(in3) }, nothing, func(tick, _ uint64) uint64 { return tick + 2 }},
		{"the presence report due on the slot after 3 ticks", func() {
			ha.lastPresence = ha.a.Now.Add(in3 - h.cfg.PresenceEvery)
			dueIn = onSlot(ha.lastPresence, h.cfg.PresenceEvery).Sub(ha.a.Now)
		}, nothing, func(tick, _ uint64) uint64 { return tick + uint64((dueIn+h.clock.Period()-1)/h.clock.Period()) - 1 }},
		{"the persist due on the slot after 3 ticks", func() {
			ha.lastPersist = ha.a.Now.Add(in3 - h.cfg.PersistEvery)
			dueIn = onSlot(ha.lastPersist, h.cfg.PersistEvery).Sub(ha.a.Now)
		}, nothing, func(tick, _ uint64) uint64 { return tick + uint64((dueIn+h.clock.Period()-1)/h.clock.Period()) - 1 }},
		{"an unacked snapshot's resend due in 3 ticks", func() {
			ha.lastPersist = ha.a.Now.Add(time.Hour) // its own cadence out of the way
			ha.unacked, ha.sentAt = &control.Snapshot{}, ha.a.Now.Add(in3-2*h.cfg.PersistEvery)
		}, func() { ha.unacked = nil }, func(tick, _ uint64) uint64 { return tick + 2 }},
		{"a grant expiring in 3 ticks", func() { putLazy(&ha.grants, "x", &grant{expires: ha.a.Now.Add(in3)}) }, func() { delete(ha.grants, "x") }, func(tick, _ uint64) uint64 { return tick + 2 }},
		{"a dropped body's grace ending in 3 ticks", func() {
			b := ha.order[0]
			dropped, droppedAt = b.peer, b.droppedAt
			b.peer, b.droppedAt = nil, ha.a.Now.Add(in3-h.cfg.ResumeGrace)
		}, func() { ha.order[0].peer, ha.order[0].droppedAt = dropped, droppedAt }, func(tick, _ uint64) uint64 { return tick + 2 }},
		{"nobody left: the chores freeze it", func() { bound, bodies = ha.bound, ha.bodies; ha.bound, ha.bodies = 0, map[uint64]*body{} },
			func() { ha.bound, ha.bodies = bound, bodies }, func(tick, _ uint64) uint64 { return tick - 1 }},
		{"a tick ran since the last round", func() { ha.unrounded = true }, nothing, func(_, round uint64) uint64 { return round - 1 }},
		{"a frame not written whole", func() { written = ha.order[0].peer.view.Written.Swap(0) }, func() { ha.order[0].peer.view.Written.Store(written) }, func(_, round uint64) uint64 { return round - 1 }},
		{"a close", func() { ha.closing = &closing{} }, func() { ha.closing = nil }, func(tick, _ uint64) uint64 { return tick - 1 }},
		{"a spectator", func() { ha.watchers.list = append(ha.watchers.list, &spectator{}) }, func() { ha.watchers.list = nil }, func(tick, _ uint64) uint64 { return tick - 1 }},
		{"a crossing", func() { putLazy(&ha.crossings, "x", &crossing{}) }, func() { delete(ha.crossings, "x") }, func(tick, _ uint64) uint64 { return tick - 1 }},
		{"an armed failpoint", func() { ha.panicPoint = "x" }, func() { ha.panicPoint = "" }, func(tick, _ uint64) uint64 { return tick - 1 }},
	} {
		var round uint64
		tick, until, _, round = ask(tc.set, tc.unset)
		if want := tc.before(tick, round); until > want {
			t.Errorf("%s: rests through tick %d from %d; want through %d at most", tc.name, until, tick, want)
		}
	}
}

// atRest sets what hostArea.rest reads as it is in an Area at rest, its
// last round just run, and returns the tick to ask about: the chores on
// their cadence (due now by it) with nothing to do for longer than a
// keep-alive. Area goroutine (control work).
func (ha *hostArea) atRest(a *ecs.Area) (tick uint64) {
	a.Now = time.Now()
	ha.choresRan, ha.nextChores = a.Now.Add(-choresEvery), a.Now
	ha.lastPersist, ha.lastPresence = a.Now, a.Now
	ha.unrounded = false
	tick = a.Tick + 1
	ha.snapTick = tick - 1 // the last round just ran: the next by the cadence at tick-1+every
	return tick
}

// TestChoresFallOnTheHostsSlots: a chore that reports to the director
// (the persist, the presence report) is due on a boundary of the host's
// slots of its cadence, at or after the cadence since it last ran and
// less than a slot later, so that Areas whose chores fall due in one
// slot run them together; and the time keeps the monotonic clock
// reading.
func TestChoresFallOnTheHostsSlots(t *testing.T) {
	for _, every := range []time.Duration{30 * time.Second, 5 * time.Second, 300 * time.Millisecond} {
		slot := every / cadenceSlots
		base := time.Now()
		for i := range 1000 {
			last := base.Add(time.Duration(i) * 7919 * time.Microsecond)
			want := last.Add(every)
			due := onSlot(last, every)
			if due.Before(want) || due.Sub(want) >= slot || due.UnixNano()%int64(slot) != 0 {
				t.Fatalf("every %v, last run %v: due %v; want the first slot boundary at or after %v", every, last, due, want)
			}
			if !strings.Contains(due.String(), " m=") { // the reading String prints
				t.Fatalf("due %v lost the monotonic reading %v had", due, want)
			}
		}
	}
	if got := slotAfter(time.Unix(7, 0), 0); !got.Equal(time.Unix(7, 0)) {
		t.Fatalf("no slot: %v; want the time unchanged", got)
	}
}
