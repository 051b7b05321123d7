// Package wander holds the Wander system: bodies with an ecs.Wander stroll
// at random, within their movement budget, never onto a wall or a body.
package wander

import "github.com/leyworks/ley/ecs"

// System moves wandering bodies.
type System struct {
	filter *ecs.Filter3[ecs.Position, ecs.Mover, ecs.Wander]
}

// Name implements ecs.System.
func (*System) Name() string { return "wander" }

// Init implements ecs.System.
func (s *System) Init(a *ecs.Area) error {
	s.filter = ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Wander]()
	s.filter.Register(&a.World)
	return nil
}

// Idle implements ecs.Idler: the Area has no wanderer.
func (*System) Idle(a *ecs.Area) bool { return a.Wanderers() == 0 }

// Update implements ecs.System.
func (s *System) Update(a *ecs.Area) {
	if a.Wanderers() == 0 {
		return
	}
	g := a.Grid
	q := s.filter.Query(&a.World)
	for q.Next() {
		pos, m, w := q.Get()
		if !m.Ready(a.Tick) {
			continue
		}
		r := w.Next()
		if r%uint32(w.Every) != 0 {
			continue
		}
		d := ecs.Dir((r >> 8) % uint32(ecs.NumDirs))
		if d.Diagonal() && !m.Diagonal {
			d--
		}
		dx, dy := d.Delta()
		x, y := pos.X+dx, pos.Y+dy
		if g.CheckStep(pos.X, pos.Y, x, y) != ecs.OutcomeApplied {
			continue
		}
		a.MoveBody(q.Entity(), pos, x, y)
		m.Stepped(a.Tick)
	}
}
