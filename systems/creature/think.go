package creature

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/astar"
	"github.com/leyworks/ley/systems/flowfield"
)

// think runs one ready creature's step of the state machine.
func (s *System) think(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature) {
	k := &s.Config.Kinds[c.Kind-1]
	var sp *Spawner
	if int(c.Spawner) < len(s.Config.Spawners) {
		sp = &s.Config.Spawners[c.Spawner]
	}
	if c.Target != (ecs.Entity{}) && !s.keep(a, k, sp, c.Target) {
		c.Target, c.Goal = ecs.Entity{}, -1
	}
	if c.Target == (ecs.Entity{}) && k.hunts() && (a.Tick+uint64(e.ID()))%uint64(s.Config.SenseEvery) == 0 {
		if t, ok := s.sense(a, e, k, sp, pos); ok {
			c.Target, c.Goal = t, -1
		}
	}
	if c.Target != (ecs.Entity{}) {
		tp := s.posMap.Get(c.Target)
		if adjacent(pos, tp, m.Diagonal) {
			c.State = uint8(Attack)
			a.Face(e, dirTowards(pos.X, pos.Y, tp.X, tp.Y))
			if a.Tick >= c.NextAttack {
				c.NextAttack = a.Tick + uint64(max(k.AttackEvery, 1))
				s.Attacks++
				if a.HurtBy(c.Target, e, k.Damage) {
					s.Kills++
					c.Target, c.Goal = ecs.Entity{}, -1
				}
			}
			return
		}
		c.State = uint8(Chase)
		if s.playerMap.Has(c.Target) {
			if f := s.field(a, c, tp); f != nil && f.Reached(int32(a.Grid.Cell(pos.X, pos.Y))) {
				s.follow(a, e, pos, m, c, f)
				return
			}
		}
		s.goTowards(a, e, pos, m, c, tp.X, tp.Y)
		return
	}
	if sp != nil {
		hx, hy := sp.centre()
		if cheb(pos.X, pos.Y, hx, hy) > sp.Leash {
			c.State = uint8(Return)
			s.goTowards(a, e, pos, m, c, hx, hy)
			return
		}
	}
	if !k.Wanders {
		c.State = uint8(Idle)
		return
	}
	c.State = uint8(Wander)
	c.Seed = xorshift(c.Seed)
	if c.Seed%4 != 0 {
		return // a stroll, not a march: about one ready tick in four
	}
	d := ecs.Dir((c.Seed >> 8) % uint32(ecs.NumDirs))
	dx, dy := d.Delta()
	if sp != nil {
		hx, hy := sp.centre()
		if cheb(pos.X+dx, pos.Y+dy, hx, hy) > sp.Leash {
			return // a stroll stays within the leash
		}
	}
	step(a, e, pos, m, c, d)
}

// keep reports whether creature kind k (of spawner sp) still hunts t.
func (s *System) keep(a *ecs.Area, k *Kind, sp *Spawner, t ecs.Entity) bool {
	if !a.Alive(t) || !s.prey(a, k, t) {
		return false
	}
	tp := s.posMap.Get(t)
	if tp == nil {
		return false
	}
	if sp != nil {
		hx, hy := sp.centre()
		if cheb(tp.X, tp.Y, hx, hy) > sp.Leash {
			return false
		}
	}
	return true
}

// prey reports whether kind k hunts body t now: a player (if the kind and
// the rules allow it) not crossing a portal and not dead, or a creature
// of a kind it preys on.
func (s *System) prey(a *ecs.Area, k *Kind, t ecs.Entity) bool {
	if h, ok := a.HealthOf(t); ok && h.HP == 0 {
		return false // dead: on its way out
	}
	if pl := s.playerMap.Get(t); pl != nil {
		return k.HuntsPlayers && a.Rules.CreaturesHuntPlayers && !s.transit.Has(t) && !pl.Away
	}
	if c := s.critMap.Get(t); c != nil {
		for _, p := range k.Prey {
			if p == c.Kind {
				return true
			}
		}
	}
	return false
}

