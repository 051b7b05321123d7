package area

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// TestLeaveWhileAnotherStays is the regression test of the dead-entity
// panic (issue 11): two players bound in one Area stand in the same
// interest cell; one leaves in some way and its body is removed while the
// other stays and keeps receiving snapshots. The host must keep running,
// the stayer's snapshots must stop showing the leaver, and the Area's grid
// must agree with its world.
func TestLeaveWhileAnotherStays(t *testing.T) {
	const grace = 300 * time.Millisecond
	cases := []struct {
		name  string
		leave func(t *testing.T, h *Host, d *director, leaver *client)
	}{
		{"closes after hello", func(t *testing.T, h *Host, d *director, leaver *client) {
			leaver.c.Close(1000, "bye")
		}},
		{"drops its socket", func(t *testing.T, h *Host, d *director, leaver *client) {
			leaver.c.NetConn().Close()
		}},
		{"drops while walking", func(t *testing.T, h *Host, d *director, leaver *client) {
			// A long move-to that runs on through the grace; the body must
			// stop (nobody steers it) and then go.
			leaver.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 14, Y: 14}})
			waitSnapshot(t, leaver, func(s *wire.Snapshot) bool { return s.AckSeq >= 1 })
			leaver.c.NetConn().Close()
		}},
		{"drops while stepping", func(t *testing.T, h *Host, d *director, leaver *client) {
			for i := uint32(1); i <= 4; i++ {
				leaver.send(&wire.Intent{Seq: i, Kind: wire.IntentStep, Dir: wire.DirS})
			}
			leaver.c.NetConn().Close()
		}},
		{"crosses a portal", func(t *testing.T, h *Host, d *director, leaver *client) {
			leaver.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE}) // (4,5) -> portal (5,5)
			out := expect[*control.PortalOut](d, 5*time.Second)
			d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: out.Account, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "gb", JoinID: 77})
			expectMsg[*wire.PortalMoved](leaver, 5*time.Second)
		}},
		{"drops during a portal crossing", func(t *testing.T, h *Host, d *director, leaver *client) {
			leaver.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
			out := expect[*control.PortalOut](d, 5*time.Second)
			leaver.c.NetConn().Close()
			time.Sleep(grace + 200*time.Millisecond) // past the grace while still in transit
			d.send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: out.Account, OK: true, ToArea: 2, WSURL: "ws://b/ws", Grant: "gb", JoinID: 77})
		}},
		{"taken over, then drops", func(t *testing.T, h *Host, d *director, leaver *client) {
			second := dial(t, h)
			second.hello(d.grant(1, 100, 3, 4, 5, time.Minute), 3)
			for {
				if _, ok := leaver.next(5 * time.Second).(*wire.TakenOver); ok {
					break
				}
			}
			second.c.NetConn().Close()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, d := testHost(t, func(c *Config) { c.ResumeGrace = grace })
			d.AutoAck.Store(true)
			spawnWithPortal(t, d)
			stayer := dial(t, h)
			stayer.hello(d.grant(1, 200, 1, 3, 3, time.Minute), 1)
			leaver := dial(t, h)
			ack := leaver.hello(d.grant(1, 100, 2, 4, 5, time.Minute), 2)
			// Both in one interest cell: the stayer sees the leaver.
			sees := func() bool { _, ok := stayer.v.Entities[ack.Entity]; return ok }
			waitSnapshot(t, stayer, func(*wire.Snapshot) bool { return sees() })

			tc.leave(t, h, d, leaver)

			// Past the grace the leaver's body is gone from the stayer's view
			// while the stayer keeps getting snapshots: the host survived.
			waitSnapshot(t, stayer, func(*wire.Snapshot) bool { return !sees() })
			for range 10 {
				expectMsg[*wire.Snapshot](stayer, 2*time.Second)
			}
			if sees() {
				t.Fatal("the leaver's body came back into view")
			}
			ha := h.area(1)
			if ha == nil {
				t.Fatal("area 1 is gone from the host")
			}
			check := make(chan error, 1)
			ha.a.PostControl(func(a *ecs.Area) {
				if err := a.CheckGrid(); err != nil {
					check <- err
					return
				}
				check <- ha.eng.Hash.Check(a)
			})
			if err := <-check; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitView waits until ok holds of cl's view: at once if it does now (a
// round with nothing new sends no snapshot, so the view the last one left
// is the world's), else after the first snapshot that makes it hold.
func waitView(t *testing.T, cl *client, ok func() bool) {
	t.Helper()
	if ok() {
		return
	}
	waitSnapshot(t, cl, func(*wire.Snapshot) bool { return ok() })
}

// waitSnapshot reads snapshots (skipping other messages) until one
// satisfies ok.
func waitSnapshot(t *testing.T, cl *client, ok func(*wire.Snapshot) bool) *wire.Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var seen []string
	for time.Now().Before(deadline) {
		m := cl.tryNext(time.Until(deadline))
		if m == nil {
			break
		}
		if s, is := m.(*wire.Snapshot); is {
			if ok(s) {
				return s
			}
			seen = append(seen, fmt.Sprintf("snapshot ack %d", s.AckSeq))
		} else {
			seen = append(seen, fmt.Sprintf("%s %+v", m.Type(), m))
		}
	}
	if len(seen) > 12 {
		seen = append(seen[:4], seen[len(seen)-8:]...)
	}
	t.Fatalf("no snapshot satisfied the condition in time; saw %v", seen)
	return nil
}

// TestLeaveEndsTheSessionAtOnce (issue 25): a player who sends leave{}
// gets its last snapshot, left{} and the close (1000); its body is gone
// from the Area at once, long before the resume grace, the other player's
// presence drops it, its state goes to the director in a snapshot, and
// its resume token is dead. leave before a session is NOT_HELLO.
func TestLeaveEndsTheSessionAtOnce(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = time.Hour })
	d.spawn(1, 16, 16)
	stranger := dial(t, h)
	stranger.send(&wire.Leave{})
	if e := expectMsg[*wire.Error](stranger, 5*time.Second); e.Code != wire.CodeNotHello {
		t.Fatalf("leave before a session: %v; want NOT_HELLO", e.Code)
	}
	stayer := dial(t, h)
	stayer.hello(d.grant(1, 200, 1, 8, 8, time.Minute), 1)
	leaver := dial(t, h)
	ack := leaver.hello(d.grant(1, 100, 2, 3, 3, time.Minute), 2)
	leaver.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	for expectMsg[*wire.Snapshot](leaver, 5*time.Second).AckSeq < 1 {
	}
	waitFor(t, "both players present", func() bool {
		p := expectMsg[*wire.Presence](stayer, 5*time.Second)
		return len(p.Players) == 2
	})
	leaver.send(&wire.Leave{})
	var got []string
	for m := range leaver.msgs {
		if _, ok := m.(*wire.Snapshot); !ok {
			got = append(got, m.Type().String())
		}
	}
	if len(got) != 1 || got[0] != "left" {
		t.Fatalf("the leaver got %v after its leave; want left alone, then the close", got)
	}
	var ce *gate.CloseError
	if err := <-leaver.errs; !errors.As(err, &ce) || ce.Code != gate.CloseNormal {
		t.Fatalf("the leaver's connection closed with %v; want 1000", err)
	}
	// Gone at once: the stayer's presence drops it, and the director got
	// the leaver's last square.
	for {
		p := expectMsg[*wire.Presence](stayer, 5*time.Second)
		if len(p.Players) == 1 {
			break
		}
	}
	waitFor(t, "the leaver's last state sent to the director", func() bool {
		s, err := areatest.Expect[*control.Snapshot](d.Director, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Characters {
			if c.Account == 100 && c.X == 4 && c.Y == 3 {
				return true
			}
		}
		return false
	})
	back := dial(t, h)
	back.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 9})
	if e := expectMsg[*wire.Error](back, 5*time.Second); e.Code != wire.CodeBadToken {
		t.Fatalf("resume after leaving: %v; want BAD_TOKEN", e.Code)
	}
}

