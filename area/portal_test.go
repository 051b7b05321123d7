package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// spawnWithPortal makes Area 1 live with a portal at (5,5) to Area 2 (7,7).
func spawnWithPortal(t *testing.T, d *director) {
	t.Helper()
	d.send(&control.SpawnArea{Area: 1, Epoch: 1, Kind: "village", W: 16, H: 16, Seed: 1,
		Portals: []control.Portal{{X: 5, Y: 5, ToArea: 2, ToX: 7, ToY: 7}}})
	if r := expect[*control.AreaReady](d, 5*time.Second); r.Error != "" {
		t.Fatal(r.Error)
	}
}

// TestPortalTimeoutRestores: a crossing the director never answers is
// rolled back by the host: the player is back on the from-square, out of
// transit, and told portal_blocked{TIMEOUT}; meanwhile intents are refused
// PORTAL_IN_PROGRESS and the host resends portal_out.
func TestPortalTimeoutRestores(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.TransferTimeout = 2500 * time.Millisecond })
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // onto the portal at (5,5)
	out := expect[*control.PortalOut](d, 5*time.Second)
	if out.Account != 100 || out.FromX != 4 || out.FromY != 5 || out.ToArea != 2 || out.ToX != 7 || out.Epoch != 1 {
		t.Fatalf("portal_out %+v", out)
	}
	c.send(&wire.Intent{Seq: 2, Kind: wire.IntentStep, Dir: wire.DirE})
	if r := expectMsg[*wire.IntentResult](c, 5*time.Second); r.Seq != 2 || r.Code != wire.CodePortalInProgress {
		t.Fatalf("intent during the crossing: %+v; want PORTAL_IN_PROGRESS", r)
	}
	again := expect[*control.PortalOut](d, 5*time.Second)
	if again.Transfer != out.Transfer {
		t.Fatalf("resent portal_out names %q; want the same transfer %q", again.Transfer, out.Transfer)
	}
	if b := expectMsg[*wire.PortalBlocked](c, 10*time.Second); b.Reason != wire.CodeTimeout {
		t.Fatalf("portal_blocked %+v; want TIMEOUT", b)
	}
	waitSnapshot(t, c, func(*wire.Snapshot) bool { y := c.you(); return y.X == 4 && y.Y == 5 && y.Flags&wire.FlagTransit == 0 })
	c.send(&wire.Intent{Seq: 3, Kind: wire.IntentStep, Dir: wire.DirS}) // free to move again
	for {
		if s := expectMsg[*wire.Snapshot](c, 5*time.Second); s.AckSeq >= 3 {
			break
		}
	}
}

// TestPortalResults: a refusal restores the player with
// portal_transfer_rejected{reason}; an OK result removes the body and
// sends the client portal_moved, then closes the connection; a replayed
// result changes nothing.
func TestPortalResults(t *testing.T) {
	h, d := testHost(t, nil)
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	out := expect[*control.PortalOut](d, 5*time.Second)
	d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, Code: uint16(wire.CodeNotMember)})
	if r := expectMsg[*wire.PortalTransferRejected](c, 5*time.Second); r.Reason != wire.CodeNotMember {
		t.Fatalf("rejection %+v", r)
	}
	waitSnapshot(t, c, func(*wire.Snapshot) bool { y := c.you(); return y.X == 4 && y.Y == 5 && y.Flags&wire.FlagTransit == 0 })
	c.send(&wire.Intent{Seq: 2, Kind: wire.IntentStep, Dir: wire.DirE})
	out2 := expect[*control.PortalOut](d, 5*time.Second)
	if out2.Transfer == out.Transfer {
		t.Fatal("a new crossing reused the old transfer id")
	}
	res := &control.PortalResult{Transfer: out2.Transfer, Area: 1, Account: 100, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "gb", JoinID: 77}
	d.send(res)
	m := expectMsg[*wire.PortalMoved](c, 5*time.Second)
	if m.Area != 2 || m.WSURL != "ws://b/ws" || m.Grant != "gb" || m.JoinID != 77 {
		t.Fatalf("portal_moved %+v", m)
	}
	c.closed(5 * time.Second)
	d.send(res) // a replay
	ha := h.area(1)
	gone := make(chan bool)
	ha.a.PostControl(func(_ *ecs.Area) { gone <- ha.bodies[100] == nil && len(ha.crossings) == 0 })
	if !<-gone {
		t.Fatal("the crossed player's body is still in the source area")
	}
}

