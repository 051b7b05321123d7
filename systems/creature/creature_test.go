package creature

import (
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/wander"
)

// world builds a w x h Area of kind k with scattered walls (none near the
// target or the spawners), a player target at (tx, ty) and the creature
// systems with the given spawners, all but the last free ones aimed at it.
func world(t testing.TB, k ecs.Kind, w, h int, wallPct int, tx, ty int32, spawners []Spawner, free int) (*ecs.Area, *System, ecs.Entity) {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: ecs.RulesFor(k), W: w, H: h, Capacity: 256})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	floor := a.Grid.Layer(ecs.LayerFloor)
	clear := func(x, y int32) bool {
		if cheb(x, y, tx, ty) <= 2 {
			return true
		}
		for _, s := range spawners {
			if cheb(x, y, s.X, s.Y) <= 3 {
				return true
			}
		}
		return false
	}
	for i := range floor {
		x, y := int32(i%w), int32(i/w)
		if !clear(x, y) && rng.IntN(100) < wallPct {
			floor[i] = ecs.FloorWall
		}
	}
	p, err := a.SpawnPlayer(1, tx, ty)
	if err != nil {
		t.Fatal(err)
	}
	for i := range spawners[:len(spawners)-free] {
		spawners[i].Target = p
	}
	cfg := DefaultConfig()
	cfg.Spawners = spawners
	cfg.FieldBudget = -1 // sweep at once: tests want determinism
	sys := Systems(cfg, 8)
	// The standard order: movers (wander here) first, then sense and
	// creatures.
	if err := a.Use(append([]ecs.System{&wander.System{}}, sys...)...); err != nil {
		t.Fatal(err)
	}
	return a, sys[1].(*System), p
}

func creatures(a *ecs.Area) (n int, pos []ecs.Position, states []State) {
	q := ecs.NewFilter2[ecs.Position, ecs.Creature]().Query(&a.World)
	for q.Next() {
		p, c := q.Get()
		n++
		pos = append(pos, *p)
		states = append(states, State(c.State))
	}
	return n, pos, states
}

