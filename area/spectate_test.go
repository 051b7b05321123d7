package area

import (
	"strconv"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// onArea runs fn on the Area's goroutine and waits for it.
func onArea(t *testing.T, ha *hostArea, fn func()) {
	t.Helper()
	done := make(chan struct{})
	ha.a.PostNow(func(*ecs.Area) { fn(); close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the area did not run the check")
	}
}

// spectateGrant registers a spectator grant in area and returns the
// host's answer's error ("" when registered).
func (d *director) spectateGrant(area uint32, token string, joinID uint64) string {
	d.t.Helper()
	d.send(&control.Spectate{Area: area, Token: token, JoinID: joinID, TTLMS: 60000, Account: 1})
	for {
		ack := expect[*control.GrantAck](d, 5*time.Second)
		if ack.Token == token {
			return ack.Error
		}
	}
}

// TestSpectator: a spectator binds with no body (hello_ack entity 0, no
// resume token; the Area's bodies, bound peers and presence unchanged),
// is sent the map of every cell and the whole Area, then only the cells
// that changed, and sees a player move,
// has its intents refused SPECTATOR (never applied), can watch a
// player's point of view (that player's interest: a far player drops out
// of its view) and the whole Area again; spectators are bounded per Area;
// and an Area with only a spectator freezes.
func TestSpectator(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.InterestRadius = 8 })
	d.spawn(1, 80, 16) // 10 x 2 cells of 8
	ha := h.area(1)
	ada := dial(t, h)
	adaAck := ada.hello(d.grant(1, 100, 1, 5, 5, time.Minute), 1)
	bo := dial(t, h)
	boAck := bo.hello(d.grant(1, 101, 2, 70, 5, time.Minute), 2)

	if e := d.spectateGrant(1, "s-1", 7); e != "" {
		t.Fatalf("spectator grant refused: %s", e)
	}
	sp := dial(t, h)
	ack := sp.hello("s-1", 7)
	if ack.Entity != 0 || ack.ResumeToken != "" || ack.Area != 1 {
		t.Fatalf("spectator's hello_ack %+v; want entity 0, no resume token, area 1", ack)
	}
	waitSnapshot(t, sp, func(*wire.Snapshot) bool {
		_, a := sp.v.Entities[adaAck.Entity]
		_, b := sp.v.Entities[boAck.Entity]
		return a && b && len(sp.v.Statics) == 20 && len(sp.v.Players) == 2
	})
	onArea(t, ha, func() {
		if len(ha.bodies) != 2 || ha.bound != 2 {
			t.Errorf("with a spectator: %d bodies, %d bound; want 2 and 2", len(ha.bodies), ha.bound)
		}
	})

	// Intents of a spectator: refused SPECTATOR, each by its seq.
	for seq := uint32(1); seq <= 3; seq++ {
		sp.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirE})
		r := expectMsg[*wire.IntentResult](sp, 5*time.Second)
		if r.Seq != seq || r.Code != wire.CodeSpectator {
			t.Fatalf("a spectator's intent %d answered %+v; want SPECTATOR", seq, r)
		}
	}

	// While nothing moves its snapshots carry nothing (bytes grow with
	// what moves); ada walks east: it sees her move, in a snapshot of the
	// cells that changed, not of all 20.
	waitSnapshot(t, sp, func(s *wire.Snapshot) bool { return s.Flags == 0 && len(s.Records) == 0 })
	var whole int
	onArea(t, ha, func() { whole = len(ha.appendWhole(nil)) })
	ada.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	ada.send(&wire.Intent{Seq: 2, Kind: wire.IntentStep, Dir: wire.DirE})
	// (After her pause the two steps may come a tick apart, in one round.)
	moved := waitSnapshot(t, sp, func(*wire.Snapshot) bool { return sp.v.Entities[adaAck.Entity].X >= 6 })
	if len(moved.Records) == 0 || len(moved.Records) >= whole {
		t.Errorf("the snapshot of ada's step holds %d bytes of records; want some, fewer than the whole Area's %d", len(moved.Records), whole)
	}
	waitView(t, sp, func() bool { return sp.v.Entities[adaAck.Entity].X == 7 })

	// Ada's point of view: bo, 60 squares away, is not in it.
	sp.send(&wire.Watch{Entity: adaAck.Entity})
	waitSnapshot(t, sp, func(s *wire.Snapshot) bool { return s.Flags&wire.SnapshotReset != 0 })
	waitSnapshot(t, sp, func(*wire.Snapshot) bool {
		_, a := sp.v.Entities[adaAck.Entity]
		_, b := sp.v.Entities[boAck.Entity]
		return a && !b
	})
	ada.send(&wire.Intent{Seq: 3, Kind: wire.IntentStep, Dir: wire.DirS})
	waitSnapshot(t, sp, func(*wire.Snapshot) bool { return sp.v.Entities[adaAck.Entity].Y == 6 })

	// A player not in the Area: ENTITY_GONE, and the choice stays.
	sp.send(&wire.Watch{Entity: 9999})
	if e := expectMsg[*wire.Error](sp, 5*time.Second); e.Code != wire.CodeEntityGone {
		t.Fatalf("watching nobody: %+v; want ENTITY_GONE", e)
	}
	// The whole Area again: bo is back in view.
	sp.send(&wire.Watch{Entity: 0})
	waitSnapshot(t, sp, func(*wire.Snapshot) bool {
		_, b := sp.v.Entities[boAck.Entity]
		return b
	})

	// A player may not watch.
	ada.send(&wire.Watch{Entity: 0})
	if e := expectMsg[*wire.Error](ada, 5*time.Second); e.Code != wire.CodeUnknownType {
		t.Fatalf("a player's watch: %+v; want UNKNOWN_TYPE", e)
	}

	// The bound per Area: one watching, three more grants, then refusals.
	for i := range MaxSpectatorsPerArea - 1 {
		if e := d.spectateGrant(1, "s-more-"+string(rune('a'+i)), uint64(20+i)); e != "" {
			t.Fatalf("spectator grant %d refused: %s", i+2, e)
		}
	}
	if e := d.spectateGrant(1, "s-over", 30); e == "" {
		t.Fatalf("spectator grant %d registered; want refused past %d per area", MaxSpectatorsPerArea+1, MaxSpectatorsPerArea)
	}

	// The players leave: an Area with only a spectator freezes, and the
	// spectator is told their bodies left.
	for _, c := range []*client{ada, bo} {
		c.send(&wire.Leave{})
		expectMsg[*wire.Left](c, 5*time.Second)
	}
	waitSnapshot(t, sp, func(*wire.Snapshot) bool { return len(sp.v.Entities) == 0 })
	waitFor(t, "the area to freeze with only a spectator", func() bool { return ha.a.Mode() == ecs.Frozen })

	// A spectator's leave ends its watching.
	sp.send(&wire.Leave{})
	expectMsg[*wire.Left](sp, 5*time.Second)
	sp.closed(5 * time.Second)
	waitFor(t, "the spectator to be forgotten", func() bool { return h.spectators.Load() == 0 })
}