// TestPortalLateSuccessFollowsTheStore: after a timeout restored the
// player, the host keeps asking the director; when the answer finally says
// the crossing happened, the player is moved out after all.
func TestPortalLateSuccessFollowsTheStore(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.TransferTimeout = 1500 * time.Millisecond })
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	out := expect[*control.PortalOut](d, 5*time.Second)
	if b := expectMsg[*wire.PortalBlocked](c, 10*time.Second); b.Reason != wire.CodeTimeout {
		t.Fatalf("portal_blocked %+v", b)
	}
	again := expect[*control.PortalOut](d, 10*time.Second) // still asking
	if again.Transfer != out.Transfer {
		t.Fatalf("settling resend names %q; want %q", again.Transfer, out.Transfer)
	}
	d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "late", JoinID: 9})
	if m := expectMsg[*wire.PortalMoved](c, 5*time.Second); m.Grant != "late" {
		t.Fatalf("portal_moved %+v", m)
	}
}

// TestDropRacingACrossing: the player's socket drops just as the crossing
// succeeds, so the drop is reported after the body left for the other
// Area. The late report must change nothing (it once stopped a dead body's
// walk and failed the Area, and counted the peer out twice).
func TestDropRacingACrossing(t *testing.T) {
	h, d := testHost(t, nil)
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	stayer := dial(t, h)
	stayer.hello(d.grant(1, 200, 2, 9, 9, time.Minute), 2)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	out := expect[*control.PortalOut](d, 5*time.Second)
	ha := h.area(1)
	done := make(chan [2]int, 1)
	ha.a.PostControl(func(*ecs.Area) {
		b := ha.bodies[100]
		p := b.peer
		ha.onPortalResult(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "gb", JoinID: 77})
		ha.dropped(p, b) // the close that raced the result, reported after it
		done <- [2]int{ha.bound, len(ha.order)}
	})
	select {
	case got := <-done:
		if got != [2]int{1, 1} {
			t.Fatalf("after the crossing and the late drop: bound %d, bodies %d; want 1, 1", got[0], got[1])
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the control function never finished (the Area failed: %v)", ha.a.Failed())
	}
	expectMsg[*wire.PortalMoved](c, 5*time.Second)
	expectMsg[*wire.Snapshot](stayer, 5*time.Second)
	if ha.a.Failed() {
		t.Fatal("the Area failed")
	}
}

// TestIntentsQueuedAtACrossingAreAnswered: intents sent right behind the
// step onto a portal wait in the body's queue when the step lands; the
// crossing that begins refuses every one of them PORTAL_IN_PROGRESS (they
// once went unanswered: the refusals were made after the tick's answers
// had been delivered, and dropped).
func TestIntentsQueuedAtACrossingAreAnswered(t *testing.T) {
	h, d := testHost(t, nil)
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // onto the portal at (5,5)
	for seq := uint32(2); seq <= 8; seq++ {
		c.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirS})
	}
	expect[*control.PortalOut](d, 5*time.Second)
	answered := map[uint32]wire.Code{}
	deadline := time.Now().Add(5 * time.Second)
	for len(answered) < 7 && time.Now().Before(deadline) {
		switch m := c.tryNext(time.Until(deadline)).(type) {
		case *wire.IntentResult:
			answered[m.Seq] = m.Code
		case *wire.Snapshot:
			if m.AckSeq > 1 {
				t.Fatalf("ack_seq %d: an intent behind the portal step was applied", m.AckSeq)
			}
		}
	}
	for seq := uint32(2); seq <= 8; seq++ {
		if code, ok := answered[seq]; !ok || code != wire.CodePortalInProgress {
			t.Errorf("seq %d: answered %v (%v); want PORTAL_IN_PROGRESS", seq, code, ok)
		}
	}
}

