package action

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

type world struct {
	t       *testing.T
	a       *ecs.Area
	m       *statics.Map
	answers map[uint32]ecs.Outcome
	events  []ecs.Event
	seq     uint32
}

func newWorld(t *testing.T, rules ecs.Rules) *world {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: 16, H: 16})
	if err != nil {
		t.Fatal(err)
	}
	h, err := spatial.Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, a: a, m: statics.New(a.Grid, h), answers: map[uint32]ecs.Outcome{}}
	if err := a.Use(append(systems.Default(), &System{Map: w.m})...); err != nil {
		t.Fatal(err)
	}
	a.AfterTick = func(a *ecs.Area) {
		for _, ans := range a.Outbox {
			w.answers[ans.Seq] = ans.Outcome
		}
		w.events = append(w.events, a.Events...)
	}
	return w
}

func (w *world) player(x, y int32) ecs.Entity {
	e, err := w.a.SpawnPlayer(uint64(x*100+y), x, y)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// act has e act towards d and returns the outcome.
func (w *world) act(e ecs.Entity, d ecs.Dir) ecs.Outcome {
	w.seq++
	players := ecs.NewMap[ecs.Player](&w.a.World)
	pl := players.Get(e)
	w.a.Post(e, ecs.Intent{Seq: w.seq, Kind: ecs.IntentAction, Dir: d, Tag: pl.Session})
	for range 20 {
		w.a.Step()
		if o, ok := w.answers[w.seq]; ok {
			return o
		}
	}
	w.t.Fatalf("action %d never answered", w.seq)
	return 0
}

// TestActionOpensDoorsAndHurts: an action on a door opens it (for every
// system: the grid says so), again closes it; on a creature-less square
// with nothing is NOTHING_THERE; on a player it is NOT_ALLOWED without
// PvP, and hurts with it, unless that player is away.
func TestActionOpensDoorsAndHurts(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage))
	w.m.Add(statics.Object{ID: 1, Kind: wire.ObjectDoor, X: 5, Y: 4})
	e := w.player(4, 4)
	door := w.a.Grid.Cell(5, 4)
	if o := w.act(e, ecs.East); o != ecs.OutcomeApplied || !w.a.Grid.Walkable(door) {
		t.Fatalf("opening the door: %v, walkable %v", o, w.a.Grid.Walkable(door))
	}
	if o := w.act(e, ecs.East); o != ecs.OutcomeApplied || w.a.Grid.Walkable(door) {
		t.Fatalf("closing the door: %v, walkable %v", o, w.a.Grid.Walkable(door))
	}
	if o := w.act(e, ecs.North); o != ecs.OutcomeNothingThere {
		t.Fatalf("an action on grass: %v; want NOTHING_THERE", o)
	}
	w.player(4, 5)
	if o := w.act(e, ecs.South); o != ecs.OutcomeNotAllowed {
		t.Fatalf("attacking a player in a village: %v; want NOT_ALLOWED", o)
	}

	arena := ecs.RulesFor(ecs.KindArena)
	arena.PlayerDamage = 10
	pvp := newWorld(t, arena)
	e, other := pvp.player(4, 4), pvp.player(4, 5)
	if o := pvp.act(e, ecs.South); o != ecs.OutcomeApplied {
		t.Fatalf("attacking a player in an arena: %v", o)
	}
	if h, _ := pvp.a.HealthOf(other); h.HP >= h.Max {
		t.Fatalf("the attacked player's health is %d of %d", h.HP, h.Max)
	}
	players := ecs.NewMap[ecs.Player](&pvp.a.World)
	players.Get(other).Away = true
	if o := pvp.act(e, ecs.South); o != ecs.OutcomeNotAllowed {
		t.Fatalf("attacking an away player: %v; want NOT_ALLOWED", o)
	}
	hurt := 0
	for _, ev := range pvp.events {
		if ev.Kind == ecs.EventHurt && ev.Entity == other && ev.By == e {
			hurt++
		}
	}
	if hurt != 1 {
		t.Fatalf("%d hurt events for one hit", hurt)
	}
}

// TestDeadPlayersComeBack: a player whose health runs out is back at a
// free square that is no portal, with full health; an event says so.
func TestDeadPlayersComeBack(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindArena))
	g := w.a.Grid
	g.SetStop(g.Cell(8, 8)) // a portal where the map's middle is
	e := w.player(2, 2)
	h, _ := w.a.HealthOf(e)
	w.a.Hurt(e, h.Max)
	w.a.Step()
	got, _ := w.a.HealthOf(e)
	pos, _ := w.a.PositionOf(e)
	if got.HP != h.Max || g.Cell(pos.X, pos.Y) == g.Cell(8, 8) {
		t.Fatalf("after dying: hp %d of %d at (%d,%d)", got.HP, h.Max, pos.X, pos.Y)
	}
	var respawned bool
	for _, ev := range w.events {
		respawned = respawned || (ev.Kind == ecs.EventRespawned && ev.Entity == e)
	}
	if !respawned {
		t.Fatal("no respawn event")
	}
}