func TestCreaturesConvergeAndNeverOverlap(t *testing.T) {
	spawners := []Spawner{
		{X: 2, Y: 2, Every: 2, Burst: 2, MaxAlive: 20, Period: 1},
		{X: 37, Y: 37, Every: 3, Burst: 1, MaxAlive: 20, Period: 2},
	}
	a, sys, _ := world(t, ecs.KindArena, 40, 40, 15, 20, 20, spawners, 0)
	for tick := 0; tick < 400; tick++ {
		a.Step()
		if err := a.CheckGrid(); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
	}
	// The spatial hash, kept in step by the Area, agrees with every body.
	h, err := spatial.Attach(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(a); err != nil {
		t.Fatal(err)
	}
	q := ecs.NewFilter2[ecs.Position, ecs.Body]().Query(&a.World)
	bodies := 0
	for q.Next() {
		p, _ := q.Get()
		bodies++
		if e := q.Entity(); !h.Has(e) || h.Square(int32(e.ID())) != a.Grid.Cell(p.X, p.Y) {
			t.Errorf("body %d at (%d,%d): hash has = %v, square %d", e.ID(), p.X, p.Y, h.Has(e), h.Square(int32(e.ID())))
		}
	}
	if h.Len() != bodies {
		t.Errorf("hash holds %d entities; want %d bodies", h.Len(), bodies)
	}
	n, pos, states := creatures(a)
	if n != 40 {
		t.Fatalf("creatures got = %d; want 40", n)
	}
	// Converged: creatures from both spawners reached the target and every
	// other creature is jammed (each legal step that would bring it closer
	// is onto a body). Sidesteps only ever decrease the distance, so queues
	// form along the ways in and distance alone says little.
	f := flowfield.NewField(40, 40)
	if err := f.Sweep(a.Grid.Layer(ecs.LayerFloor), int32(a.Grid.Cell(20, 20)), true); err != nil {
		t.Fatal(err)
	}
	attackers := 0
	for i, p := range pos {
		if states[i] == Attack {
			attackers++
			if cheb(p.X, p.Y, 20, 20) != 1 {
				t.Errorf("creature %d attacks from (%d,%d)", i, p.X, p.Y)
			}
			continue
		}
		here := f.Dist[a.Grid.Cell(p.X, p.Y)]
		for d := ecs.North; d < ecs.NumDirs; d++ {
			dx, dy := d.Delta()
			x, y := p.X+dx, p.Y+dy
			if a.Grid.In(x, y) && f.Dist[a.Grid.Cell(x, y)] < here && a.Grid.CheckStep(p.X, p.Y, x, y) == ecs.OutcomeApplied {
				t.Errorf("creature %d at (%d,%d) in state %v could still step %v closer", i, p.X, p.Y, states[i], d)
			}
		}
	}
	if attackers < 2 {
		t.Errorf("attackers got = %d; want >= 2", attackers)
	}
	if sys.Attacks == 0 {
		t.Errorf("attacks got = 0; want some")
	}
	if got, want := sys.Fields().Sweeps(), uint64(1); got != want {
		t.Errorf("sweeps for a target that never moved got = %d; want %d", got, want)
	}
}

func TestHuntingRules(t *testing.T) {
	tests := []struct {
		kind ecs.Kind
		want State
	}{
		{ecs.KindVillage, Stand}, // villages forbid hunting players
		{ecs.KindArena, Follow},
	}
	for _, tt := range tests {
		spawners := []Spawner{{X: 1, Y: 1, Every: 1, Burst: 1, MaxAlive: 1, Period: 1}}
		a, sys, _ := world(t, tt.kind, 30, 30, 0, 28, 28, spawners, 0)
		for range 5 {
			a.Step()
		}
		_, pos, states := creatures(a)
		if len(states) != 1 || states[0] != tt.want {
			t.Errorf("%v: states got = %v; want [%v]", tt.kind, states, tt.want)
		}
		if tt.want == Stand && (pos[0] != ecs.Position{X: 1, Y: 1} || sys.Fields().Sweeps() != 0) {
			t.Errorf("%v: a standing creature moved to %v or swept %d fields", tt.kind, pos[0], sys.Fields().Sweeps())
		}
	}
}

func TestSweepOnlyOnTargetCellChange(t *testing.T) {
	spawners := []Spawner{{X: 1, Y: 1, Every: 1, Burst: 4, MaxAlive: 8, Period: 4}}
	a, sys, p := world(t, ecs.KindArena, 48, 48, 0, 40, 40, spawners, 0)
	pm := ecs.NewMap[ecs.Position](&a.World)
	for range 3 {
		a.Step() // spawn, count users, acquire, sweep
	}
	base := sys.Fields().Sweeps()
	moves := []struct {
		dx     int32
		sweeps uint64
	}{{0, 0}, {1, 1}, {0, 1}, {0, 1}, {-1, 2}, {1, 3}}
	for i, mv := range moves {
		if mv.dx != 0 {
			pos := pm.Get(p)
			a.MoveBody(p, pos, pos.X+mv.dx, pos.Y)
		}
		a.Step()
		if got := sys.Fields().Sweeps() - base; got != mv.sweeps {
			t.Fatalf("after move %d: sweeps got = %d; want %d", i, got, mv.sweeps)
		}
	}
}

func TestSeekSensedEmitter(t *testing.T) {
	a, err := ecs.NewArea(ecs.Config{ID: 1, W: 30, H: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A hoard: a body with an Emitter, found only by sensing.
	hoard, err := a.SpawnWanderer(25, 5, 1, 255, 255)
	if err != nil {
		t.Fatal(err)
	}
	em := ecs.NewMap[ecs.Emitter](&a.World)
	a.World.Add(hoard, em.ID())
	*em.Get(hoard) = ecs.Emitter{Strength: 100, Radius: 30}
	cfg := DefaultConfig()
	cfg.Spawners = []Spawner{{X: 2, Y: 5, Every: 1, Burst: 1, MaxAlive: 1, Period: 1}}
	if err := a.Use(Systems(cfg, 0)...); err != nil {
		t.Fatal(err)
	}
	for range 60 {
		a.Step()
	}
	_, pos, states := creatures(a)
	if len(pos) != 1 || cheb(pos[0].X, pos[0].Y, 25, 5) > 1 || states[0] != Attack {
		t.Fatalf("creature at %v in %v; want next to the hoard at (25,5), attacking", pos, states)
	}
}

func TestSteadyStateTickAllocs(t *testing.T) {
	spawners := []Spawner{
		{X: 2, Y: 2, Every: 1, Burst: 4, MaxAlive: 60, Period: 2},
		{X: 60, Y: 60, Every: 1, Burst: 4, MaxAlive: 60, Period: 3},
		{X: 2, Y: 60, Every: 1, Burst: 4, MaxAlive: 30, Period: 2},
	}
	a, sys, p := world(t, ecs.KindArena, 64, 64, 10, 32, 32, spawners, 1) // the last: seekers and wanderers
	// The target wanders, so fields are swept again as it moves.
	wm := ecs.NewMap[ecs.Wander](&a.World)
	a.World.Add(p, wm.ID())
	*wm.Get(p) = ecs.Wander{Seed: 7, Every: 2}
	for range 300 {
		a.Step()
	}
	n, _, states := creatures(a)
	seen := make(map[State]int)
	for _, st := range states {
		seen[st]++
	}
	if n != 150 || seen[Follow]+seen[Attack] == 0 || seen[Seek]+seen[Wander]+seen[Idle] == 0 {
		t.Fatalf("%d creatures in states %v; want 150, some following and some not", n, seen)
	}
	// The crowd soon hems the target in; a reported floor change next to it
	// makes every measured tick sweep its field again all the same.
	pm := ecs.NewMap[ecs.Position](&a.World)
	sweeps := sys.Fields().Sweeps()
	tick := func() {
		pos := pm.Get(p)
		sys.WallChanged(a.Grid.Cell(pos.X, pos.Y))
		a.Step()
	}
	if got := testing.AllocsPerRun(200, tick); got != 0 {
		t.Fatalf("allocs per steady-state tick got = %v; want 0", got)
	}
	if got := sys.Fields().Sweeps() - sweeps; got < 200 {
		t.Fatalf("sweeps during the measured ticks got = %d; want >= 200", got)
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}

func TestSenseLineOfSight(t *testing.T) {
	tests := []struct {
		los  bool
		want State // behind a full wall the hoard is sensed only without sight
	}{
		{false, Seek},
		{true, Wander},
	}
	for _, tt := range tests {
		a, err := ecs.NewArea(ecs.Config{ID: 1, W: 30, H: 10})
		if err != nil {
			t.Fatal(err)
		}
		for y := int32(0); y < 10; y++ {
			a.Grid.Set(ecs.LayerFloor, a.Grid.Cell(15, y), ecs.FloorWall)
		}
		hoard, _ := a.SpawnWanderer(25, 5, 1, 255, 255)
		em := ecs.NewMap[ecs.Emitter](&a.World)
		a.World.Add(hoard, em.ID())
		*em.Get(hoard) = ecs.Emitter{Strength: 100, Radius: 30}
		cfg := DefaultConfig()
		cfg.SenseLOS = tt.los
		cfg.WanderEvery = 1
		cfg.Spawners = []Spawner{{X: 10, Y: 5, Every: 1, Burst: 1, MaxAlive: 1, Period: 1}}
		if err := a.Use(Systems(cfg, 0)...); err != nil {
			t.Fatal(err)
		}
		seen := make(map[State]bool)
		for range 40 {
			a.Step()
			_, _, states := creatures(a)
			for _, s := range states {
				seen[s] = true
			}
		}
		if !seen[tt.want] || (tt.los && seen[Seek]) {
			t.Errorf("los %v: states seen %v; want %v (and no seek with sight required)", tt.los, seen, tt.want)
		}
	}
}
