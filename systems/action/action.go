package action

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/items"
	"github.com/leyworks/ley/systems/statics"
)

// System carries out the actions of bodies and what follows a death. It
// is the Area's action rule (ecs.Area.OnAction: the movement system calls
// it for an action intent when its turn comes, and spends the movement
// budget when it answers OutcomeApplied) and its death rule
// (ecs.Area.OnDeath: run at the barrier after the hit that killed).
//
//   - An action on the square next to a body attacks the body standing
//     there (a creature; a player only where the rules allow PvP, and
//     never one away or crossing a portal), or opens or closes the door
//     there, for every system at once (the Map marks the grid; FloorChanged
//     re-sweeps the flow fields that cross it), or gathers from the tree
//     or rock there, or opens the container there (Items). Anything else
//     is OutcomeNothingThere.
//   - A player whose health runs out comes back at the map's next spawn
//     point (or the middle) on the nearest free square that is no portal,
//     with full health and its walk dropped; any other body leaves the
//     world.
//
// Each emits its event (ecs.EventHurt, EventDied, EventRespawned,
// EventDoor) for the host to tell its players.
type System struct {
	// Map is the Area's static map (its doors and spawn points).
	Map *statics.Map
	// Items, when set, is the Area's item system: an action on a tree or
	// a rock gathers through it.
	Items *items.System
	// FloorChanged, when set, is told of every square whose floor changed
	// (a door): the creature system's flow fields cross it.
	FloorChanged func(ecs.Cell)

	positions ecs.Map[ecs.Position]
	players   ecs.Map[ecs.Player]
	paths     ecs.Map[ecs.Path]
	respawns  uint32
}

// Name implements ecs.System.
func (*System) Name() string { return "action" }

// Init implements ecs.System: it makes the System the Area's action and
// death rule.
func (s *System) Init(a *ecs.Area) error {
	w := &a.World
	s.positions = ecs.NewMap[ecs.Position](w)
	s.players = ecs.NewMap[ecs.Player](w)
	s.paths = ecs.NewMap[ecs.Path](w)
	a.OnAction = s.act
	a.OnDeath = s.died
	return nil
}

// Update implements ecs.System; actions come in through the movement
// system's queues, deaths at barriers: nothing runs per tick.
func (*System) Update(*ecs.Area) {}

// Idle implements ecs.Idler: the system does nothing of its own in a tick.
func (*System) Idle(*ecs.Area) bool { return true }

// act carries out body e's action on the square next to it in direction d.
func (s *System) act(a *ecs.Area, e ecs.Entity, d ecs.Dir) ecs.Outcome {
	pos := s.positions.Get(e)
	if pos == nil {
		return ecs.OutcomeEntityGone
	}
	dx, dy := d.Delta()
	x, y := pos.X+dx, pos.Y+dy
	g := a.Grid
	if !g.In(x, y) {
		return ecs.OutcomeOutOfBounds
	}
	c := g.Cell(x, y)
	if t, ok := a.EntityAt(c); ok {
		return s.attack(a, e, t)
	}
	if s.Items != nil {
		if o, ok := s.Items.Gather(a, e, c); ok {
			return o
		}
		if o, ok := s.Items.Open(a, e, c); ok {
			return o
		}
	}
	if s.Map != nil && s.Map.Toggle(c) {
		open := int32(0)
		if o := s.Map.At(c); o != nil && o.Open {
			open = 1
		}
		if s.FloorChanged != nil {
			s.FloorChanged(c)
		}
		a.Emit(ecs.Event{Kind: ecs.EventDoor, By: e, Amount: open, Cell: c})
		return ecs.OutcomeApplied
	}
	return ecs.OutcomeNothingThere
}

// attack hurts body t with e's attack, if t can be hurt by one.
func (s *System) attack(a *ecs.Area, e, t ecs.Entity) ecs.Outcome {
	if _, ok := a.HealthOf(t); !ok {
		return ecs.OutcomeNothingThere // a wanderer: nothing to hurt
	}
	if pl := s.players.Get(t); pl != nil {
		switch {
		case !a.Rules.PvP:
			return ecs.OutcomeNotAllowed
		case a.InTransit(t), pl.Away:
			return ecs.OutcomeNotAllowed // crossing a portal, or nobody there to fight back
		}
	}
	a.HurtBy(t, e, a.Rules.PlayerDamage)
	return ecs.OutcomeApplied
}

// died handles body e, whose health ran out.
func (s *System) died(a *ecs.Area, e ecs.Entity) {
	if !s.players.Has(e) {
		a.Despawn(e)
		return
	}
	h, _ := a.HealthOf(e)
	pos := s.positions.Get(e)
	g := a.Grid
	x, y := g.W()/2, g.H()/2
	if s.Map != nil {
		if sx, sy, ok := s.Map.SpawnPoint(int(s.respawns)); ok {
			x, y = sx, sy
		}
	}
	s.respawns++
	if fx, fy, ok := NearestFree(g, x, y); ok {
		a.MoveBody(e, pos, fx, fy)
	}
	if p := s.paths.Get(e); p != nil {
		p.Clear()
	}
	a.SetHealth(e, ecs.Health{HP: h.Max, Max: h.Max})
	a.Emit(ecs.Event{Kind: ecs.EventRespawned, Entity: e, Cell: g.Cell(pos.X, pos.Y)})
}

// NearestFree finds the free square nearest (x, y) that is no stop square
// (no portal: a body put down on a portal would be stuck there, since
// only a step onto one crosses), searching rings around it.
func NearestFree(g *ecs.Grid, x, y int32) (int32, int32, bool) {
	stops := g.Stops()
	maxR := max(g.W(), g.H())
	for r := int32(0); r <= maxR; r++ {
		for dy := -r; dy <= r; dy++ {
			for dx := -r; dx <= r; dx++ {
				if max(dx, -dx, dy, -dy) != r {
					continue
				}
				nx, ny := x+dx, y+dy
				if !g.In(nx, ny) {
					continue
				}
				if c := g.Cell(nx, ny); g.Free(c) && (stops == nil || stops[c] == 0) {
					return nx, ny, true
				}
			}
		}
	}
	return 0, 0, false
}
