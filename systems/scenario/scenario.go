// Package scenario builds populated Areas for the demo, the benchmarks and
// tests: a grid with scattered walls, players and wandering bodies, with the
// standard systems, all from one seed so that runs repeat.
package scenario

import (
	"fmt"
	"math/rand/v2"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems"
)

// Scenario describes an Area to build.
type Scenario struct {
	ID        ecs.AreaID
	Kind      ecs.Kind
	W, H      int
	Players   int
	Wanderers int
	// WallPercent is the share of squares turned into walls (0..60).
	WallPercent int
	Seed        uint64
	TickRate    int
}

// Build returns a frozen Area populated as s says, with systems.Default,
// and the player entities in spawn order.
func Build(s Scenario) (*ecs.Area, []ecs.Entity, error) {
	if s.WallPercent < 0 || s.WallPercent > 60 {
		return nil, nil, fmt.Errorf("scenario: wall percent %d out of 0..60", s.WallPercent)
	}
	if s.Players+s.Wanderers > s.W*s.H/2 {
		return nil, nil, fmt.Errorf("scenario: %d bodies crowd a %dx%d grid", s.Players+s.Wanderers, s.W, s.H)
	}
	if s.Kind == 0 {
		s.Kind = ecs.KindVillage
	}
	rules := ecs.RulesFor(s.Kind)
	rules.MaxPlayers = max(rules.MaxPlayers, s.Players)
	a, err := ecs.NewArea(ecs.Config{ID: s.ID, Rules: rules, W: s.W, H: s.H, TickRate: s.TickRate, Capacity: max(64, s.Players+s.Wanderers)})
	if err != nil {
		return nil, nil, err
	}
	if err := a.Use(systems.Default()...); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x5eed))
	for i := range a.Grid.Len() {
		if rng.IntN(100) < s.WallPercent {
			a.Grid.SetWall(ecs.Cell(i))
		}
	}
	free := func() (int32, int32) {
		for {
			x, y := rng.Int32N(int32(s.W)), rng.Int32N(int32(s.H))
			if a.Grid.Free(a.Grid.Cell(x, y)) {
				return x, y
			}
		}
	}
	players := make([]ecs.Entity, 0, s.Players)
	for i := 0; i < s.Players; i++ {
		x, y := free()
		e, err := a.SpawnPlayer(uint64(i+1), x, y)
		if err != nil {
			return nil, nil, err
		}
		players = append(players, e)
	}
	for i := 0; i < s.Wanderers; i++ {
		x, y := free()
		if _, err := a.SpawnWanderer(x, y, rng.Uint32(), 4, 3); err != nil {
			return nil, nil, err
		}
	}
	return a, players, nil
}
