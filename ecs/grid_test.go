package ecs

import (
	"errors"
	"testing"
)

func TestNewGridBounds(t *testing.T) {
	tests := []struct {
		w, h int
		ok   bool
	}{
		{1, 1, true}, {256, 256, true}, {MaxGridSide, 1, true},
		{0, 5, false}, {5, 0, false}, {-1, 5, false}, {MaxGridSide + 1, 1, false},
	}
	for _, tt := range tests {
		_, err := NewGrid(tt.w, tt.h)
		if got := err == nil; got != tt.ok {
			t.Errorf("NewGrid(%d, %d) err = %v; want ok=%v", tt.w, tt.h, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrGridSize) {
			t.Errorf("NewGrid(%d, %d) err = %v; want ErrGridSize", tt.w, tt.h, err)
		}
	}
}

func TestGridIndexing(t *testing.T) {
	g, err := NewGrid(7, 5)
	if err != nil {
		t.Fatal(err)
	}
	for y := int32(0); y < g.H(); y++ {
		for x := int32(0); x < g.W(); x++ {
			c := g.Cell(x, y)
			if want := Cell(y*7 + x); c != want {
				t.Fatalf("Cell(%d,%d) = %d; want %d", x, y, c, want)
			}
			if gx, gy := g.XY(c); gx != x || gy != y {
				t.Fatalf("XY(%d) = %d,%d; want %d,%d", c, gx, gy, x, y)
			}
		}
	}
	// Layers are stacked: (layer*h + y)*w + x in one slice.
	g.Set(LayerSight, g.Cell(3, 2), 42)
	if got := g.cells[(int(LayerSight)*5+2)*7+3]; got != 42 {
		t.Fatalf("flat index holds %d; want 42", got)
	}
	if got := g.Layer(LayerSight)[g.Cell(3, 2)]; got != 42 {
		t.Fatalf("Layer view holds %d; want 42", got)
	}
	if got := g.At(LayerFloor, 0); got != FloorOpen {
		t.Fatalf("new floor = %d; want open", got)
	}
}

func TestCheckStep(t *testing.T) {
	g, _ := NewGrid(4, 4)
	g.Set(LayerFloor, g.Cell(1, 0), FloorWall)
	g.Set(LayerOccupant, g.Cell(2, 2), 9)
	tests := []struct {
		name           string
		x0, y0, x1, y1 int32
		want           Outcome
	}{
		{"open orthogonal", 0, 1, 0, 2, OutcomeApplied},
		{"off the grid", 0, 0, -1, 0, OutcomeOutOfBounds},
		{"off the far side", 3, 3, 4, 3, OutcomeOutOfBounds},
		{"into a wall", 0, 0, 1, 0, OutcomeBlocked},
		{"onto a body", 1, 2, 2, 2, OutcomeBlocked},
		{"diagonal cutting a wall's corner", 0, 1, 1, 0, OutcomeBlocked},
		{"diagonal past the corner", 0, 0, 1, 1, OutcomeBlocked},
		{"clean diagonal", 2, 1, 3, 0, OutcomeApplied},
	}
	for _, tt := range tests {
		if got := g.CheckStep(tt.x0, tt.y0, tt.x1, tt.y1); got != tt.want {
			t.Errorf("%s: CheckStep = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestDirs(t *testing.T) {
	for d := North; d < NumDirs; d++ {
		dx, dy := d.Delta()
		if max(dx, -dx) > 1 || max(dy, -dy) > 1 || dx == 0 && dy == 0 {
			t.Errorf("%d.Delta() = %d,%d; want a neighbour", d, dx, dy)
		}
		if d.Diagonal() != (dx != 0 && dy != 0) {
			t.Errorf("%d.Diagonal() = %v with delta %d,%d", d, d.Diagonal(), dx, dy)
		}
	}
}

func TestIntentsQueue(t *testing.T) {
	var q Intents
	for i := 1; i <= QueueLen; i++ {
		if !q.Push(Intent{Seq: uint32(i)}) {
			t.Fatalf("push %d refused below the bound", i)
		}
	}
	if q.Push(Intent{Seq: 99}) {
		t.Fatal("push past the bound accepted")
	}
	if got := q.Pop().Seq; got != 1 {
		t.Fatalf("pop = %d; want 1", got)
	}
	q.Push(Intent{Seq: 9}) // wraps round the ring
	var got []uint32
	for q.Len() > 0 {
		got = append(got, q.Pop().Seq)
	}
	want := []uint32{2, 3, 4, 5, 6, 7, 8, 9}
	if len(got) != len(want) {
		t.Fatalf("drained %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("drained %v; want %v", got, want)
		}
	}
}

func TestRules(t *testing.T) {
	for _, k := range []Kind{KindHome, KindVillage, KindArena, KindOffline} {
		r := RulesFor(k)
		if err := r.Validate(); err != nil {
			t.Errorf("RulesFor(%v): %v", k, err)
		}
		if r.Kind != k {
			t.Errorf("RulesFor(%v).Kind = %v", k, r.Kind)
		}
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if RulesFor(KindVillage).CreaturesHuntPlayers || !RulesFor(KindArena).CreaturesHuntPlayers {
		t.Error("only arenas (and offline play) let creatures hunt players")
	}
	if got := (Rules{StepsPerSecond: 5}).StepPeriod(20); got != 4 {
		t.Errorf("StepPeriod = %d; want 4", got)
	}
	if _, err := ParseKind("castle"); err == nil {
		t.Error("ParseKind accepted an unknown kind")
	}
}
