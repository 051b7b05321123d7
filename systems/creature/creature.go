package creature

import (
	"fmt"
	"slices"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/astar"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/fov"
	"github.com/leyworks/ley/systems/spatial"
)

// State is a creature's AI state, stored in ecs.Creature.State.
type State uint8

// The states.
const (
	Idle   State = iota // nothing to do
	Wander              // a random stroll within its leash
	Chase               // towards its target
	Attack              // next to its target, hitting it
	Return              // back towards its spawner, past its leash
)

var stateNames = [...]string{"idle", "wander", "chase", "attack", "return"}

// String names the state.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Kind is what a creature of one kind is.
type Kind struct {
	// HP is its full health.
	HP uint16
	// Period is the ticks between two of its steps (0 counts as 1).
	Period uint8
	// Sense is how far it senses, in squares (Chebyshev).
	Sense int32
	// Damage is the health one attack takes; AttackEvery the ticks between
	// two attacks (0 counts as 1). A kind with no damage never attacks.
	Damage      uint16
	AttackEvery uint16
	// HuntsPlayers: it hunts players where the Area's rules let creatures
	// hunt them (ecs.Rules.CreaturesHuntPlayers).
	HuntsPlayers bool
	// Prey are the kinds (indexes in Config.Kinds, counted from 1) it
	// hunts.
	Prey []uint16
	// Wanders: it strolls when it has nothing to do (else it rests).
	Wanders bool
}

// hunts reports whether the kind hunts anything.
func (k *Kind) hunts() bool { return k.Damage > 0 && (k.HuntsPlayers || len(k.Prey) > 0) }

// Spawner keeps Count creatures of one kind alive in an area of the map.
type Spawner struct {
	// X, Y, W, H is the area its creatures appear in (W and H at least 1).
	X, Y, W, H int32
	// Kind is the creatures' kind, an index in Config.Kinds counted from 1.
	Kind uint16
	// Count is how many it keeps alive.
	Count int
	// Respawn is the ticks from a death to the next creature's appearance.
	Respawn uint32
	// Leash is how far (Chebyshev, in squares) from the area's centre its
	// creatures go: a target beyond it is dropped, and a creature beyond it
	// goes back.
	Leash int32
}

// centre is the spawner's home square.
func (sp *Spawner) centre() (int32, int32) { return sp.X + sp.W/2, sp.Y + sp.H/2 }

// Config describes a creature System.
type Config struct {
	Kinds    []Kind
	Spawners []Spawner
	// SenseEvery is the ticks between two looks around of a creature with
	// no target (staggered by entity ID); default 4.
	SenseEvery uint8
	// FieldBudget caps the flow-field sweeping per tick (see
	// flowfield.Config.Budget); 0 is flowfield.DefaultBudget.
	FieldBudget time.Duration
	// SearchBudget caps the squares one A* search expands; default 2048.
	SearchBudget int
	// FieldReach bounds the players' flow fields to the squares within
	// that walking cost of them (flowfield.Config.Reach): a creature hunts
	// within its leash, so nothing farther needs a field. Zero: twice the
	// longest leash plus the longest sense radius.
	FieldReach int32
}

// blockedPatience is how many ticks in a row a creature's greedy step may
// be blocked before it plans a path around what blocks it.
const blockedPatience = 3

// target is a player being chased, with its shared flow field.
type target struct {
	e     ecs.Entity
	field flowfield.ID
	users int32 // creatures chasing it, counted this tick
}

// System is the ECS system "creatures". One System belongs to one Area.
type System struct {
	Config Config
	// Hash is the Area's spatial hash (spatial.Attach).
	Hash *spatial.Hash

	// Attacks counts the attacks made, Kills the bodies they killed,
	// Spawned the creatures put into the world, Sidesteps the steps taken
	// around a blocking body, Searches the A* searches run.
	Attacks, Kills, Spawned, Sidesteps, Searches uint64

	filter    *ecs.Filter3[ecs.Position, ecs.Mover, ecs.Creature]
	posMap    ecs.Map[ecs.Position]
	playerMap ecs.Map[ecs.Player]
	critMap   ecs.Map[ecs.Creature]
	transit   ecs.Map[ecs.Transit]
	pathMap   ecs.Map[ecs.Path]
	fields    *flowfield.Registry
	caster    *fov.Caster
	searcher  *astar.Searcher
	route     []int32
	targets   []target
	cells     []int32  // scratch: hash cells within a sense radius
	seen      []seenAs // per entity ID: the creature under it as of this tick's pass
	preys     [][]bool // per kind (from 0): per kind (from 1), whether it hunts it
	alive     []int32  // per spawner, counted this tick
	nextSpawn []uint64 // per spawner: the tick its next creature is due (0: none due)
	pending   []int32  // per spawner: creatures to spawn at the barrier
	flush     func(*ecs.Area)
	filled    bool // the spawners were filled once
	seed      uint32
}

// seenAs is what the system last saw under an entity ID: the creature
// (with its kind), so sensing tells creatures apart without a component
// lookup. Stale once the entity is gone; the entity says so.
type seenAs struct {
	e    ecs.Entity
	kind uint16
}

// Name implements ecs.System.
func (*System) Name() string { return "creatures" }

