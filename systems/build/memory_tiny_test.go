//go:build tiny

package build

import (
	"runtime"
	"testing"

	"github.com/leyworks/ley/content"
)

// homeBytesBound bounds the heap a built home Area holds (its World,
// grid, map and systems) with the product's Worlds (arche's 64-bit masks,
// internal/buildtags): 38.3 KiB when this bound was set, 47 KiB with
// 256-bit masks, 53 KiB with a copy of the item catalogue per Area.
const homeBytesBound = 42 << 10

// TestAHomeHoldsLittle builds 100 home Areas and holds the heap they keep
// to homeBytesBound each: a frozen Area's memory is mostly this.
func TestAHomeHoldsLittle(t *testing.T) {
	lib := content.Default()
	if _, err := Area(lib, Spec{ID: 1, Template: "home", TickRate: 20, CellSize: 8}); err != nil {
		t.Fatal(err) // the catalogue is compiled once, not counted
	}
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
		keep = append(keep, b)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a built home holds %d B (bound %d)", per, homeBytesBound)
	if per > homeBytesBound {
		t.Errorf("a built home holds %d B of heap; the bound is %d", per, homeBytesBound)
	}
}