// sense finds the nearest body that creature e (kind k, spawner sp) hunts
// within its kind's sense radius and its leash, in its line of sight where
// the rules ask for it. Nearest by Chebyshev distance, then by entity ID.
// The cheap tests come first: what the body is (from the table of this
// tick's creatures), its distance, the leash, and line of sight last.
func (s *System) sense(a *ecs.Area, e ecs.Entity, k *Kind, sp *Spawner, pos *ecs.Position) (ecs.Entity, bool) {
	g := a.Grid
	h := s.Hash
	preys := s.preys[e2kind(s, e)-1]
	players := k.HuntsPlayers && a.Rules.CreaturesHuntPlayers
	hx, hy, leash := int32(0), int32(0), int32(-1)
	if sp != nil {
		hx, hy = sp.centre()
		leash = sp.Leash
	}
	s.cells = h.CellsWithin(pos.X, pos.Y, k.Sense, s.cells[:0])
	var best ecs.Entity
	bestD, found := int32(1<<30), false
	for _, hc := range s.cells {
		for id := h.First(hc); id >= 0; id = h.Next(id) {
			t := h.Entity(id)
			if t == e {
				continue
			}
			if int(id) < len(s.seen) && s.seen[id].e == t {
				if pk := s.seen[id].kind; int(pk) >= len(preys) || !preys[pk] {
					continue // a creature it does not hunt
				}
			} else if pl := s.playerMap.Get(t); !players || pl == nil || pl.Away || s.transit.Has(t) {
				continue // not a creature, and not a player it may hunt
			}
			tx, ty := g.XY(h.Square(id))
			d := cheb(pos.X, pos.Y, tx, ty)
			if d > k.Sense || d > bestD || (d == bestD && t.ID() > best.ID()) {
				continue
			}
			if leash >= 0 && cheb(tx, ty, hx, hy) > leash {
				continue
			}
			if hp, ok := a.HealthOf(t); ok && hp.HP == 0 {
				continue // dying
			}
			if a.Rules.SenseLOS && !s.caster.LineOfSight(pos.X, pos.Y, tx, ty) {
				continue
			}
			best, bestD, found = t, d, true
		}
	}
	return best, found
}

// e2kind is creature e's kind as this tick's pass saw it.
func e2kind(s *System, e ecs.Entity) uint16 { return s.seen[e.ID()].kind }

// field returns the flow field towards player target tp that c follows,
// taking a share of it (the target's entry in the table, made on first
// use); nil until its first sweep is done.
func (s *System) field(a *ecs.Area, c *ecs.Creature, tp *ecs.Position) *flowfield.Field {
	sq := int32(a.Grid.Cell(tp.X, tp.Y))
	if c.Goal < 0 || int(c.Goal) >= len(s.targets) || s.targets[c.Goal].e != c.Target {
		c.Goal = -1
		free := -1
		for i := range s.targets {
			if s.targets[i].e == c.Target {
				c.Goal = int16(i)
				break
			}
			if free < 0 && s.targets[i].field == flowfield.NoField {
				free = i
			}
		}
		if c.Goal < 0 {
			if free < 0 {
				s.targets = append(s.targets, target{field: flowfield.NoField})
				free = len(s.targets) - 1
			}
			s.targets[free] = target{e: c.Target, field: s.fields.Acquire(uint64(c.Target.ID()), sq)}
			c.Goal = int16(free)
		}
		s.targets[c.Goal].users++
	}
	t := &s.targets[c.Goal]
	s.fields.Retarget(t.field, sq)
	return s.fields.Field(t.field)
}

// follow steps along field f: its direction, else the free neighbour with
// the smallest distance below ours (a sidestep), else waits.
func (s *System) follow(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature, f *flowfield.Field) {
	g := a.Grid
	here := int32(g.Cell(pos.X, pos.Y))
	if d := f.Dir[here]; d != flowfield.NoDir && step(a, e, pos, m, c, ecs.Dir(d)) {
		return
	}
	best, bestD := ecs.NumDirs, f.Dist[here]
	for d := ecs.North; d < ecs.NumDirs; d++ {
		if d.Diagonal() && !m.Diagonal {
			continue
		}
		dx, dy := d.Delta()
		x, y := pos.X+dx, pos.Y+dy
		if !g.In(x, y) {
			continue
		}
		if nd := f.Dist[g.Cell(x, y)]; nd < bestD && g.CheckStep(pos.X, pos.Y, x, y) == ecs.OutcomeApplied {
			best, bestD = d, nd
		}
	}
	if best != ecs.NumDirs && step(a, e, pos, m, c, best) {
		s.Sidesteps++
		return
	}
	c.Blocked++
}

