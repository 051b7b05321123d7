package area

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/persist/blob"
)

// heartbeatParked returns the next heartbeat that counts n parked Areas.
func heartbeatParked(t *testing.T, d *director, n int) *control.Heartbeat {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		hb := expect[*control.Heartbeat](d, 5*time.Second)
		if hb.Parked == n {
			return hb
		}
		if time.Now().After(deadline) {
			t.Fatalf("heartbeats still count %d parked Areas; want %d", hb.Parked, n)
		}
	}
}

// TestAParkedHomeIsFoundAsLeft: a player opens a door and places a chest,
// then leaves. The Area freezes, and ParkAfter later parks: its world
// (engine, grid) is let go of, and the heartbeat counts it parked. The
// next player's grant builds it again: the door is open, the chest where
// it was put, the statue where it stood, and once that player leaves too
// it parks again.
func TestAParkedHomeIsFoundAsLeft(t *testing.T) {
	lib := testContent(t, map[string]struct {
		rules string
		rows  []string
	}{"hall": {"village", []string{
		"##########",
		"#S......M#",
		"####D#####",
		"#........#",
		"##########",
	}}})
	h, d := testHost(t, func(c *Config) {
		c.Content, c.InterestRadius, c.ResumeGrace = lib, 0, 0
		c.ParkAfter, c.HeartbeatEvery = 100*time.Millisecond, 20*time.Millisecond
	})
	d.AutoAck.Store(true)
	if err := d.SpawnTemplate(1, 0, 0, "village", "hall"); err != nil {
		t.Fatal(err)
	}
	heartbeatParked(t, d, 1) // nobody came
	ada := dial(t, h)
	ada.hello(grantCarrying(t, d, carrying(t), 4, 1), 1)
	heartbeatParked(t, d, 0)
	if code := ada.act(1, wire.IntentAction, wire.DirS); code != wire.CodeOK {
		t.Fatalf("opening the door: %s", code)
	}
	ada.send(&wire.Intent{Seq: 2, Kind: wire.IntentPlace, Dir: wire.DirW, Item: wire.ItemSlots{From: 2}})
	waitSnapshot(t, ada, func(*wire.Snapshot) bool { o, ok := ada.v.ObjectAt(3, 1); return ok && o.Item == 6 })
	ha := h.area(1)
	var world weak.Pointer[build.Built]
	var grid weak.Pointer[ecs.Grid]
	took := make(chan struct{})
	ha.a.PostNow(func(a *ecs.Area) { world, grid = weak.Make(ha.eng), weak.Make(a.Grid); close(took) })
	<-took
	ada.c.Close(1000, "bye")
	ada.closed(5 * time.Second)
	heartbeatParked(t, d, 1)
	runtime.GC()
	runtime.GC()
	if world.Value() != nil || grid.Value() != nil {
		t.Fatalf("the parked Area's engine (%v) or grid (%v) is still reachable; want both let go", world.Value() != nil, grid.Value() != nil)
	}
	// An inspection reads it as it is parked, without building it again.
	d.send(&control.Inspect{ID: 9, Items: true})
	in := expect[*control.Inspection](d, 5*time.Second)
	if len(in.Areas) != 1 || in.Areas[0].Items == nil {
		t.Fatalf("inspection of the parked Area: %+v; want its state and items", in.Areas)
	}
	st := in.Areas[0]
	parked, err := blob.Decode(st.Items.Blob, st.Items.W, st.Items.H)
	if err != nil {
		t.Fatal(err)
	}
	if st.Active || st.Bodies != 1 || st.Creatures != 1 || st.Players != 0 || len(parked.Placed) != 1 || parked.Placed[0].Stack.Kind != 6 {
		t.Fatalf("the parked Area inspected: %+v with %d items placed; want frozen, the statue alone, the chest", st, len(parked.Placed))
	}
	for range 10 { // twice ParkAfter of heartbeats: built again, it would count 0 parked for as long
		if hb := expect[*control.Heartbeat](d, 5*time.Second); hb.Parked != 1 {
			t.Fatalf("the inspection built the parked Area again (heartbeat counts %d parked)", hb.Parked)
		}
	}

	bo := dial(t, h)
	bo.hello(d.grant(1, 101, 101, 7, 1, time.Minute), 101)
	waitSnapshot(t, bo, func(*wire.Snapshot) bool {
		door, okDoor := bo.v.ObjectAt(4, 2)
		chest, okChest := bo.v.ObjectAt(3, 1)
		statue := false
		for _, e := range bo.v.Entities {
			statue = statue || (e.Kind == wire.KindCreature && e.X == 8 && e.Y == 1)
		}
		return okDoor && door.State == 1 && okChest && chest.Item == 6 && statue
	})
	heartbeatParked(t, d, 0)
	bo.c.Close(1000, "bye")
	bo.closed(5 * time.Second)
	heartbeatParked(t, d, 1)
}

