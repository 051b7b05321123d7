package engine

import (
	"fmt"
	"math"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/movement"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

// Pose is where a body stands and which way it faces.
type Pose struct {
	X, Y   int32
	Facing ecs.Dir
}

// Pending is one intent a client sent and the server has not answered
// yet: what a prediction replays.
type Pending struct {
	Kind ecs.IntentKind
	Dir  ecs.Dir
}

// Replica is an Area as a client knows it: built from what it was told
// (area_info, then the static map of each cell it saw), with the bodies
// the last snapshot showed. On it, [Replica.Predict] replays the
// player's own pending intents through the server's own rules
// (systems/movement: the intake, the grid's step check; systems/action:
// a door opens and closes), so that a client predicts exactly what the
// server will answer, as far as the world it knows stays still. What an
// action does to things (gathering, opening a chest) is not predicted:
// it shows in the next message that tells it.
//
// Its step budget is a step a tick: a replay answers every pending
// intent in order, and only where the body ends matters.
type Replica struct {
	info   wire.AreaInfo
	a      *ecs.Area
	m      *statics.Map
	self   ecs.Entity
	others []ecs.Entity
	pos    ecs.Map[ecs.Position]
	body   ecs.Map[ecs.Body]
	// outcomes are the last Predict's answers, one per pending intent.
	outcomes []ecs.Outcome
	// toggled are the doors a prediction opened or closed, put back after
	// it: the replica's map is what the server told, never a guess.
	toggled []ecs.Cell
	// place's scratch: per square, the generation that wants a body there
	// (gen) or has one (gen+1); the squares wanted; bodies to move.
	want    []uint32
	gen     uint32
	squares []ecs.Cell
	spare   []ecs.Entity
}

// NewReplica builds the Area an area_info describes: its size, cells and
// rules; every square open ground until a static says what it is.
func NewReplica(info *wire.AreaInfo) (*Replica, error) {
	if info.W == 0 || info.H == 0 || info.W > ecs.MaxGridSide || info.H > ecs.MaxGridSide || info.CellSize == 0 || info.TickHz == 0 {
		return nil, fmt.Errorf("engine: area_info of %dx%d squares, cells of %d, %d Hz: not an Area", info.W, info.H, info.CellSize, info.TickHz)
	}
	kind, err := ecs.ParseKind(info.Kind)
	if err != nil {
		kind = ecs.KindVillage
	}
	rules := ecs.Rules{Kind: kind, MaxPlayers: 1 << 20, StepsPerSecond: int(info.TickHz), Diagonal: info.Rules&wire.RuleDiagonal != 0,
		PvP: info.Rules&wire.RulePvP != 0}
	a, err := ecs.NewArea(ecs.Config{ID: ecs.AreaID(info.Area), Rules: rules, W: int(info.W), H: int(info.H), TickRate: int(info.TickHz)})
	if err != nil {
		return nil, err
	}
	hash, err := spatial.Attach(a, int(info.CellSize))
	if err != nil {
		return nil, err
	}
	r := &Replica{info: *info, a: a, m: statics.New(a.Grid, hash),
		pos: ecs.NewMap[ecs.Position](&a.World), body: ecs.NewMap[ecs.Body](&a.World)}
	r.info.Items = append([]wire.ItemKind(nil), info.Items...)
	if err := a.Use(&movement.Intake{}, &movement.Movement{}, &action.System{Map: r.m}); err != nil {
		return nil, err
	}
	a.AfterTick = func(a *ecs.Area) {
		for _, ans := range a.Outbox {
			r.outcomes = append(r.outcomes, ans.Outcome)
		}
		for _, ev := range a.Events {
			if ev.Kind == ecs.EventDoor {
				r.toggled = append(r.toggled, ev.Cell)
			}
		}
	}
	return r, nil
}

// Static lays the map of one cell, as a static message told it.
func (r *Replica) Static(st *wire.Static) error { return r.m.Mirror(st, r.info.Items) }

// Walkable reports whether the map, as far as the replica knows it, lets
// a body stand on (x, y): bodies aside.
func (r *Replica) Walkable(x, y int32) bool {
	g := r.a.Grid
	return g.In(x, y) && g.Walkable(g.Cell(x, y))
}

// Predict returns where the player's body ends, standing at self now,
// once its pending intents are answered in order, with the other bodies
// standing on the squares of others (x, y pairs) and the map as the
// replica knows it. Steps and actions are replayed; move-tos and stops are
// the server's to carry out, and change nothing here.
func (r *Replica) Predict(self Pose, others []int32, pending []Pending) Pose {
	a := r.a
	r.place(self, others)
	if !a.Alive(r.self) {
		return self // no square for the body: nothing to predict on
	}
	r.outcomes = r.outcomes[:0]
	seq := uint32(0)
	for _, p := range pending {
		if p.Kind != ecs.IntentStep && p.Kind != ecs.IntentAction {
			r.outcomes = append(r.outcomes, ecs.OutcomeApplied)
			continue
		}
		seq++
		a.Post(r.self, ecs.Intent{Seq: seq, Kind: p.Kind, Dir: p.Dir})
		a.Step()
	}
	pos := r.pos.Get(r.self)
	pose := Pose{X: pos.X, Y: pos.Y, Facing: r.body.Get(r.self).Facing}
	for i := len(r.toggled) - 1; i >= 0; i-- {
		r.m.Toggle(r.toggled[i])
	}
	r.toggled = r.toggled[:0]
	return pose
}

// Outcomes are the last prediction's answers, one per pending intent, in
// order (OutcomeApplied for an intent it does not replay).
func (r *Replica) Outcomes() []ecs.Outcome { return r.outcomes }

// place puts the bodies on their squares: the player's, and the others'
// (one on the player's own square, or twice on one, is left out). Bodies
// already standing where one is wanted stay, the rest move there, and
// only what is missing is spawned or what is left over despawned: a
// snapshot moves few of them.
func (r *Replica) place(self Pose, others []int32) {
	a := r.a
	g := a.Grid
	if a.Alive(r.self) {
		a.Despawn(r.self)
	}
	r.self = ecs.Entity{}
	if len(r.want) != g.Len() {
		r.want = make([]uint32, g.Len())
	}
	if r.gen >= math.MaxUint32-2 { // a generation past any left in want
		clear(r.want)
		r.gen = 0
	}
	r.gen++
	gen := r.gen
	selfCell := ecs.NoCell
	if g.In(self.X, self.Y) {
		selfCell = g.Cell(self.X, self.Y)
	}
	// want[c] == gen: a body is wanted on c; gen+1 once one stands there.
	r.squares = r.squares[:0]
	for i := 0; i+1 < len(others); i += 2 {
		x, y := others[i], others[i+1]
		if !g.In(x, y) {
			continue
		}
		c := g.Cell(x, y)
		if c == selfCell || r.want[c] == gen {
			continue
		}
		r.want[c] = gen
		r.squares = append(r.squares, c)
	}
	r.gen++ // gen+1 marks a square served
	kept := r.others[:0]
	r.spare = r.spare[:0]
	for _, e := range r.others {
		p := r.pos.Get(e)
		if c := g.Cell(p.X, p.Y); r.want[c] == gen {
			r.want[c] = gen + 1
			kept = append(kept, e)
		} else {
			r.spare = append(r.spare, e)
		}
	}
	for _, c := range r.squares {
		if r.want[c] != gen {
			continue // served by a body already there
		}
		r.want[c] = gen + 1
		x, y := g.XY(c)
		if n := len(r.spare); n > 0 {
			e := r.spare[n-1]
			r.spare = r.spare[:n-1]
			a.MoveBody(e, r.pos.Get(e), x, y)
			kept = append(kept, e)
		} else if e, err := a.SpawnPlayer(0, x, y); err == nil {
			kept = append(kept, e)
		}
	}
	for _, e := range r.spare {
		a.Despawn(e)
	}
	r.others = kept
	if selfCell != ecs.NoCell {
		if e, err := a.SpawnPlayer(1, self.X, self.Y); err == nil {
			r.self = e
			r.body.Get(e).Facing = self.Facing
		}
	}
	a.Moves, a.Events = a.Moves[:0], a.Events[:0] // placing is no tick's doing
}
