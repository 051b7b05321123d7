package statics

import (
	"reflect"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/spatial"
)

func newMap(t *testing.T, w, h int) (*ecs.Area, *Map) {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, W: w, H: h})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := spatial.Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	return a, New(a.Grid, hash)
}

// TestObjectsMarkTheGrid: a closed door blocks bodies and sight, an open
// one neither; a tree blocks both, a sign and a rock bodies only, a portal
// nothing. Toggling a door changes the grid and its cell's version (and
// the Map's generation), and nothing else.
func TestObjectsMarkTheGrid(t *testing.T) {
	a, m := newMap(t, 16, 16)
	g := a.Grid
	objs := []Object{
		{ID: 1, Kind: wire.ObjectDoor, X: 1, Y: 1},
		{ID: 2, Kind: wire.ObjectDoor, X: 2, Y: 1, Open: true},
		{ID: 3, Kind: wire.ObjectTree, X: 3, Y: 1},
		{ID: 4, Kind: wire.ObjectSign, X: 4, Y: 1, Text: "Inn"},
		{ID: 5, Kind: wire.ObjectRock, X: 9, Y: 1},
	}
	for _, o := range objs {
		m.Add(o)
	}
	m.AddPortal(5, 1, 0)
	cases := []struct {
		x           int32
		walk, sight bool
	}{{1, false, false}, {2, true, true}, {3, false, false}, {4, false, true}, {9, false, true}, {5, true, true}}
	for _, c := range cases {
		sq := g.Cell(c.x, 1)
		if got := g.Walkable(sq); got != c.walk {
			t.Errorf("(%d,1): walkable %v; want %v", c.x, got, c.walk)
		}
		if got := g.At(ecs.LayerSight, sq) != 0; got != c.sight {
			t.Errorf("(%d,1): sight %v; want %v", c.x, got, c.sight)
		}
	}
	v0, v1, gen := m.Version(0), m.Version(1), m.Generation()
	if !m.Toggle(g.Cell(1, 1)) || !g.Walkable(g.Cell(1, 1)) || g.At(ecs.LayerSight, g.Cell(1, 1)) == 0 {
		t.Fatal("an opened door still blocks")
	}
	if m.Version(0) != v0+1 || m.Version(1) != v1 || m.Generation() != gen+1 {
		t.Fatalf("versions %d, %d (gen %d) after opening a door in cell 0; want %d, %d (gen %d)", m.Version(0), m.Version(1), m.Generation(), v0+1, v1, gen+1)
	}
	if m.Toggle(g.Cell(3, 1)) {
		t.Fatal("a tree toggled like a door")
	}
}

// TestStaticOfACell: a cell's static message holds its floor as runs, row
// by row over its squares on the grid, and its objects in the order added.
func TestStaticOfACell(t *testing.T) {
	a, m := newMap(t, 12, 10)
	a.Grid.SetWall(a.Grid.Cell(9, 8)) // a wall made after the map was laid, in cell 3
	m.Add(Object{ID: 7, Kind: wire.ObjectDoor, X: 10, Y: 9, Open: true})
	var st wire.Static
	m.Static(3, &st) // x 8..11, y 8..9: 4 x 2 squares
	want := wire.Static{Cell: 3, Version: 1, Floor: []uint32{uint32(wire.FloorGrass), 1, uint32(wire.FloorWall), 1, uint32(wire.FloorGrass), 6},
		Objects: []wire.Object{{ID: 7, Kind: wire.ObjectDoor, X: 10, Y: 9, State: 1}}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("static %+v; want %+v", st, want)
	}
}