// TestAnAreaParksOnlyWhatTheDirectorHolds: a fresh Area, built from its
// seed and never persisted, sends its state in a snapshot before it
// parks, and parks once that snapshot is acked: the blob it keeps is one
// the director holds. Until the ack comes it does not park.
func TestAnAreaParksOnlyWhatTheDirectorHolds(t *testing.T) {
	_, d := testHost(t, func(c *Config) {
		c.ParkAfter, c.HeartbeatEvery, c.PersistEvery = 50*time.Millisecond, 20*time.Millisecond, time.Hour
	})
	d.spawnBusy(1, 32, 32) // wanderers from its seed
	s := expect[*control.Snapshot](d, 5*time.Second)
	b, err := blob.Decode(s.Blob, 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	if s.Area != 1 || len(b.Wanderers) == 0 {
		t.Fatalf("snapshot of area %d with %d wanderers; want area 1's wanderers", s.Area, len(b.Wanderers))
	}
	t.Logf("the blob it parks: %d bytes, %d wanderers", len(s.Blob), len(b.Wanderers))
	for range 10 { // half a second: well past ParkAfter
		if hb := expect[*control.Heartbeat](d, 5*time.Second); hb.Parked != 0 {
			t.Fatalf("the Area parked before its snapshot was acked")
		}
	}
	d.send(&control.SnapshotAck{Area: 1, Seq: s.Seq})
	heartbeatParked(t, d, 1)
}

// TestWhatKeepsAnAreaFromParking: a spectator watching a frozen Area keeps
// it whole (it is sent the Area's frames); once the spectator leaves, the
// Area parks. A spectator's grant nobody used does not keep it: the
// spectator's hello builds it again, and it watches the Area as it was.
func TestWhatKeepsAnAreaFromParking(t *testing.T) {
	h, d := testHost(t, func(c *Config) {
		c.ParkAfter, c.HeartbeatEvery = 50*time.Millisecond, 20*time.Millisecond
	})
	d.AutoAck.Store(true)
	d.spawnBusy(1, 32, 32)
	if e := d.spectateGrant(1, "s-1", 7); e != "" {
		t.Fatalf("spectator grant refused: %s", e)
	}
	heartbeatParked(t, d, 1) // the unused grant does not keep it
	sp := dial(t, h)
	if ack := sp.hello("s-1", 7); ack.Area != 1 {
		t.Fatalf("the spectator's hello_ack: %+v", ack)
	}
	// It sees the wanderers as they were parked, and while it watches,
	// the Area stays whole: ten heartbeats are four times ParkAfter.
	waitSnapshot(t, sp, func(*wire.Snapshot) bool { return len(sp.v.Entities) == 4 })
	// Heartbeats sent before the hello was read (the host reads at its
	// ticks) may still say parked: skip to the first that does not.
	for hb := expect[*control.Heartbeat](d, 5*time.Second); hb.Parked != 0; hb = expect[*control.Heartbeat](d, 5*time.Second) {
	}
	for range 10 {
		if hb := expect[*control.Heartbeat](d, 5*time.Second); hb.Parked != 0 {
			t.Fatal("the Area parked under its spectator's eyes")
		}
	}
	sp.c.Close(1000, "bye")
	sp.closed(5 * time.Second)
	heartbeatParked(t, d, 1)
}
