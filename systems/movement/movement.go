package movement

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/astar"
)

// Defaults of the Movement system.
const (
	// DefaultSearchesPerTick caps the A* searches one tick runs; move-tos
	// past it wait at the head of their queue for the next tick.
	DefaultSearchesPerTick = 16
	// DefaultSearchBudget caps the squares one A* search expands.
	DefaultSearchBudget = 4096
	// blockedPatience is how many ticks a walking body waits for another
	// body to clear its path before planning around it.
	blockedPatience = 3
)

// Movement applies queued intents: at most one step per body per tick,
// within its budget; and walks bodies with a move-to target along their
// planned path.
type Movement struct {
	// SearchesPerTick and SearchBudget bound the A* work of one tick;
	// zero means the defaults.
	SearchesPerTick int
	SearchBudget    int

	filter   *ecs.Filter4[ecs.Position, ecs.Mover, ecs.Intents, ecs.Path]
	searcher *astar.Searcher
	route    []int32
	searches int
}

// Name implements ecs.System.
func (*Movement) Name() string { return "movement" }

// Init implements ecs.System.
func (s *Movement) Init(a *ecs.Area) error {
	if s.SearchesPerTick == 0 {
		s.SearchesPerTick = DefaultSearchesPerTick
	}
	if s.SearchBudget == 0 {
		s.SearchBudget = DefaultSearchBudget
	}
	s.filter = ecs.NewFilter4[ecs.Position, ecs.Mover, ecs.Intents, ecs.Path]()
	s.filter.Register(&a.World)
	return nil
}

// Idle implements ecs.Idler: nobody has an intent queued or a walk
// planned.
func (*Movement) Idle(a *ecs.Area) bool { return a.MovesPending == 0 }

// Update implements ecs.System.
func (s *Movement) Update(a *ecs.Area) {
	if a.MovesPending == 0 {
		return // nobody has an intent queued or a walk planned
	}
	s.searches = 0
	pending := 0
	q := s.filter.Query(&a.World)
	for q.Next() {
		pos, m, in, path := q.Get()
		e := q.Entity()
		if !s.drain(a, e, pos, m, in, path) && path.Active() && m.Ready(a.Tick) {
			s.walk(a, e, pos, m, path)
		}
		if in.Len() > 0 || path.Active() {
			pending++
		}
	}
	a.MovesPending = pending
}

// drain answers queued intents in order until one moves the body (or
// acts) or the head must wait (budget or search cap). It reports whether
// the body moved or acted.
func (s *Movement) drain(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, in *ecs.Intents, path *ecs.Path) bool {
	for in.Len() > 0 {
		head := in.Peek()
		if head.Superseded {
			it := in.Pop()
			a.Answer(e, &it, ecs.OutcomeSuperseded)
			continue
		}
		switch head.Kind {
		case ecs.IntentStop:
			path.Clear()
			it := in.Pop()
			a.Answer(e, &it, ecs.OutcomeApplied)
		case ecs.IntentMoveTo:
			if s.searches >= s.SearchesPerTick {
				return false
			}
			it := in.Pop()
			a.Answer(e, &it, s.plan(a, pos, path, it.X, it.Y))
		case ecs.IntentStep:
			if !m.Ready(a.Tick) {
				return false
			}
			it := in.Pop()
			dx, dy := it.Dir.Delta()
			o := s.step(a, e, pos, pos.X+dx, pos.Y+dy)
			if o == ecs.OutcomeBlocked {
				a.Face(e, it.Dir) // a step into a wall or a body still turns it
			}
			a.Answer(e, &it, o)
			if o == ecs.OutcomeApplied {
				path.Clear()
				m.Paced(a.Tick)
				return true
			}
		case ecs.IntentAction:
			if !m.Ready(a.Tick) {
				return false
			}
			it := in.Pop()
			a.Face(e, it.Dir)
			o := ecs.OutcomeInvalid
			if a.OnAction != nil {
				o = a.OnAction(a, e, it.Dir)
			}
			a.Answer(e, &it, o)
			if o == ecs.OutcomeApplied {
				path.Clear() // acting ends a walk, as a step does
				m.Stepped(a.Tick)
				return true
			}
		case ecs.IntentPlace, ecs.IntentTake, ecs.IntentCraft, ecs.IntentBuy:
			if !m.Ready(a.Tick) {
				return false
			}
			it := in.Pop()
			o := ecs.OutcomeInvalid
			if a.OnItem != nil {
				o = a.OnItem(a, e, &it)
			}
			a.Answer(e, &it, o)
			if o == ecs.OutcomeApplied {
				path.Clear() // building ends a walk, as acting does
				m.Stepped(a.Tick)
				return true
			}
		case ecs.IntentMoveItem, ecs.IntentUse, ecs.IntentTrade, ecs.IntentOffer, ecs.IntentConfirm,
			ecs.IntentCancel, ecs.IntentPrice: // sorting one's things, reading and bargaining spend no steps
			it := in.Pop()
			o := ecs.OutcomeInvalid
			if a.OnItem != nil {
				o = a.OnItem(a, e, &it)
			}
			a.Answer(e, &it, o)
		default: // the intake lets no other kind in
			it := in.Pop()
			a.Answer(e, &it, ecs.OutcomeInvalid)
		}
	}
	return false
}

