package movement

import (
	"testing"

	"github.com/leyworks/ley/ecs"
)

// world is a small Area with intake and movement, for rule tests.
type world struct {
	t       *testing.T
	a       *ecs.Area
	answers []ecs.Answer
}

func newWorld(t *testing.T, rules ecs.Rules, w, h int) *world {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: w, H: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Use(&Intake{}, &Movement{}); err != nil {
		t.Fatal(err)
	}
	wd := &world{t: t, a: a}
	a.AfterTick = func(a *ecs.Area) { wd.answers = append(wd.answers, a.Outbox...) }
	return wd
}

func (w *world) player(x, y int32, period uint8) ecs.Entity {
	e, err := w.a.SpawnPlayer(uint64(x*1000+y), x, y)
	if err != nil {
		w.t.Fatal(err)
	}
	m := ecs.NewMap[ecs.Mover](&w.a.World)
	m.Get(e).Period = period
	return e
}

func (w *world) pos(e ecs.Entity) (int32, int32) {
	m := ecs.NewMap[ecs.Position](&w.a.World)
	p := m.Get(e)
	return p.X, p.Y
}

func (w *world) outcome(seq uint32) (ecs.Outcome, int) {
	n, o := 0, ecs.Outcome(255)
	for _, a := range w.answers {
		if a.Seq == seq {
			n++
			o = a.Outcome
		}
	}
	return o, n
}

func step(seq uint32, d ecs.Dir) ecs.Intent {
	return ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: d}
}

func TestStepRules(t *testing.T) {
	noDiag := ecs.RulesFor(ecs.KindVillage)
	noDiag.Diagonal = false
	tests := []struct {
		name  string
		rules ecs.Rules
		setup func(w *world)
		it    ecs.Intent
		want  ecs.Outcome
		x, y  int32 // where the body ends
	}{
		{"step east", ecs.RulesFor(ecs.KindVillage), nil, step(1, ecs.East), ecs.OutcomeApplied, 3, 2},
		{"off the grid", ecs.RulesFor(ecs.KindVillage), func(w *world) {}, ecs.Intent{Seq: 1, Kind: ecs.IntentMoveTo, X: 9, Y: 9}, ecs.OutcomeOutOfBounds, 2, 2},
		{"into a wall", ecs.RulesFor(ecs.KindVillage), func(w *world) { w.a.Grid.Set(ecs.LayerFloor, w.a.Grid.Cell(2, 1), ecs.FloorWall) }, step(1, ecs.North), ecs.OutcomeBlocked, 2, 2},
		{"onto a body", ecs.RulesFor(ecs.KindVillage), func(w *world) { w.player(1, 2, 1) }, step(1, ecs.West), ecs.OutcomeBlocked, 2, 2},
		{"diagonal allowed", ecs.RulesFor(ecs.KindVillage), nil, step(1, ecs.SouthEast), ecs.OutcomeApplied, 3, 3},
		{"diagonal forbidden by rules", noDiag, nil, step(1, ecs.SouthEast), ecs.OutcomeNotAllowed, 2, 2},
		{"unknown direction", ecs.RulesFor(ecs.KindVillage), nil, step(1, 9), ecs.OutcomeInvalid, 2, 2},
		{"unknown kind", ecs.RulesFor(ecs.KindVillage), nil, ecs.Intent{Seq: 1, Kind: 77}, ecs.OutcomeInvalid, 2, 2},
		{"move-to a wall", ecs.RulesFor(ecs.KindVillage), func(w *world) { w.a.Grid.Set(ecs.LayerFloor, w.a.Grid.Cell(4, 4), ecs.FloorWall) }, ecs.Intent{Seq: 1, Kind: ecs.IntentMoveTo, X: 4, Y: 4}, ecs.OutcomeNoPath, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.rules, 5, 5)
			e := w.player(2, 2, 1)
			if tt.setup != nil {
				tt.setup(w)
			}
			w.a.Post(e, tt.it)
			w.a.Step()
			if got, n := w.outcome(tt.it.Seq); got != tt.want || n != 1 {
				t.Fatalf("outcome = %v (%d answers); want %v once", got, n, tt.want)
			}
			if x, y := w.pos(e); x != tt.x || y != tt.y {
				t.Fatalf("body at (%d,%d); want (%d,%d)", x, y, tt.x, tt.y)
			}
		})
	}
}

