package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/build"
)

// The pacing a Sim runs at: the area host's defaults (area.DefaultConfig),
// so that an Area built here is the Area a host builds.
const (
	// TickRate is a Sim's ticks per second.
	TickRate = 20
	// CellSize is the side of a Sim's spatial-hash cells, in squares.
	CellSize = 8
)

// ErrNoBody: an intent or a question names a body the Sim does not have.
var ErrNoBody = errors.New("engine: no such body")

// Sim is one Area of a template, built by systems/build as an area host
// builds it (the same systems, in the same order, on the same grid), and
// driven the way a host drives it: players join, intents are posted, the
// Area steps one tick at a time. It is the server's simulation wherever
// it runs: natively in a test, or in the browser's WebAssembly engine.
//
// A Sim is used by one goroutine at a time.
type Sim struct {
	built   *build.Built
	a       *ecs.Area
	pos     ecs.Map[ecs.Position]
	body    ecs.Map[ecs.Body]
	health  ecs.Map[ecs.Health]
	players ecs.Map[ecs.Player]
	byID    map[uint32]ecs.Entity
	joins   int
	answers []Answer
	events  []ecs.Event
	bodies  [][5]int32 // Bodies' scratch
}

// Answer is the engine's answer to one intent, as the tick that answered
// it gave it.
type Answer struct {
	Body    uint32 // the body's entity id
	Seq     uint32
	Outcome ecs.Outcome
}

// NewSim builds the Area of template (a name of lib's templates) with
// the given seed (a template without a map names its wanderers by it)
// and gives it its first bodies, as a host does for an Area with no
// stored state. blob, when not nil, is a stored Area's state to load
// instead (what [Sim.Save] made).
func NewSim(lib *content.Library, template string, seed uint64, blob []byte) (*Sim, error) {
	b, err := build.Area(lib, build.Spec{ID: 1, Template: template, Seed: seed, TickRate: TickRate, CellSize: CellSize})
	if err != nil {
		return nil, err
	}
	if blob != nil {
		if _, err := b.Load(blob); err != nil {
			return nil, err
		}
	} else {
		b.Populate()
	}
	a := b.Area
	s := &Sim{built: b, a: a, byID: make(map[uint32]ecs.Entity),
		pos: ecs.NewMap[ecs.Position](&a.World), body: ecs.NewMap[ecs.Body](&a.World),
		health: ecs.NewMap[ecs.Health](&a.World), players: ecs.NewMap[ecs.Player](&a.World)}
	a.AfterTick = func(a *ecs.Area) { // the tick's answers and events, which the Area forgets when it ends
		for _, ans := range a.Outbox {
			s.answers = append(s.answers, Answer{Body: ans.Entity.ID(), Seq: ans.Seq, Outcome: ans.Outcome})
		}
		s.events = append(s.events, a.Events...)
	}
	a.Wake()
	return s, nil
}

// Built is the Area and its engine parts (its static map, its item
// system).
func (s *Sim) Built() *build.Built { return s.built }

// Area is the Sim's Area.
func (s *Sim) Area() *ecs.Area { return s.a }

// Join puts a player's body in the Area as a host puts a newcomer's: on
// the map's next spawn point (the middle of the Area without one), or the
// free square nearest it, with the content's starter kit. state, when not
// nil, is a stored character (its items) to load instead of the kit, and
// (x, y) where it stood when placed is true. It returns the body's entity
// id.
func (s *Sim) Join(account uint64, builder bool, state []byte, x, y int32, placed bool) (uint32, error) {
	g := s.a.Grid
	if !placed || !g.In(x, y) || !g.Walkable(g.Cell(x, y)) {
		x, y = g.W()/2, g.H()/2
		if sx, sy, ok := s.built.Map.SpawnPoint(s.joins); ok {
			x, y = sx, sy
			s.joins++
		}
	}
	fx, fy, ok := action.NearestFree(g, x, y)
	if !ok {
		return 0, fmt.Errorf("engine: no free square for a player")
	}
	e, err := s.a.SpawnPlayer(account, fx, fy)
	if err != nil {
		return 0, err
	}
	if state != nil {
		if err := s.built.Items.LoadCharacter(e, state); err != nil {
			s.a.Despawn(e)
			return 0, err
		}
	} else {
		s.built.Items.GiveStarter(s.a, e)
	}
	s.players.Get(e).Builder = builder
	s.byID[e.ID()] = e
	return e.ID(), nil
}

// Entity returns the entity of body id.
func (s *Sim) Entity(id uint32) (ecs.Entity, bool) {
	e, ok := s.byID[id]
	return e, ok && s.a.Alive(e)
}

// Post gives body id an intent for the next tick (its Tag must be the
// body's session mark, 0 unless set). It reports false when the body is
// gone or the Area's inbox is full (a host answers TOO_FAST).
func (s *Sim) Post(id uint32, it ecs.Intent) (bool, error) {
	e, ok := s.Entity(id)
	if !ok {
		return false, fmt.Errorf("%w: %d", ErrNoBody, id)
	}
	return s.a.Post(e, it), nil
}

// Step runs one tick, as the host's clock does.
func (s *Sim) Step() {
	s.answers, s.events = s.answers[:0], s.events[:0]
	s.a.Step()
}

// Events are what the last tick did that players may be told (ecs.Event),
// in order. The slice is reused by the next Step.
func (s *Sim) Events() []ecs.Event { return s.events }

// Answers are the answers the last tick gave, in the order it gave them.
// The slice is reused by the next Step.
func (s *Sim) Answers() []Answer { return s.answers }

// Bodies appends every body of the Area to dst, ordered by entity id, as
// five values each: id, x, y, facing, hp. It is the state a divergence
// check compares and a view draws.
func (s *Sim) Bodies(dst []int32) []int32 {
	s.bodies = s.bodies[:0]
	s.a.EachBody(func(e ecs.Entity, p ecs.Position) bool {
		var facing, hp int32
		if b := s.body.Get(e); b != nil {
			facing = int32(b.Facing)
		}
		if h := s.health.Get(e); h != nil {
			hp = int32(h.HP)
		}
		s.bodies = append(s.bodies, [5]int32{int32(e.ID()), p.X, p.Y, facing, hp})
		return true
	})
	slices.SortFunc(s.bodies, func(a, b [5]int32) int { return cmp.Compare(a[0], b[0]) })
	for _, b := range s.bodies {
		dst = append(dst, b[:]...)
	}
	return dst
}

// Save is the Area's durable state, as a host stores it (systems/build).
func (s *Sim) Save() ([]byte, error) { return s.built.Save() }