// TestAClosingAreaSendsItsFinalSnapshotAgain: a final snapshot that gets
// no ack (an outbox or a director's backlog that was full dropped it) is
// sent again while the close waits for its ack, and the Area closes
// acked once one comes. Without the resend, the close waits out
// FinalAckTimeout and unloads unacked: the Area's last play is lost.
func TestAClosingAreaSendsItsFinalSnapshotAgain(t *testing.T) {
	_, d := testHost(t, func(c *Config) { c.FinalAckTimeout = 20 * time.Second })
	d.spawn(1, 16, 16)
	d.send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeAreaClosing)})
	var first *control.Snapshot
	for first == nil || !first.Final {
		first = expect[*control.Snapshot](d, 5*time.Second)
	}
	// Not acked: as if it never arrived. It comes again, the same one.
	again := expect[*control.Snapshot](d, 5*time.Second)
	if !again.Final || again.Seq != first.Seq || again.Area != 1 {
		t.Fatalf("after an unacked final snapshot (seq %d): %+v; want it again", first.Seq, again)
	}
	d.send(&control.SnapshotAck{Area: 1, Seq: again.Seq})
	closed := expect[*control.AreaClosed](d, 5*time.Second)
	if !closed.Acked || closed.Seq != first.Seq {
		t.Fatalf("area_closed %+v; want acked at seq %d", closed, first.Seq)
	}
}

// TestAPoolIsBounded: a host's pool is 1 to control.MaxPoolSize Areas
// (the director keeps room per host by it and refuses more).
func TestAPoolIsBounded(t *testing.T) {
	for _, tt := range []struct {
		pool int
		ok   bool
	}{{0, false}, {1, true}, {control.MaxPoolSize, true}, {control.MaxPoolSize + 1, false}} {
		cfg := DefaultConfig()
		cfg.SpawnToken = "spawn-token"
		cfg.PoolSize = tt.pool
		if err := cfg.validate(); (err == nil) != tt.ok {
			t.Errorf("pool %d: %v; want valid %t", tt.pool, err, tt.ok)
		}
	}
}
