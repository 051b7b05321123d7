package ecs

import arche "github.com/mlange-42/arche/ecs"

// SpawnCreature puts a creature's body on (x, y): Position, Body, Mover
// (a step at most every period ticks, diagonals as the rules say), Health
// (0 of 0 until SetHealth), Path (none) and Creature c. It fails like SpawnPlayer (off the grid, a wall or taken, or
// while a query runs: spawn from Area.Defer). It allocates only when the
// world grows.
func (a *Area) SpawnCreature(x, y int32, c Creature, period uint8) (Entity, error) {
	w := &a.World
	ids := [6]arche.ID{arche.ComponentID[Position](w), arche.ComponentID[Body](w), arche.ComponentID[Mover](w), arche.ComponentID[Creature](w), arche.ComponentID[Health](w), arche.ComponentID[Path](w)}
	e, err := a.spawnBody(ids[:], x, y)
	if err != nil {
		return e, err
	}
	*a.moverMap.Get(e) = Mover{Period: max(period, 1), Diagonal: a.Rules.Diagonal}
	*(*Creature)(w.Get(e, ids[3])) = c
	a.pathMap.Get(e).Clear()
	a.creatures++
	return e, nil
}