// goTowards takes one step towards (tx, ty): along the planned path if the
// creature has one to there, else greedily (the free neighbour closest to
// it, if closer than here); after blockedPatience blocked ticks it plans a
// path with A* around what blocks it.
func (s *System) goTowards(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature, tx, ty int32) {
	g := a.Grid
	goal := g.Cell(tx, ty)
	if p := s.pathMap.Get(e); p != nil && p.Active() {
		if p.Target == goal && p.Next < p.N {
			x, y := g.XY(p.Steps[p.Next])
			if cheb(pos.X, pos.Y, x, y) == 1 && step(a, e, pos, m, c, dirTowards(pos.X, pos.Y, x, y)) {
				p.Next++
				if p.Next >= p.N {
					p.Clear()
				}
				return
			}
		}
		p.Clear() // another goal, or the path is stale
	}
	bc, be := cheb(pos.X, pos.Y, tx, ty), eucl(pos.X, pos.Y, tx, ty)
	best := ecs.NumDirs
	for d := ecs.North; d < ecs.NumDirs; d++ {
		if d.Diagonal() && !m.Diagonal {
			continue
		}
		dx, dy := d.Delta()
		x, y := pos.X+dx, pos.Y+dy
		nc, ne := cheb(x, y, tx, ty), eucl(x, y, tx, ty)
		if (nc < bc || (nc == bc && ne < be)) && g.CheckStep(pos.X, pos.Y, x, y) == ecs.OutcomeApplied {
			best, bc, be = d, nc, ne
		}
	}
	if best != ecs.NumDirs && step(a, e, pos, m, c, best) {
		return
	}
	c.Blocked++
	if c.Blocked >= blockedPatience {
		c.Blocked = 0
		s.plan(a, e, pos, goal, m.Diagonal)
	}
}

// plan sets e's path towards goal with A* (bodies in the way count as
// walls, but the goal's own), if one exists within the search budget.
func (s *System) plan(a *ecs.Area, e ecs.Entity, pos *ecs.Position, goal ecs.Cell, diagonal bool) {
	p := s.pathMap.Get(e)
	if p == nil {
		return
	}
	g := a.Grid
	if s.searcher == nil {
		s.searcher = astar.New(int(g.W()), int(g.H()))
		s.route = make([]int32, 0, 64)
	}
	s.Searches++
	var err error
	s.route, err = s.searcher.Search(astar.Query{
		Floor: g.Layer(ecs.LayerFloor), Occupant: g.Layer(ecs.LayerOccupant),
		From: int32(g.Cell(pos.X, pos.Y)), To: int32(goal), Diagonal: diagonal, Budget: s.Config.SearchBudget,
	}, s.route[:0])
	if err != nil || len(s.route) == 0 {
		return
	}
	n := min(len(s.route), ecs.PathLen)
	for i := 0; i < n; i++ {
		p.Steps[i] = ecs.Cell(s.route[i])
	}
	p.Target, p.N, p.Next = goal, uint8(n), 0
}

// step moves the creature one square in direction d if its rules and the
// grid allow it.
func step(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature, d ecs.Dir) bool {
	if d.Diagonal() && !m.Diagonal {
		return false
	}
	dx, dy := d.Delta()
	x, y := pos.X+dx, pos.Y+dy
	if a.Grid.CheckStep(pos.X, pos.Y, x, y) != ecs.OutcomeApplied {
		return false
	}
	a.MoveBody(e, pos, x, y)
	m.Stepped(a.Tick)
	c.Blocked = 0
	return true
}

// adjacent reports whether t stands next to p (diagonally only if the
// rules allow diagonal steps).
func adjacent(p, t *ecs.Position, diagonal bool) bool {
	dx, dy := abs(t.X-p.X), abs(t.Y-p.Y)
	if diagonal {
		return max(dx, dy) == 1
	}
	return dx+dy == 1
}

// dirTowards is the direction of the step from (x0, y0) towards (x1, y1).
func dirTowards(x0, y0, x1, y1 int32) ecs.Dir {
	return ecs.DirOf(x1-x0, y1-y0, ecs.North)
}

// xorshift is a creature's private random step (never 0 from non-zero).
func xorshift(x uint32) uint32 {
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	return x
}

func cheb(x0, y0, x1, y1 int32) int32 { return max(abs(x1-x0), abs(y1-y0)) }

func eucl(x0, y0, x1, y1 int32) int32 {
	dx, dy := x1-x0, y1-y0
	return dx*dx + dy*dy
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
