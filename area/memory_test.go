package area

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"
	"time"
	"weak"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// heapAfterGC is the live heap once everything unreachable is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestUnloadedAreasFreeTheirMemory is the regression test of N2 (issue
// 29): Areas that unloaded must leave nothing of theirs reachable. Four
// 1024x1024 Areas (each some 37 MiB: grid, statics, the A* buffers) are
// spawned through the director's spawn_area among wanderers; in each a
// player walks a planned path (the A* buffers). In half of them the player
// leaves before the close, in the other half it is still bound when the
// close releases it, with a grant still unused. The heartbeat's
// area_bytes must tell what they hold (within a fifth). Then every Area
// closes and unloads. Once collected, no Area may be reachable and the heap must be
// back within 16 MiB of what it was before them; without the fix the
// slots of the clock's scratch slices kept every Area, its grid and its
// searchers alive (the whole 147 MiB stayed).
func TestUnloadedAreasFreeTheirMemory(t *testing.T) {
	const (
		areas = 4
		side  = 1024
		slack = 16 << 20 // what may stay: pools, buffers of the host and the test
	)
	h, d := testHost(t, func(c *Config) { c.ResumeGrace, c.HeartbeatEvery = 0, 50*time.Millisecond })
	d.AutoAck.Store(true)
	base := heapAfterGC()
	var (
		worlds  []weak.Pointer[ecs.Area]
		staying []*client
	)
	for i := uint32(1); i <= areas; i++ {
		d.spawnBusy(i, side, side)
		worlds = append(worlds, weak.Make(h.area(i).a))
		c := dial(t, h)
		c.hello(d.grant(i, uint64(100+i), uint64(i), 2, 2, time.Minute), uint64(i))
		c.send(&wire.Intent{Seq: 1, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 40, Y: 40}})
		waitSnapshot(t, c, func(s *wire.Snapshot) bool { return s.AckSeq >= 1 })
		if i%2 == 0 {
			d.grant(i, uint64(200+i), uint64(10+i), 3, 3, time.Minute) // never used
			staying = append(staying, c)
			continue
		}
		c.c.Close(1000, "bye")
		c.closed(5 * time.Second)
	}
	loaded := heapAfterGC()
	// The heartbeat tells the director what the Areas cost: the estimate
	// must be within a fifth of what they really hold.
	hb := heartbeatWith(t, d, areas)
	if grown := int64(loaded - base); hb.AreaBytes < grown*4/5 || hb.AreaBytes > grown*6/5 {
		t.Errorf("heartbeat area_bytes %d MiB for Areas that hold %d MiB; want within 20%%", hb.AreaBytes>>20, grown>>20)
	}
	t.Logf("heartbeat area_bytes %d MiB for the %d Areas", hb.AreaBytes>>20, areas)
	// Its bodies and active Areas are kept as totals, not counted Area by
	// Area: they must still tell what the Areas hold.
	tally := func() (entities, active int) {
		for i := uint32(1); i <= areas; i++ {
			a := h.area(i).a
			n, _ := a.Counts()
			entities += n
			if a.Mode() == ecs.Active {
				active++
			}
		}
		return entities, active
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		hb := heartbeatWith(t, d, areas)
		entities, active := tally()
		if hb.Entities == entities && hb.Active == active && active == areas/2 && entities > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heartbeat tells %d bodies in %d active Areas; the Areas hold %d in %d (want %d active: those with a player still bound)", hb.Entities, hb.Active, entities, active, areas/2)
		}
	}
	for i := uint32(1); i <= areas; i++ {
		d.send(&control.CloseArea{Area: i, Reason: uint16(wire.CodeAreaClosing)})
	}
	for range areas {
		expect[*control.AreaClosed](d, 10*time.Second)
	}
	for _, c := range staying {
		c.closed(5 * time.Second)
	}
	waitFor(t, "the pool to empty", func() bool { return h.clock.Len() == 0 })
	after := heapAfterGC()
	t.Logf("heap: %d MiB before, %d MiB with %d %dx%d Areas loaded, %d MiB after they unloaded",
		base>>20, loaded>>20, areas, side, side, after>>20)
	if p := os.Getenv("LEY_HEAP_PROFILE"); p != "" { // go tool pprof -inuse_space
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if hb := heartbeatWith(t, d, 0); hb.AreaBytes != 0 || hb.Entities != 0 || hb.Active != 0 {
		t.Errorf("heartbeat area_bytes %d, %d bodies, %d active Areas with no Area live; want none", hb.AreaBytes, hb.Entities, hb.Active)
	}
	for i, w := range worlds {
		if w.Value() != nil {
			t.Errorf("Area %d is still reachable after it unloaded", i+1)
		}
	}
	if after > base+slack {
		t.Fatalf("heap %d MiB after the Areas unloaded; want at most %d MiB (baseline %d MiB + %d MiB)",
			after>>20, (base+slack)>>20, base>>20, slack>>20)
	}
}

// heartbeatWith returns the next heartbeat that counts n live Areas.
func heartbeatWith(t *testing.T, d *director, n int) *control.Heartbeat {
	t.Helper()
	for {
		if hb := expect[*control.Heartbeat](d, 5*time.Second); hb.Areas == n {
			return hb
		}
	}
}

// TestGrantAfterUnloadIsRefused: a grant the link reader indexed for an
// Area just before it unloaded reaches the Area after; it must be refused
// and leave no index entry behind (one would keep the unloaded Area, all
// of it, reachable for ever).
func TestGrantAfterUnloadIsRefused(t *testing.T) {
	h, d := testHost(t, nil)
	d.AutoAck.Store(true)
	d.spawn(1, 16, 16)
	ha := h.area(1)
	d.send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeAreaClosing)})
	expect[*control.AreaClosed](d, 10*time.Second)
	// What Host.dispatch does for a grant whose Area it found a moment
	// before the unload.
	m := &control.Grant{Area: 1, Token: "late", JoinID: 1, TTLMS: 60000, Character: control.Character{Account: 100, Placed: true}}
	h.mu.Lock()
	h.grants[m.Token] = ha
	h.mu.Unlock()
	ha.a.PostNow(func(*ecs.Area) { ha.addGrant(m) })
	ack := expect[*control.GrantAck](d, 5*time.Second)
	if ack.Error == "" {
		t.Fatalf("grant_ack %+v for an unloaded Area; want an error", ack)
	}
	h.mu.Lock()
	n := len(h.grants)
	h.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d grant index entries left for an unloaded Area; want 0", n)
	}
}