// TestSpectatorBounds: at most MaxSpectatorsPerHost spectators on a host
// (a grant past it is refused, and so is a hello past it: AREA_FULL, the
// grant having been taken while there was room); one that leaves makes
// room again.
func TestSpectatorBounds(t *testing.T) {
	h, d := testHost(t, nil)
	areas := MaxSpectatorsPerHost/MaxSpectatorsPerArea + 1
	for id := 1; id <= areas; id++ {
		d.spawn(uint32(id), 16, 16)
	}
	joinID := uint64(100)
	watch := func(area uint32) *client {
		t.Helper()
		joinID++
		tok := "s-" + strconv.FormatUint(joinID, 10)
		if e := d.spectateGrant(area, tok, joinID); e != "" {
			t.Fatalf("spectator grant %d in area %d refused: %s", joinID, area, e)
		}
		c := dial(t, h)
		if ack := c.hello(tok, joinID); ack.Entity != 0 {
			t.Fatalf("a spectator's hello_ack names entity %d", ack.Entity)
		}
		return c
	}
	var first *client
	for n := range MaxSpectatorsPerHost - 1 { // all but one place taken
		c := watch(uint32(n/MaxSpectatorsPerArea + 1))
		if first == nil {
			first = c
		}
	}
	last := uint32(areas)
	if e := d.spectateGrant(last, "s-late", 900); e != "" {
		t.Fatalf("a grant with one place left refused: %s", e)
	}
	watch(uint32((MaxSpectatorsPerHost-1)/MaxSpectatorsPerArea + 1)) // the last place
	late := dial(t, h)
	late.send(&wire.Hello{Grant: "s-late", JoinID: 900, Versions: []uint16{wire.Version}})
	if e := expectMsg[*wire.Error](late, 5*time.Second); e.Code != wire.CodeAreaFull {
		t.Fatalf("a hello past the host's spectators: %+v; want AREA_FULL", e)
	}
	if e := d.spectateGrant(last, "s-over", 901); e != control.ErrorSpectatorsFull {
		t.Fatalf("a grant past the host's spectators: %q; want %q", e, control.ErrorSpectatorsFull)
	}
	first.c.Close(1000, "")
	waitFor(t, "a place again", func() bool { return h.spectators.Load() == MaxSpectatorsPerHost-1 })
	watch(last)
}

