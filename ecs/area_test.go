package ecs

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func newTestArea(t testing.TB, w, h int) *Area {
	t.Helper()
	a, err := NewArea(Config{ID: 1, Rules: RulesFor(KindArena), W: w, H: h})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSpawnRules(t *testing.T) {
	a := newTestArea(t, 8, 8)
	a.Grid.Set(LayerFloor, a.Grid.Cell(3, 3), FloorWall)
	if _, err := a.SpawnPlayer(1, 2, 2); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		x, y int32
		want error
	}{
		{"taken", 2, 2, ErrSquareTaken},
		{"wall", 3, 3, ErrSquareTaken},
		{"off the grid", 8, 0, ErrOutOfBounds},
	}
	for _, tt := range tests {
		if _, err := a.SpawnPlayer(2, tt.x, tt.y); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v; want %v", tt.name, err, tt.want)
		}
	}
	a.Rules.MaxPlayers = 1
	if _, err := a.SpawnPlayer(3, 5, 5); !errors.Is(err, ErrAreaFull) {
		t.Errorf("over max players: err = %v; want ErrAreaFull", err)
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

// TestGridECSAgreeUnderChurn: random spawns, moves and despawns never make
// the occupant layer and the ECS disagree.
func TestGridECSAgreeUnderChurn(t *testing.T) {
	a := newTestArea(t, 24, 24)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 60; i++ {
		a.Grid.Set(LayerFloor, Cell(rng.IntN(a.Grid.Len())), FloorWall)
	}
	var live []Entity
	for step := 0; step < 20000; step++ {
		switch r := rng.IntN(10); {
		case r < 3:
			e, err := a.SpawnWanderer(rng.Int32N(24), rng.Int32N(24), rng.Uint32(), 1, 1)
			if err == nil {
				live = append(live, e)
			} else if !errors.Is(err, ErrSquareTaken) {
				t.Fatal(err)
			}
		case r < 4 && len(live) > 0:
			i := rng.IntN(len(live))
			a.Despawn(live[i])
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		case len(live) > 0:
			e := live[rng.IntN(len(live))]
			pos := a.posMap.Get(e)
			d := Dir(rng.IntN(int(NumDirs)))
			dx, dy := d.Delta()
			if a.Grid.CheckStep(pos.X, pos.Y, pos.X+dx, pos.Y+dy) == OutcomeApplied {
				a.MoveBody(e, pos, pos.X+dx, pos.Y+dy)
			}
		}
		if step%500 == 0 {
			if err := a.CheckGrid(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

func TestDespawnDuringQueryIsDeferred(t *testing.T) {
	a := newTestArea(t, 8, 8)
	for x := int32(0); x < 4; x++ {
		if _, err := a.SpawnWanderer(x, 0, 1, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	a.Use(systemFunc{"despawn-all", func(a *Area) {
		q := NewFilter1[Wander]().Query(&a.World)
		for q.Next() {
			a.Despawn(q.Entity())
		}
	}})
	a.Step()
	if n := a.World.Stats().Entities.Used; n != 0 {
		t.Fatalf("%d entities left after the barrier; want 0", n)
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

func TestTransitRefusesQueued(t *testing.T) {
	a := newTestArea(t, 8, 8)
	e, _ := a.SpawnPlayer(1, 1, 1)
	q := a.intentsMap.Get(e)
	q.Push(Intent{Seq: 1, Kind: IntentStep})
	q.Push(Intent{Seq: 2, Kind: IntentStep})
	if err := a.SetTransit(e, 77, true); err != nil {
		t.Fatal(err)
	}
	if !a.InTransit(e) || q.Len() != 0 || len(a.Outbox) != 2 {
		t.Fatalf("transit=%v queue=%d outbox=%v", a.InTransit(e), q.Len(), a.Outbox)
	}
	for _, ans := range a.Outbox {
		if ans.Outcome != OutcomePortalInProgress {
			t.Fatalf("answer %+v; want PORTAL_IN_PROGRESS", ans)
		}
	}
	if err := a.SetTransit(e, 0, false); err != nil || a.InTransit(e) {
		t.Fatalf("clear transit: %v, still %v", err, a.InTransit(e))
	}
}

type systemFunc struct {
	name string
	fn   func(*Area)
}

func (s systemFunc) Name() string     { return s.name }
func (s systemFunc) Init(*Area) error { return nil }
func (s systemFunc) Update(a *Area)   { s.fn(a) }

// TestOutcomeNames: every outcome has its name (the wire code's).
func TestOutcomeNames(t *testing.T) {
	for o := OutcomeApplied; o <= OutcomeNothingThere; o++ {
		if s := o.String(); s == "OUTCOME?" || s == "" {
			t.Errorf("outcome %d has no name", o)
		}
	}
	if s := OutcomeNothingThere.String(); s != "NOTHING_THERE" {
		t.Errorf("OutcomeNothingThere is %q", s)
	}
}

// intentsSeen records how many intents each tick took in.
type intentsSeen struct{ n []int }

func (s *intentsSeen) Name() string     { return "intents" }
func (s *intentsSeen) Init(*Area) error { return nil }
func (s *intentsSeen) Update(a *Area)   { s.n = append(s.n, len(a.Intents)) }

// TestIntentsAreTakenInOnce: a tick takes in what was posted since the
// last one, and a tick with nothing posted (which takes no lock) takes in
// nothing, not the last tick's intents again.
func TestIntentsAreTakenInOnce(t *testing.T) {
	a := newTestArea(t, 8, 8)
	seen := &intentsSeen{}
	if err := a.Use(seen); err != nil {
		t.Fatal(err)
	}
	a.Post(Entity{}, Intent{Seq: 1})
	a.Post(Entity{}, Intent{Seq: 2})
	a.Step()
	a.Step()
	a.Post(Entity{}, Intent{Seq: 3})
	a.Step()
	a.Step()
	if want := []int{2, 0, 1, 0}; !slices.Equal(seen.n, want) {
		t.Fatalf("intents taken in per tick: %v; want %v", seen.n, want)
	}
}

// A census counts the bodies of the Areas that joined it, those they had
// when they joined included, through spawns and despawns, until they
// leave.
func TestCensusCountsBodiesOfItsAreas(t *testing.T) {
	var c Census
	a, b := newTestArea(t, 8, 8), newTestArea(t, 8, 8)
	early, err := a.SpawnPlayer(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.JoinCensus(&c)
	b.JoinCensus(&c)
	if got := c.Entities(); got != 1 {
		t.Fatalf("census %d after joining with one body; want 1", got)
	}
	var bodies []Entity
	for i := range 5 {
		e, err := b.SpawnPlayer(uint64(10+i), int32(i), 1)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, e)
	}
	if _, err := a.SpawnWanderer(3, 3, 1, 4, 1); err != nil {
		t.Fatal(err)
	}
	b.Despawn(bodies[0])
	b.Despawn(bodies[0]) // a dead one: nothing changes
	a.Despawn(early)
	if got, want := c.Entities(), 5; got != want {
		t.Fatalf("census %d; want %d", got, want)
	}
	b.LeaveCensus()
	b.LeaveCensus()
	if got, want := c.Entities(), 1; got != want {
		t.Fatalf("census %d after one Area left; want %d, the other's", got, want)
	}
	if _, err := b.SpawnPlayer(20, 6, 6); err != nil {
		t.Fatal(err)
	}
	if got := c.Entities(); got != 1 {
		t.Fatalf("census %d: an Area that left still counts", got)
	}
}
