package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// TestPanicFailsTheAreaAlone: three busy Areas on one host; a panic inside
// one of them (in a control handler, on its goroutine) fails that Area
// alone: its players are told area_closing{INTERNAL} and rehello{INTERNAL}
// and their connections close; the director is told area_closed{failed};
// no snapshot of the failed world is sent; the Area can be made live again
// on the same host; and the players of the other two Areas stay bound,
// keep walking and keep receiving snapshots.
func TestPanicFailsTheAreaAlone(t *testing.T) {
	h, d := testHost(t, nil)
	d.AutoAck.Store(true)
	type player struct {
		c   *client
		seq uint32
	}
	var players [3][2]*player
	for area := uint32(1); area <= 3; area++ {
		d.spawnBusy(area, 32, 32)
		for i := range 2 {
			c := dial(t, h)
			acct := uint64(area*100) + uint64(i)
			c.hello(d.grant(area, acct, acct, int32(4+i*3), 4, time.Minute), acct)
			players[area-1][i] = &player{c: c}
		}
	}
	walk := func(p *player) {
		p.seq++
		dir := wire.DirE
		if p.seq%2 == 0 {
			dir = wire.DirW
		}
		p.c.send(&wire.Intent{Seq: p.seq, Kind: wire.IntentStep, Dir: dir})
	}
	for _, ps := range players {
		for _, p := range ps {
			walk(p)
		}
	}
	ha2 := h.area(2)
	lastSeq := make(chan uint64, 1)
	ha2.a.PostControl(func(*ecs.Area) { lastSeq <- ha2.acked })
	acked := <-lastSeq
	ha2.a.PostControl(func(*ecs.Area) { panic("a bug in one area") })

	// The failed Area's players: area_closing{INTERNAL}, rehello{INTERNAL}, close.
	for _, p := range players[1] {
		ac := expectMsg[*wire.AreaClosing](p.c, 5*time.Second)
		if ac.Reason != wire.CodeInternal {
			t.Fatalf("area_closing reason %v; want INTERNAL", ac.Reason)
		}
		rh := expectMsg[*wire.Rehello](p.c, 5*time.Second)
		if rh.Code != wire.CodeInternal {
			t.Fatalf("rehello code %v; want INTERNAL", rh.Code)
		}
		p.c.closed(5 * time.Second)
	}
	closed := expect[*control.AreaClosed](d, 5*time.Second)
	if closed.Area != 2 || !closed.Failed || closed.Reason == "" || closed.Seq != acked {
		t.Fatalf("area_closed %+v; want area 2 failed with a reason and its last acked seq %d", closed, acked)
	}
	waitFor(t, "area 2 unloaded", func() bool { return h.area(2) == nil })
	if n := h.areaFailures.Load(); n != 1 {
		t.Fatalf("host counted %d area failures; want 1", n)
	}

	// The other Areas' players walk on: every intent answered (applied, or
	// BLOCKED when a wanderer stands in the way), for a second and a half
	// of play, and snapshots keep coming.
	for range 15 {
		for _, area := range []int{0, 2} {
			for _, p := range players[area] {
				walk(p)
				answers(t, p.c, p.seq)
			}
		}
	}
	for _, area := range []int{0, 2} {
		for _, p := range players[area] {
			expectMsg[*wire.Snapshot](p.c, 5*time.Second)
		}
	}
	for _, area := range []uint32{1, 3} {
		ha := h.area(area)
		bound := make(chan int, 1)
		ha.a.PostControl(func(*ecs.Area) { bound <- ha.bound })
		if n := <-bound; n != 2 {
			t.Fatalf("area %d has %d bound peers after its neighbour failed; want 2", area, n)
		}
	}

	// Nothing of the failed world reached the director after the failure.
	for {
		m, err := expectAny(d, 300*time.Millisecond)
		if err != nil {
			break
		}
		if s, ok := m.(*control.Snapshot); ok && s.Area == 2 {
			t.Fatalf("the failed Area sent snapshot seq %d after failing", s.Seq)
		}
	}

	// An ordinary join brings the Area back (the director re-homes it; here
	// on the same host), and its players in again.
	d.send(&control.SpawnArea{Area: 2, Epoch: 2, Kind: "village", W: 32, H: 32, Seed: 2})
	if r := expect[*control.AreaReady](d, 5*time.Second); r.Error != "" {
		t.Fatalf("area 2 did not come back: %s", r.Error)
	}
	c := dial(t, h)
	c.hello(d.grant(2, 200, 900, 4, 4, time.Minute), 900)
	expectMsg[*wire.Snapshot](c, 5*time.Second)
}

// expectAny returns the director's next message of any type.
func expectAny(d *director, within time.Duration) (control.Message, error) {
	return areatest.Expect[control.Message](d.Director, within)
}
