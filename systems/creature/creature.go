package creature

import (
	"fmt"
	"slices"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/sense"
)

// State is a creature's AI state, stored in ecs.Creature.State.
type State uint8

// The states.
const (
	Idle   State = iota // nothing to do this step
	Wander              // a random stroll
	Seek                // towards a sensed emitter
	Follow              // along its target's flow field
	Attack              // next to its target (or sensed emitter)
	Stand               // forbidden to hunt its target: stands still
)

var stateNames = [...]string{"idle", "wander", "seek", "follow", "attack", "stand"}

// String names the state.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Spawner puts creatures near a square.
type Spawner struct {
	// X, Y is the spawner's square; creatures appear on the nearest free
	// squares within Config.SpawnRadius.
	X, Y int32
	Kind uint16
	// Every is the number of ticks between spawns (0 counts as 1).
	Every uint16
	// Burst is the number of creatures per spawn (0 counts as 1).
	Burst uint16
	// MaxAlive caps this spawner's living creatures.
	MaxAlive int
	// Target is the entity its creatures head for; the zero Entity for
	// none (they seek what they sense, or wander).
	Target ecs.Entity
	// Period is its creatures' step period in ticks (0 counts as 1).
	Period uint8
}

// Config describes a creature System.
type Config struct {
	Spawners []Spawner
	// SenseEvery is the number of ticks between a targetless creature's
	// sensing (staggered by entity ID); default 8.
	SenseEvery uint8
	// SenseLOS makes sensing require line of sight.
	SenseLOS bool
	// WanderEvery: a wandering creature tries a step about once every
	// WanderEvery ready ticks; default 3.
	WanderEvery uint8
	// SpawnRadius bounds the search for a free square around a spawner
	// (Chebyshev rings); default 8.
	SpawnRadius int32
	// FieldBudget caps the flow-field sweeping per tick (see
	// flowfield.Config.Budget); 0 is flowfield.DefaultBudget.
	FieldBudget time.Duration
}

// DefaultConfig returns a Config with no spawners and the defaults.
func DefaultConfig() Config {
	return Config{SenseEvery: 8, WanderEvery: 3, SpawnRadius: 8, FieldBudget: flowfield.DefaultBudget}
}

// Systems returns the systems creatures need, in their order: sense,
// creatures. They share the Area's spatial hash (spatial.Attach; cellSize
// is its cell side if the Area has none yet, 0 for the default). Wire them
// after intake, movement and wander. Each Area needs its own instances.
func Systems(cfg Config, cellSize int) []ecs.System {
	sn := &sense.System{CellSize: cellSize}
	return []ecs.System{sn, &System{Config: cfg, Sense: sn}}
}

type target struct {
	e       ecs.Entity
	field   flowfield.ID
	f       *flowfield.Field // this tick's published field, or nil
	x, y    int32
	alive   bool
	allowed bool
	users   int32 // creatures heading for it, counted this tick
}

// System is the ECS system "creatures". One System belongs to one Area.
type System struct {
	Config Config
	// Sense is the Area's sense system (it provides the Sensor).
	Sense *sense.System

	// Attacks counts the ticks creatures spent attacking, Sidesteps the
	// steps taken around a blocking body, Waits the steps given up.
	Attacks, Sidesteps, Waits uint64

	filter    *ecs.Filter3[ecs.Position, ecs.Mover, ecs.Creature]
	posMap    ecs.Map[ecs.Position]
	playerMap ecs.Map[ecs.Player]
	fields    *flowfield.Registry
	sensor    *sense.Sensor
	targets   []target
	goalOf    []int16 // per spawner: its target's index, or -1
	alive     []int32 // per spawner, counted this tick
	pending   []int32 // per spawner: creatures to spawn at the barrier
	flush     func(*ecs.Area)
	seed      uint32
}

// Name implements ecs.System.
func (*System) Name() string { return "creatures" }