// Init implements ecs.System.
func (s *System) Init(a *ecs.Area) error {
	c := &s.Config
	if c.SenseEvery == 0 {
		c.SenseEvery = 4
	}
	if c.SearchBudget == 0 {
		c.SearchBudget = 2048
	}
	if s.Hash == nil {
		return fmt.Errorf("creature: no spatial hash (spatial.Attach the Area first)")
	}
	c.Kinds = slices.Clone(c.Kinds)
	c.Spawners = slices.Clone(c.Spawners) // the caller's slices stay the caller's
	g := a.Grid
	for i, sp := range c.Spawners {
		if sp.W < 1 || sp.H < 1 || !g.In(sp.X, sp.Y) || !g.In(sp.X+sp.W-1, sp.Y+sp.H-1) {
			return fmt.Errorf("creature: spawner %d's area (%d,%d) %dx%d is not on the grid", i, sp.X, sp.Y, sp.W, sp.H)
		}
		if sp.Kind < 1 || int(sp.Kind) > len(c.Kinds) {
			return fmt.Errorf("creature: spawner %d: kind %d of %d", i, sp.Kind, len(c.Kinds))
		}
	}
	s.preys = make([][]bool, len(c.Kinds))
	for i, k := range c.Kinds {
		s.preys[i] = make([]bool, len(c.Kinds)+1)
		for _, p := range k.Prey {
			if p < 1 || int(p) > len(c.Kinds) {
				return fmt.Errorf("creature: kind %d preys on kind %d of %d", i+1, p, len(c.Kinds))
			}
			s.preys[i][p] = true
		}
	}
	fc := flowfield.DefaultConfig(int(g.W()), int(g.H()))
	fc.Diagonal = a.Rules.Diagonal
	fc.Budget = c.FieldBudget
	if c.FieldReach == 0 {
		for _, sp := range c.Spawners {
			c.FieldReach = max(c.FieldReach, 2*sp.Leash)
		}
		sense := int32(0)
		for _, k := range c.Kinds {
			sense = max(sense, k.Sense)
		}
		c.FieldReach += sense
	}
	fc.Reach = c.FieldReach
	var err error
	if s.fields, err = flowfield.NewRegistry(fc, g.Layer(ecs.LayerFloor)); err != nil {
		return err
	}
	if s.caster, err = fov.New(g.Layer(ecs.LayerSight), int(g.W()), int(g.H())); err != nil {
		return err
	}
	w := &a.World
	s.filter = ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Creature]()
	s.filter.Register(w)
	s.posMap = ecs.NewMap[ecs.Position](w)
	s.playerMap = ecs.NewMap[ecs.Player](w)
	s.critMap = ecs.NewMap[ecs.Creature](w)
	s.transit = ecs.NewMap[ecs.Transit](w)
	s.pathMap = ecs.NewMap[ecs.Path](w)
	n := len(c.Spawners)
	s.alive, s.nextSpawn, s.pending = make([]int32, n), make([]uint64, n), make([]int32, n)
	s.flush = s.spawn
	s.seed = 0x9e3779b9 ^ uint32(a.ID)
	return nil
}

// Fields returns the System's flow-field registry (for stats and tests).
func (s *System) Fields() *flowfield.Registry { return s.fields }

// FloorChanged reports that square c's floor changed (a door opened or
// closed): the flow fields that reach it are swept again.
func (s *System) FloorChanged(c ecs.Cell) { s.fields.Invalidate(int32(c)) }

// Update implements ecs.System.
func (s *System) Update(a *ecs.Area) {
	if len(s.Config.Spawners) == 0 && a.Creatures() == 0 {
		return // an Area without creatures pays nothing
	}
	s.fields.Run()
	for i := range s.targets {
		s.targets[i].users = 0
	}
	clear(s.alive)
	q := s.filter.Query(&a.World)
	for q.Next() {
		pos, m, c := q.Get()
		e := q.Entity()
		for int(e.ID()) >= len(s.seen) {
			s.seen = append(s.seen, seenAs{}) // grows with the world, then never again
		}
		s.seen[e.ID()] = seenAs{e, c.Kind}
		if int(c.Spawner) < len(s.alive) {
			s.alive[c.Spawner]++
		}
		if c.Goal >= 0 && int(c.Goal) < len(s.targets) && s.targets[c.Goal].e == c.Target {
			s.targets[c.Goal].users++
		}
		if !m.Ready(a.Tick) || c.Kind < 1 || int(c.Kind) > len(s.Config.Kinds) {
			continue
		}
		s.think(a, e, pos, m, c)
	}
	s.settle(a)
}

// settle drops the fields no creature chases any more and queues the spawns
// that are due.
func (s *System) settle(a *ecs.Area) {
	for i := range s.targets {
		t := &s.targets[i]
		if t.users == 0 && t.field != flowfield.NoField {
			s.fields.Release(t.field)
			t.field, t.e = flowfield.NoField, ecs.Entity{}
		}
	}
	due := false
	for i := range s.Config.Spawners {
		sp := &s.Config.Spawners[i]
		s.pending[i] = 0
		missing := int32(sp.Count) - s.alive[i]
		switch {
		case missing <= 0:
			s.nextSpawn[i] = 0
		case !s.filled:
			s.pending[i] = missing // the first tick fills every spawner
		case s.nextSpawn[i] == 0:
			s.nextSpawn[i] = a.Tick + uint64(max(sp.Respawn, 1))
		case a.Tick >= s.nextSpawn[i]:
			s.pending[i] = 1
			s.nextSpawn[i] = 0
		}
		due = due || s.pending[i] > 0
	}
	s.filled = true
	if due {
		a.Defer(s.flush) // a method value made once in Init: no allocation
	}
}