func TestOneMovePerTickWithinBudget(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 16, 4)
	e := w.player(0, 0, 4) // a step every 4 ticks
	for s := uint32(1); s <= 3; s++ {
		w.a.Post(e, step(s, ecs.East))
	}
	for tick := 1; tick <= 12; tick++ {
		w.a.Step()
		x, _ := w.pos(e)
		// Steps land on ticks 1, 5, 9.
		want := int32((tick + 3) / 4)
		if x != want {
			t.Fatalf("tick %d: x = %d; want %d", tick, x, want)
		}
	}
	for s := uint32(1); s <= 3; s++ {
		if o, n := w.outcome(s); o != ecs.OutcomeApplied || n != 1 {
			t.Fatalf("seq %d: %v x%d", s, o, n)
		}
	}
	players := ecs.NewMap[ecs.Player](&w.a.World)
	if ack := players.Get(e).AckSeq; ack != 3 {
		t.Fatalf("AckSeq = %d; want 3", ack)
	}
}

func TestQueueBoundTooFast(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 32, 4)
	e := w.player(0, 0, 4)
	for s := uint32(1); s <= ecs.QueueLen+3; s++ {
		w.a.Post(e, step(s, ecs.East))
	}
	w.a.Step()
	for s := uint32(ecs.QueueLen + 1); s <= ecs.QueueLen+3; s++ {
		if o, n := w.outcome(s); o != ecs.OutcomeTooFast || n != 1 {
			t.Fatalf("seq %d: %v x%d; want TOO_FAST once", s, o, n)
		}
	}
	if o, _ := w.outcome(1); o != ecs.OutcomeApplied {
		t.Fatalf("seq 1: %v; want APPLIED", o)
	}
}

func TestSupersede(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 16, 16)
	e := w.player(0, 0, 10)
	w.a.Post(e, step(1, ecs.East))                                      // applied on tick 1
	w.a.Post(e, step(2, ecs.East))                                      // waits for budget
	w.a.Post(e, ecs.Intent{Seq: 3, Kind: ecs.IntentMoveTo, X: 9, Y: 9}) // superseded by 4
	w.a.Post(e, ecs.Intent{Seq: 4, Kind: ecs.IntentMoveTo, X: 5, Y: 0})
	w.a.Step()
	w.a.Post(e, ecs.Intent{Seq: 5, Kind: ecs.IntentStop}) // supersedes 2 and 4 while they wait
	w.a.Step()
	want := map[uint32]ecs.Outcome{1: ecs.OutcomeApplied, 2: ecs.OutcomeSuperseded, 3: ecs.OutcomeSuperseded, 4: ecs.OutcomeSuperseded, 5: ecs.OutcomeApplied}
	for s, o := range want {
		if got, n := w.outcome(s); got != o || n != 1 {
			t.Errorf("seq %d: %v x%d; want %v once", s, got, n, o)
		}
	}
	// Answers to queued intents come in seq order.
	var order []uint32
	for _, a := range w.answers {
		order = append(order, a.Seq)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Fatalf("answer order %v", order)
		}
	}
}