// step moves the body onto (x, y) if Grid.CheckStep allows it.
func (s *Movement) step(a *ecs.Area, e ecs.Entity, pos *ecs.Position, x, y int32) ecs.Outcome {
	o := a.Grid.CheckStep(pos.X, pos.Y, x, y)
	if o == ecs.OutcomeApplied {
		a.MoveBody(e, pos, x, y)
	}
	return o
}

// plan sets path towards (x, y) and answers the move-to's outcome.
func (s *Movement) plan(a *ecs.Area, pos *ecs.Position, path *ecs.Path, x, y int32) ecs.Outcome {
	g := a.Grid
	if !g.In(x, y) {
		return ecs.OutcomeOutOfBounds
	}
	to := g.Cell(x, y)
	path.Clear()
	if !g.Walkable(to) {
		return ecs.OutcomeNoPath
	}
	if to == g.Cell(pos.X, pos.Y) {
		return ecs.OutcomeApplied // already there
	}
	path.Target = to
	if !s.replan(a, pos, path, false) {
		path.Clear()
		return ecs.OutcomeNoPath
	}
	return ecs.OutcomeApplied
}

// replan searches a route from pos to path.Target and keeps its first
// PathLen steps; avoidBodies treats other bodies as walls (used when one
// stands in the way).
func (s *Movement) replan(a *ecs.Area, pos *ecs.Position, path *ecs.Path, avoidBodies bool) bool {
	s.searches++
	g := a.Grid
	q := astar.Query{
		Floor:    g.Layer(ecs.LayerFloor),
		From:     int32(g.Cell(pos.X, pos.Y)),
		To:       int32(path.Target),
		Diagonal: a.Rules.Diagonal,
		Budget:   s.SearchBudget,
		Avoid:    g.Stops(), // portals: a walk crosses one only as its target
	}
	if avoidBodies {
		q.Occupant = g.Layer(ecs.LayerOccupant)
	}
	if s.searcher == nil { // first move-to: most Areas (and all frozen ones) never pay for it
		s.searcher = astar.New(int(g.W()), int(g.H()))
		s.route = make([]int32, 0, 64)
	}
	var err error
	s.route, err = s.searcher.Search(q, s.route[:0])
	if err != nil { // ErrNoPath, or ErrBudget: too far to plan within the bound
		return false
	}
	n := min(len(s.route), ecs.PathLen)
	for i := 0; i < n; i++ {
		path.Steps[i] = ecs.Cell(s.route[i])
	}
	path.N, path.Next = uint8(n), 0
	return true
}

// walk takes the next step of the body's planned path.
func (s *Movement) walk(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, path *ecs.Path) {
	g := a.Grid
	if path.Next >= path.N {
		if g.Cell(pos.X, pos.Y) == path.Target {
			path.Clear()
			return
		}
		if s.searches >= s.SearchesPerTick || !s.replan(a, pos, path, false) {
			if s.searches < s.SearchesPerTick {
				path.Clear() // the target became unreachable
			}
			return
		}
	}
	next := path.Steps[path.Next]
	x, y := g.XY(next)
	if s.step(a, e, pos, x, y) == ecs.OutcomeApplied {
		path.Next++
		m.Stepped(a.Tick)
		if next == path.Target {
			path.Clear()
		}
		path.Blocked = 0
		return
	}
	// Something stands in the way: wait a little, then plan around it.
	path.Blocked++
	if path.Blocked < blockedPatience || s.searches >= s.SearchesPerTick {
		return
	}
	path.Blocked = 0
	if !s.replan(a, pos, path, true) {
		path.Clear() // boxed in: give up the walk
	}
}
