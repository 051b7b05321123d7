package statics_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
	"github.com/leyworks/ley/systems/tell"
)

// TestMirrorIsTheServersMap: a map mirrored from every cell's static
// message (as a client is sent them) marks the grid exactly as the
// server's map does: floors, walls, water, doors open and shut, placed
// items solid or not, on the floor slot or the occupant's; mirrored again
// after changes, it follows them; a static that does not fit is refused.
func TestMirrorIsTheServersMap(t *testing.T) {
	lib := content.Default()
	b, err := build.Area(lib, build.Spec{ID: 1, Template: "village", TickRate: 20, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	g := b.Area.Grid
	kinds := tell.ItemKinds(lib.Items())
	mg, err := ecs.NewGrid(int(g.W()), int(g.H()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := spatial.New(int(g.W()), int(g.H()), 8)
	if err != nil {
		t.Fatal(err)
	}
	mirror := statics.New(mg, h)
	check := func(when string) {
		t.Helper()
		var st wire.Static
		for hc := range b.Hash.Cells() {
			b.Map.Static(int32(hc), &st)
			if err := mirror.Mirror(&st, kinds); err != nil {
				t.Fatalf("%s: cell %d: %v", when, hc, err)
			}
		}
		for _, l := range []ecs.Layer{ecs.LayerFloor, ecs.LayerSight} {
			if !slices.Equal(g.Layer(l), mg.Layer(l)) {
				t.Fatalf("%s: the mirrored grid's layer %d differs from the server's", when, l)
			}
		}
	}
	check("as laid")
	doors := 0
	for _, o := range b.Map.Objects() {
		if o.Kind == wire.ObjectDoor {
			b.Map.Toggle(g.Cell(o.X, o.Y))
			doors++
		}
	}
	if doors == 0 {
		t.Fatal("the village has no door")
	}
	placed := 0
	for _, k := range lib.Items() {
		if k.Placed.Slot == content.SlotNone {
			continue
		}
		for c := range g.Len() {
			x, y := g.XY(ecs.Cell(c))
			floor := k.Placed.Slot == content.SlotFloor
			if b.Map.Free(ecs.Cell(c), floor) && int(x+y)%7 == placed%7 {
				b.Map.Place(statics.Object{Kind: wire.ObjectItem, X: x, Y: y, Item: k.Code, Floor: floor, Solid: k.Placed.Blocks, Opaque: k.Placed.BlocksSight})
				placed++
				break
			}
		}
	}
	if placed < 5 {
		t.Fatalf("only %d items placed", placed)
	}
	check(fmt.Sprintf("%d doors toggled, %d items placed", doors, placed))
	var st wire.Static
	b.Map.Static(0, &st)
	st.Floor = append(st.Floor, 1, 1) // one square more than the cell has
	if err := mirror.Mirror(&st, kinds); err == nil {
		t.Fatal("a static whose floor covers more squares than its cell was taken")
	}
	st.Cell = uint32(b.Hash.Cells())
	if err := mirror.Mirror(&st, kinds); err == nil {
		t.Fatal("a static of a cell past the map was taken")
	}
}

// FuzzMirror: whatever static a client is sent (any floor runs, any
// objects, any cell), Mirror refuses it or lays it, never panics, and
// leaves the grid whole: every floor value a wall or open ground, every
// sight value 0 or 1.
func FuzzMirror(f *testing.F) {
	f.Add(uint32(0), []byte{1, 64}, uint32(1), uint16(wire.ObjectDoor), int32(3), int32(4), uint8(1), uint16(0))
	f.Add(uint32(3), []byte{7, 10, 6, 54}, uint32(9), uint16(wire.ObjectItem), int32(30), int32(2), uint8(0), uint16(2))
	f.Add(uint32(1), []byte{1, 0, 1, 64, 0, 0}, uint32(2), uint16(wire.ObjectPortal), int32(-1), int32(0), uint8(0), uint16(0))
	lib := content.Default()
	kinds := tell.ItemKinds(lib.Items())
	f.Fuzz(func(t *testing.T, cell uint32, runs []byte, id uint32, kind uint16, x, y int32, state uint8, item uint16) {
		g, err := ecs.NewGrid(20, 12)
		if err != nil {
			t.Fatal(err)
		}
		h, err := spatial.New(20, 12, 8)
		if err != nil {
			t.Fatal(err)
		}
		m := statics.New(g, h)
		st := wire.Static{Cell: cell, Version: 2}
		for _, b := range runs {
			st.Floor = append(st.Floor, uint32(b))
		}
		st.Objects = []wire.Object{{ID: id, Kind: kind, X: x, Y: y, State: state, Item: item}, {ID: id + 1, Kind: kind, X: x, Y: y, Item: item}}
		_ = m.Mirror(&st, kinds)
		for i, v := range g.Layer(ecs.LayerFloor) {
			if v != ecs.FloorWall && v != ecs.FloorOpen {
				t.Fatalf("square %d: floor %d", i, v)
			}
		}
		for i, v := range g.Layer(ecs.LayerSight) {
			if v != 0 && v != 1 {
				t.Fatalf("square %d: sight %d", i, v)
			}
		}
	})
}