// Init implements ecs.System.
func (s *System) Init(a *ecs.Area) error {
	d := DefaultConfig()
	c := &s.Config
	if c.SenseEvery == 0 {
		c.SenseEvery = d.SenseEvery
	}
	if c.WanderEvery == 0 {
		c.WanderEvery = d.WanderEvery
	}
	if c.SpawnRadius == 0 {
		c.SpawnRadius = d.SpawnRadius
	}
	c.Spawners = slices.Clone(c.Spawners) // the caller's slice stays the caller's
	if s.Sense == nil || s.Sense.Sensor() == nil {
		return fmt.Errorf("creature: the sense system must be initialised first")
	}
	s.sensor = s.Sense.Sensor()
	g := a.Grid
	fc := flowfield.DefaultConfig(int(g.W()), int(g.H()))
	fc.Diagonal = a.Rules.Diagonal
	fc.Budget = c.FieldBudget
	var err error
	if s.fields, err = flowfield.NewRegistry(fc, g.Layer(ecs.LayerFloor)); err != nil {
		return err
	}
	s.filter = ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Creature]()
	s.posMap = ecs.NewMap[ecs.Position](&a.World)
	s.playerMap = ecs.NewMap[ecs.Player](&a.World)
	n := len(c.Spawners)
	s.goalOf, s.alive, s.pending = make([]int16, n), make([]int32, n), make([]int32, n)
	for i, sp := range c.Spawners {
		if !g.In(sp.X, sp.Y) {
			return fmt.Errorf("creature: spawner %d at (%d,%d) is off the grid", i, sp.X, sp.Y)
		}
		s.goalOf[i] = -1
		if sp.Target == (ecs.Entity{}) {
			continue
		}
		for j := range s.targets {
			if s.targets[j].e == sp.Target {
				s.goalOf[i] = int16(j)
			}
		}
		if s.goalOf[i] < 0 {
			s.goalOf[i] = int16(len(s.targets))
			s.targets = append(s.targets, target{e: sp.Target, field: flowfield.NoField})
		}
	}
	s.flush = s.spawn
	s.seed = 0x9e3779b9 ^ uint32(a.ID)
	return nil
}

// Fields returns the System's flow-field registry (for stats and tests).
func (s *System) Fields() *flowfield.Registry { return s.fields }

// WallChanged reports that square c's floor changed: the flow fields that
// reach it are swept again.
func (s *System) WallChanged(c ecs.Cell) { s.fields.Invalidate(int32(c)) }

// Update implements ecs.System.
func (s *System) Update(a *ecs.Area) {
	s.updateTargets(a)
	s.fields.Run()
	for i := range s.targets {
		t := &s.targets[i]
		t.f = nil
		if t.field != flowfield.NoField {
			t.f = s.fields.Field(t.field)
		}
		t.users = 0
	}
	for i := range s.alive {
		s.alive[i] = 0
	}
	g := a.Grid
	every := uint64(s.Config.SenseEvery)
	q := s.filter.Query(&a.World)
	for q.Next() {
		pos, m, c := q.Get()
		if int(c.Spawner) < len(s.alive) {
			s.alive[c.Spawner]++
		}
		if c.Goal >= 0 && int(c.Goal) < len(s.targets) {
			s.targets[c.Goal].users++
		}
		if !m.Ready(a.Tick) {
			continue
		}
		e := q.Entity()
		if c.Goal >= 0 && int(c.Goal) < len(s.targets) {
			t := &s.targets[c.Goal]
			if t.alive {
				if !t.allowed {
					c.State = uint8(Stand)
					continue
				}
				if cheb(pos.X, pos.Y, t.x, t.y) <= 1 {
					c.State = uint8(Attack)
					s.Attacks++
					continue
				}
				if f := t.f; f != nil && f.Dist[g.Cell(pos.X, pos.Y)] != flowfield.Unreached {
					c.State = uint8(Follow)
					s.follow(a, e, pos, m, c, f)
					continue
				}
			}
		}
		if (a.Tick+uint64(e.ID()))%every == 0 {
			c.Focus = ecs.NoCell
			if best, ok := s.sensor.Strongest(pos.X, pos.Y, s.Config.SenseLOS); ok {
				c.Focus = best.Square
			}
		}
		if c.Focus != ecs.NoCell {
			fx, fy := g.XY(c.Focus)
			if cheb(pos.X, pos.Y, fx, fy) <= 1 {
				c.State = uint8(Attack)
				s.Attacks++
				continue
			}
			c.State = uint8(Seek)
			s.seek(a, e, pos, m, c, fx, fy)
			continue
		}
		s.wander(a, e, pos, m, c)
	}
	s.settle(a)
}

// updateTargets reads every target's square and the rules' verdict on it,
// and retargets its field (a sweep is queued only on a change of square).
func (s *System) updateTargets(a *ecs.Area) {
	for i := range s.targets {
		t := &s.targets[i]
		t.alive = a.Alive(t.e)
		if !t.alive {
			if t.field != flowfield.NoField {
				s.fields.Release(t.field)
				t.field = flowfield.NoField
			}
			continue
		}
		p := s.posMap.Get(t.e)
		if p == nil {
			t.alive = false
			continue
		}
		t.x, t.y = p.X, p.Y
		t.allowed = a.Rules.CreaturesHuntPlayers || !s.playerMap.Has(t.e)
		if t.field != flowfield.NoField {
			s.fields.Retarget(t.field, int32(a.Grid.Cell(t.x, t.y)))
		}
	}
}

