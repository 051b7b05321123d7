//go:build tiny

package build

import (
	"runtime"
	"testing"

	"github.com/leyworks/ley/content"
)

// Bounds on the heap a home Area holds (its World, grid, map and systems)
// with the product's Worlds (arche's 64-bit masks, internal/buildtags),
// empty and with one player in it. When they were set: 36.8 KiB empty
// (53 KiB with 256-bit masks, 47 KiB with a copy of the item catalogue
// per Area) and 45 KiB with a player (94 KiB when each of its
// archetypes reserved room for 64 entities: ecs.Config.Capacity).
const (
	homeBytesBound       = 42 << 10
	playerHomeBytesBound = 56 << 10
)

// TestAHomeHoldsLittle builds 100 home Areas and holds the heap they keep
// to homeBytesBound each (a frozen Area's memory is mostly this), and to
// playerHomeBytesBound with a player in each.
func TestAHomeHoldsLittle(t *testing.T) {
	lib := content.Default()
	if _, err := Area(lib, Spec{ID: 1, Template: "home", TickRate: 20, CellSize: 8}); err != nil {
		t.Fatal(err) // the catalogue is compiled once, not counted
	}
	for _, tc := range []struct {
		name  string
		bound int64
		fill  func(*Built) error
	}{
		{"an empty home", homeBytesBound, func(*Built) error { return nil }},
		{"a home with its player", playerHomeBytesBound, func(b *Built) error {
			sp := b.Template.Map.Spawns[0]
			_, err := b.Area.SpawnPlayer(7, sp.X, sp.Y)
			return err
		}},
	} {
		const n = 100
		keep := make([]*Built, 0, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			b, err := Area(lib, Spec{ID: 2, Template: "home", TickRate: 20, CellSize: 8, Seed: uint64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.fill(b); err != nil {
				t.Fatal(err)
			}
			keep = append(keep, b)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
		t.Logf("%s holds %d B (bound %d)", tc.name, per, tc.bound)
		if per > tc.bound {
			t.Errorf("%s holds %d B of heap; the bound is %d", tc.name, per, tc.bound)
		}
	}
}
