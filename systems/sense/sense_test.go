package sense

import (
	"slices"
	"testing"

	"github.com/leyworks/ley/ecs"
)

func TestPerceived(t *testing.T) {
	tests := []struct {
		em   ecs.Emitter
		d    int32
		want int32
	}{
		{ecs.Emitter{Strength: 100, Radius: 10}, 0, 100},
		{ecs.Emitter{Strength: 100, Radius: 10}, 5, 50},
		{ecs.Emitter{Strength: 100, Radius: 10}, 9, 10},
		{ecs.Emitter{Strength: 100, Radius: 10}, 10, 0},
		{ecs.Emitter{Strength: 100, Radius: 10}, 11, 0},
		{ecs.Emitter{Strength: 0, Radius: 10}, 1, 0},
		{ecs.Emitter{Strength: 7, Radius: 0}, 0, 0},
	}
	for _, tt := range tests {
		if got := Perceived(tt.em, tt.d); got != tt.want {
			t.Errorf("Perceived(%+v, %d) got = %d; want %d", tt.em, tt.d, got, tt.want)
		}
	}
}

// arena: a 40x20 Area with a wall column at x = 20 (rows 0..14), three
// emitters and some plain bodies, with the sense and spatial systems.
func arena(t testing.TB) (*ecs.Area, *System, []ecs.Entity) {
	a, err := ecs.NewArea(ecs.Config{ID: 1, W: 40, H: 20})
	if err != nil {
		t.Fatal(err)
	}
	for y := int32(0); y < 15; y++ {
		a.Grid.Set(ecs.LayerFloor, a.Grid.Cell(20, y), ecs.FloorWall)
	}
	em := ecs.NewMap[ecs.Emitter](&a.World)
	place := func(x, y int32, e ecs.Emitter) ecs.Entity {
		b, err := a.SpawnWanderer(x, y, 1, 255, 255)
		if err != nil {
			t.Fatal(err)
		}
		a.World.Add(b, em.ID())
		*em.Get(b) = e
		return b
	}
	es := []ecs.Entity{
		place(5, 5, ecs.Emitter{Strength: 100, Radius: 10}),  // a hoard
		place(25, 5, ecs.Emitter{Strength: 200, Radius: 12}), // behind the wall
		place(8, 8, ecs.Emitter{Strength: 0, Radius: 10}),    // a quiet one
	}
	for i := int32(0); i < 30; i++ { // a crowd that is no emitter
		if _, err := a.SpawnWanderer(i%10+2, 12+i/10, 1, 255, 255); err != nil {
			t.Fatal(err)
		}
	}
	sys := &System{CellSize: 8}
	if err := a.Use(sys); err != nil {
		t.Fatal(err)
	}
	a.Step()
	return a, sys, es
}

func TestSense(t *testing.T) {
	_, sys, es := arena(t)
	s := sys.Sensor()
	var buf []Sensed
	for _, tt := range []struct {
		x, y int32
		los  bool
		want []ecs.Entity
	}{
		{5, 6, false, []ecs.Entity{es[0]}},
		{15, 5, false, []ecs.Entity{es[1]}},        // the hoard is 10 away: zero
		{14, 5, false, []ecs.Entity{es[0], es[1]}}, // hoard 9, far one 11
		{14, 5, true, []ecs.Entity{es[0]}},         // the wall hides the far one
		{24, 16, true, []ecs.Entity{es[1]}},        // on its side of the wall
		{35, 19, false, nil},
	} {
		buf = s.Sense(tt.x, tt.y, tt.los, buf[:0])
		var got []ecs.Entity
		for _, c := range buf {
			got = append(got, c.Entity)
		}
		slices.SortFunc(got, func(a, b ecs.Entity) int { return int(a.ID()) - int(b.ID()) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Sense(%d, %d, los %v) got = %v; want %v", tt.x, tt.y, tt.los, got, tt.want)
		}
	}
	strongest := []struct {
		x, y     int32
		want     ecs.Entity
		strength int32
		nearest  ecs.Entity
	}{
		{5, 6, es[0], 90, es[0]},
		{14, 5, es[1], 16, es[0]}, // far one: 200*(12-11)/12 = 16 beats the hoard's 100*1/10 = 10
		{12, 5, es[0], 30, es[0]}, // hoard 100*3/10 = 30; the far one is 13 away
	}
	for _, tt := range strongest {
		got, ok := s.Strongest(tt.x, tt.y, false)
		if !ok || got.Entity != tt.want || got.Strength != tt.strength {
			t.Errorf("Strongest(%d, %d) got = %v, %v; want %v with %d", tt.x, tt.y, got, ok, tt.want, tt.strength)
		}
		near, ok := s.Nearest(tt.x, tt.y, false)
		if !ok || near.Entity != tt.nearest {
			t.Errorf("Nearest(%d, %d) got = %v, %v; want %v", tt.x, tt.y, near, ok, tt.nearest)
		}
	}
	if got := testing.AllocsPerRun(100, func() {
		s.Strongest(14, 5, true)
		buf = s.Sense(24, 16, true, buf[:0])
	}); got != 0 {
		t.Errorf("sense allocs got = %v; want 0", got)
	}
}