func TestMoveToWalksAroundWall(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 12, 12)
	for y := int32(0); y < 10; y++ {
		w.a.Grid.Set(ecs.LayerFloor, w.a.Grid.Cell(5, y), ecs.FloorWall)
	}
	e := w.player(1, 1, 1)
	w.a.Post(e, ecs.Intent{Seq: 1, Kind: ecs.IntentMoveTo, X: 9, Y: 1})
	for i := 0; i < 60; i++ {
		w.a.Step()
	}
	if x, y := w.pos(e); x != 9 || y != 1 {
		t.Fatalf("body at (%d,%d); want (9,1)", x, y)
	}
	if o, n := w.outcome(1); o != ecs.OutcomeApplied || n != 1 {
		t.Fatalf("move-to: %v x%d", o, n)
	}
	if err := w.a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

// TestMoveToNeverCrossesAStop: a walk plans around stop squares (portals)
// on its way, and ends on one only when it is the walk's target.
func TestMoveToNeverCrossesAStop(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 12, 12)
	g := w.a.Grid
	stop := g.Cell(5, 5)
	g.SetStop(stop)
	e := w.player(1, 5, 1)
	crossed := false
	w.a.AfterTick = func(a *ecs.Area) {
		w.answers = append(w.answers, a.Outbox...)
		for _, m := range a.Moves {
			if m.Entity == e && m.To == stop {
				crossed = true
			}
		}
	}
	w.a.Post(e, ecs.Intent{Seq: 1, Kind: ecs.IntentMoveTo, X: 9, Y: 5}) // the straight line crosses (5,5)
	for i := 0; i < 60; i++ {
		w.a.Step()
	}
	if x, y := w.pos(e); x != 9 || y != 5 {
		t.Fatalf("body at (%d,%d); want (9,5)", x, y)
	}
	if crossed {
		t.Fatal("the walk stepped onto the stop square on its way")
	}
	w.a.Post(e, ecs.Intent{Seq: 2, Kind: ecs.IntentMoveTo, X: 5, Y: 5}) // the stop itself as the target
	for i := 0; i < 60; i++ {
		w.a.Step()
	}
	if x, y := w.pos(e); x != 5 || y != 5 {
		t.Fatalf("body at (%d,%d); want on the stop square (5,5), the walk's target", x, y)
	}
}

func TestMoveToAroundABodyInTheWay(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 10, 3)
	e := w.player(0, 1, 1)
	w.player(4, 1, 1) // stands still on the straight route
	w.a.Post(e, ecs.Intent{Seq: 1, Kind: ecs.IntentMoveTo, X: 8, Y: 1})
	for i := 0; i < 40; i++ {
		w.a.Step()
	}
	if x, y := w.pos(e); x != 8 || y != 1 {
		t.Fatalf("body at (%d,%d); want (8,1)", x, y)
	}
}

func TestGoneAndTransit(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 8, 8)
	e := w.player(1, 1, 1)
	f := w.player(3, 3, 1)
	w.a.Despawn(f)
	if err := w.a.SetTransit(e, 9, true); err != nil {
		t.Fatal(err)
	}
	w.a.Post(e, step(1, ecs.East))
	w.a.Post(f, step(2, ecs.East))
	w.a.Step()
	if o, n := w.outcome(1); o != ecs.OutcomePortalInProgress || n != 1 {
		t.Fatalf("transit: %v x%d", o, n)
	}
	if o, n := w.outcome(2); o != ecs.OutcomeEntityGone || n != 1 {
		t.Fatalf("gone: %v x%d", o, n)
	}
}

func TestSteadyTickAllocatesNothing(t *testing.T) {
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 64, 64)
	var ents []ecs.Entity
	for i := int32(0); i < 20; i++ {
		ents = append(ents, w.player(i*3, i*3, 1))
	}
	w.a.AfterTick = nil
	seq := uint32(0)
	round := func() {
		for _, e := range ents {
			seq++
			w.a.Post(e, step(seq, ecs.Dir(seq%8)))
		}
		w.a.Step()
	}
	for i := 0; i < 50; i++ {
		round()
	}
	if allocs := testing.AllocsPerRun(200, round); allocs != 0 {
		t.Fatalf("allocs per tick = %v; want 0", allocs)
	}
}
