package wander

import (
	"testing"

	"github.com/leyworks/ley/ecs"
)

func TestWanderersMoveAndNeverOverlap(t *testing.T) {
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: ecs.RulesFor(ecs.KindVillage), W: 12, H: 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Use(&System{}); err != nil {
		t.Fatal(err)
	}
	var ents []ecs.Entity
	for i := int32(0); i < 40; i++ {
		e, err := a.SpawnWanderer(i%12, i/12*3, uint32(i+1), 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e)
	}
	pos := ecs.NewMap[ecs.Position](&a.World)
	start := make([]ecs.Position, len(ents))
	for i, e := range ents {
		start[i] = *pos.Get(e)
	}
	for tick := 0; tick < 200; tick++ {
		a.Step()
		if err := a.CheckGrid(); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
	}
	moved := 0
	for i, e := range ents {
		if *pos.Get(e) != start[i] {
			moved++
		}
	}
	if moved < len(ents)/2 {
		t.Fatalf("only %d of %d wanderers moved in 200 ticks", moved, len(ents))
	}
}