// TestDroppedBodyCrossingOutlivesTheGrace: a player's connection drops
// while its body crosses a portal and the director takes longer than the
// resume grace to answer. The body stays (it goes on to the next Area
// without its player, or comes back); a join by the door meanwhile binds
// that same body, and the crossing's OK then moves it out with its new
// session (portal_moved) and leaves no body behind. (The transfer model
// found a ghost here: the expired body was dropped while crossing, the
// hello made a second one, and the OK then forgot the second from the
// Area's index while it stayed in the world.)
func TestDroppedBodyCrossingOutlivesTheGrace(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = 100 * time.Millisecond; c.TransferTimeout = time.Minute })
	spawnWithPortal(t, d)
	c := dial(t, h)
	ack := c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // onto the portal at (5,5)
	out := expect[*control.PortalOut](d, 5*time.Second)
	c.c.Close(1000, "gone")
	waitFor(t, "the peer gone", func() bool { return h.peers.Load() == 0 })
	time.Sleep(600 * time.Millisecond) // well past the grace, in the Area's chores
	back := dial(t, h)
	again := back.hello(d.grant(1, 100, 2, 0, 0, time.Minute), 2)
	if again.Entity != ack.Entity {
		t.Fatalf("the join bound entity %d; want the crossing body %d, kept past its grace", again.Entity, ack.Entity)
	}
	d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "gb", JoinID: 77})
	if m := expectMsg[*wire.PortalMoved](back, 5*time.Second); m.Grant != "gb" {
		t.Fatalf("portal_moved %+v", m)
	}
	ha := h.area(1)
	left := make(chan int, 1)
	ha.a.PostControl(func(*ecs.Area) { left <- len(ha.order) + len(ha.bodies) })
	if n := <-left; n != 0 {
		t.Fatalf("after the crossing Area 1 keeps %d bodies (index and world); want none", n)
	}
}

// TestLeaveWaitsForTheCrossing (issue 25): a leave while the body is on
// its way through a portal is answered error{PORTAL_IN_PROGRESS} and the
// session goes on (a stream of leaves meanwhile is refused RATE_LIMITED
// past the burst); once the crossing is refused (and the body restored),
// a leave ends it: left{} and the close.
func TestLeaveWaitsForTheCrossing(t *testing.T) {
	h, d := testHost(t, nil)
	spawnWithPortal(t, d)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 4, 5, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // onto the portal at (5,5)
	out := expect[*control.PortalOut](d, 5*time.Second)
	c.send(&wire.Leave{})
	if e := expectMsg[*wire.Error](c, 5*time.Second); e.Code != wire.CodePortalInProgress {
		t.Fatalf("leave during the crossing: %v; want PORTAL_IN_PROGRESS", e.Code)
	}
	// A stream of leaves meanwhile is an intent flood: refused RATE_LIMITED
	// past the connection's burst, never one piece of Area work each.
	for range 3 * DefaultConfig().IntentBurst {
		c.send(&wire.Leave{})
	}
	limited := false
	for !limited {
		if e, ok := c.next(5 * time.Second).(*wire.Error); ok && e.Code == wire.CodeRateLimited {
			limited = true
		}
	}
	d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, ToArea: 2, Code: uint16(wire.CodeNotMember)})
	for {
		m := c.next(5 * time.Second)
		if _, ok := m.(*wire.PortalTransferRejected); ok {
			break
		}
		if e, ok := m.(*wire.Error); ok && e.Code != wire.CodeRateLimited && e.Code != wire.CodePortalInProgress {
			t.Fatalf("while the crossing is refused: %+v", e)
		}
	}
	// The bucket refills at the intent rate: a leave refused RATE_LIMITED
	// is sent again, until one is taken. The flood's own answers may still
	// be on their way, and a leave of the flood that the server reads after
	// the refusal, with a token refilled, is the one taken: its left{} and
	// the close can come while this sends again, so a send that finds the
	// connection closed ends the sending, not the test; left{} must still
	// arrive before the close.
	leave, _ := wire.Encode(&wire.Leave{})
	open := c.c.WriteMessage(leave) == nil
	for left := false; !left; {
		switch m := c.next(5 * time.Second).(type) {
		case *wire.Left:
			left = true
		case *wire.Error:
			if m.Code != wire.CodeRateLimited && m.Code != wire.CodePortalInProgress {
				t.Fatalf("a leave after the crossing: %+v; want left", m)
			}
			if m.Code == wire.CodeRateLimited && open {
				time.Sleep(100 * time.Millisecond)
				open = c.c.WriteMessage(leave) == nil
			}
		}
	}
	if err := c.closed(5 * time.Second); err == nil {
		t.Fatal("the connection stayed open after left")
	}
}