// TestSpectatorFlow: a spectator that watches a creature hunting a player
// is sent the flow field that creature follows: the player is its target,
// the player's square is the target's, and from the creature's square
// (within the window) a first step leads on; watching the whole Area
// again stops it; an entity that is no one is refused ENTITY_GONE.
func TestSpectatorFlow(t *testing.T) {
	h, d := testHost(t, nil)
	if err := d.SpawnTemplate(1, 0, 0, "arena", "arena"); err != nil {
		t.Fatal(err)
	}
	ha := h.area(1)
	// The player comes in beside a creature (the arena's slimes hunt the
	// players within 5 squares of them).
	by := dial(t, h)
	by.hello(d.grant(1, 99, 9, 0, 0, time.Minute), 9) // wakes the Area: its spawners fill
	var px, py int32
	waitFor(t, "a creature with a free square beside it", func() bool {
		onArea(t, ha, func() { px, py = besideACreature(ha) })
		return px != 0
	})
	pl := dial(t, h)
	ack := pl.hello(d.grant(1, 100, 1, px, py, time.Minute), 1)
	// A creature hunting the player.
	var hunter uint32
	waitFor(t, "a creature hunting the player", func() bool {
		onArea(t, ha, func() {
			hs := ha.interest.Hash()
			for hc := range int32(hs.Cells()) {
				for id := hs.First(hc); id >= 0; id = hs.Next(id) {
					if _, c := ha.creature(uint32(id)); c != nil && c.Target.ID() == ack.Entity {
						hunter = uint32(id)
					}
				}
			}
		})
		return hunter != 0
	})
	if e := d.spectateGrant(1, "s-flow", 7); e != "" {
		t.Fatal(e)
	}
	sp := dial(t, h)
	sp.hello("s-flow", 7)
	sp.send(&wire.Watch{Entity: hunter})
	var f *wire.Flow
	deadline := time.Now().Add(10 * time.Second)
	for f == nil || f.Target == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no flow field with a target: last %+v", f)
		}
		if m, ok := sp.next(time.Until(deadline)).(*wire.Flow); ok {
			f = m
		}
	}
	if f.Creature != hunter || f.Target != ack.Entity || len(f.Dirs) != int(f.W)*int(f.H) || f.W == 0 {
		t.Fatalf("flow %+v; want creature %d's field of player %d", f, hunter, ack.Entity)
	}
	waitSnapshot(t, sp, func(*wire.Snapshot) bool { _, in := sp.v.Entities[ack.Entity]; return in })
	you, them := sp.v.Entities[ack.Entity], sp.v.Entities[hunter]
	targets := 0
	for i, dir := range f.Dirs {
		if dir == wire.FlowTarget {
			targets++
			if x, y := f.X+int32(i%int(f.W)), f.Y+int32(i/int(f.W)); x != you.X || y != you.Y {
				t.Errorf("target square (%d,%d); the player stands on (%d,%d)", x, y, you.X, you.Y)
			}
		}
	}
	if targets != 1 {
		t.Errorf("%d target squares in the field; want 1", targets)
	}
	if them.ID != 0 && them.X >= f.X && them.Y >= f.Y && them.X < f.X+int32(f.W) && them.Y < f.Y+int32(f.H) {
		if dir := f.Dirs[int(them.Y-f.Y)*int(f.W)+int(them.X-f.X)]; dir > 7 && dir != wire.FlowTarget {
			t.Errorf("the creature's square has no first step (%d) in a field it follows", dir)
		}
	}
	// The whole Area again: no more flow.
	sp.send(&wire.Watch{Entity: 0})
	onArea(t, ha, func() {}) // the watch is taken in
	waitFor(t, "the flow to stop", func() bool {
		var on bool
		onArea(t, ha, func() { on = ha.watchers.list[0].flowOf != (ecs.Entity{}) })
		return !on
	})
	// Refused: an entity that is no one.
	sp.send(&wire.Watch{Entity: 1 << 30})
	if e := expectMsg[*wire.Error](sp, 5*time.Second); e.Code != wire.CodeEntityGone {
		t.Fatalf("watching no one: %+v; want ENTITY_GONE", e)
	}
}

// besideACreature returns a free square two or three squares from a
// creature, or (0, 0). Area goroutine.
func besideACreature(ha *hostArea) (int32, int32) {
	hs := ha.interest.Hash()
	g := ha.a.Grid
	for hc := range int32(hs.Cells()) {
		for id := hs.First(hc); id >= 0; id = hs.Next(id) {
			if _, c := ha.creature(uint32(id)); c == nil {
				continue
			}
			cx, cy := g.XY(hs.Square(id))
			for _, dxy := range [][2]int32{{2, 0}, {-2, 0}, {0, 2}, {0, -2}, {3, 0}, {-3, 0}, {0, 3}, {0, -3}} {
				x, y := cx+dxy[0], cy+dxy[1]
				if x > 0 && y > 0 && g.In(x, y) && g.Walkable(g.Cell(x, y)) {
					return x, y
				}
			}
		}
	}
	return 0, 0
}