// settle takes or drops fields by this tick's users and queues spawns.
func (s *System) settle(a *ecs.Area) {
	for i := range s.targets {
		t := &s.targets[i]
		switch {
		case t.users > 0 && t.alive && t.allowed && t.field == flowfield.NoField:
			t.field = s.fields.Acquire(uint64(t.e.ID()), int32(a.Grid.Cell(t.x, t.y)))
		case (t.users == 0 || !t.allowed) && t.field != flowfield.NoField:
			s.fields.Release(t.field)
			t.field = flowfield.NoField
		}
	}
	due := false
	for i, sp := range s.Config.Spawners {
		s.pending[i] = 0
		if a.Tick%uint64(max(sp.Every, 1)) != 0 || int(s.alive[i]) >= sp.MaxAlive {
			continue
		}
		s.pending[i] = min(int32(max(sp.Burst, 1)), int32(sp.MaxAlive)-s.alive[i])
		due = true
	}
	if due {
		a.Defer(s.flush) // a method value made once in Init: no allocation
	}
}

// spawn runs at the barrier: it puts the pending creatures on the free
// squares nearest their spawners, ring by ring.
func (s *System) spawn(a *ecs.Area) {
	g := a.Grid
	for i := range s.Config.Spawners {
		sp := &s.Config.Spawners[i]
		left := s.pending[i]
		for r := int32(0); r <= s.Config.SpawnRadius && left > 0; r++ {
			for y := sp.Y - r; y <= sp.Y+r && left > 0; y++ {
				for x := sp.X - r; x <= sp.X+r && left > 0; x++ {
					if max(abs(x-sp.X), abs(y-sp.Y)) != r || !g.In(x, y) || !g.Free(g.Cell(x, y)) {
						continue
					}
					s.seed = xorshift(s.seed)
					c := ecs.Creature{Kind: sp.Kind, Spawner: uint16(i), Goal: s.goalOf[i], Focus: ecs.NoCell, Seed: s.seed | 1}
					if _, err := a.SpawnCreature(x, y, c, sp.Period); err == nil {
						left--
					}
				}
			}
		}
		s.alive[i] += s.pending[i] - left
		s.pending[i] = 0
	}
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

// follow steps along field f: its direction, else the free neighbour with
// the smallest distance below ours (a sidestep), else waits.
func (s *System) follow(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature, f *flowfield.Field) {
	g := a.Grid
	here := int32(g.Cell(pos.X, pos.Y))
	if d := f.Dir[here]; d != flowfield.NoDir && step(a, e, pos, m, c, ecs.Dir(d)) {
		return
	}
	mine := f.Dist[here]
	best, bestD := ecs.NumDirs, mine
	for d := ecs.North; d < ecs.NumDirs; d++ {
		dx, dy := d.Delta()
		x, y := pos.X+dx, pos.Y+dy
		if !g.In(x, y) {
			continue
		}
		if nd := f.Dist[g.Cell(x, y)]; nd < bestD && (m.Diagonal || !d.Diagonal()) && g.CheckStep(pos.X, pos.Y, x, y) == ecs.OutcomeApplied {
			best, bestD = d, nd
		}
	}
	if best != ecs.NumDirs && step(a, e, pos, m, c, best) {
		s.Sidesteps++
		return
	}
	c.Blocked++
	s.Waits++
}

// seek steps greedily towards (fx, fy): the free neighbour closest to it
// (Chebyshev, then squared Euclidean) if closer than here, else waits.
func (s *System) seek(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature, fx, fy int32) {
	g := a.Grid
	bc, be := cheb(pos.X, pos.Y, fx, fy), eucl(pos.X, pos.Y, fx, fy)
	best := ecs.NumDirs
	for d := ecs.North; d < ecs.NumDirs; d++ {
		if d.Diagonal() && !m.Diagonal {
			continue
		}
		dx, dy := d.Delta()
		x, y := pos.X+dx, pos.Y+dy
		nc, ne := cheb(x, y, fx, fy), eucl(x, y, fx, fy)
		if (nc < bc || (nc == bc && ne < be)) && g.CheckStep(pos.X, pos.Y, x, y) == ecs.OutcomeApplied {
			best, bc, be = d, nc, ne
		}
	}
	if best != ecs.NumDirs && step(a, e, pos, m, c, best) {
		return
	}
	c.Blocked++
	s.Waits++
}

// wander tries a random step about once every WanderEvery ready ticks.
func (s *System) wander(a *ecs.Area, e ecs.Entity, pos *ecs.Position, m *ecs.Mover, c *ecs.Creature) {
	c.Seed = xorshift(c.Seed)
	if c.Seed%uint32(s.Config.WanderEvery) != 0 {
		c.State = uint8(Idle)
		return
	}
	c.State = uint8(Wander)
	step(a, e, pos, m, c, ecs.Dir((c.Seed>>8)%uint32(ecs.NumDirs)))
}

func xorshift(x uint32) uint32 {
	if x == 0 {
		x = 0x9e3779b9
	}
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
