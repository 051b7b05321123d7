package bench

// The world benchmarks: flow fields, A*, shadowcasting and a whole tick of
// 5,000 creatures. Recorded 2026-11-29 on the shared 2-core VM (Oxide
// Virtual Turin-like, load average about 5 from other work during the
// runs: wall times are inflated and varied up to 2x between runs) with
//
//	go test -run '^$' -bench 'FlowField|Creatures|Shadowcast|AStar' -benchmem -count 3 ./bench/
//
// medians of 3: FlowField 4.3 ms/sweep (another run: 2.5 ms); AStar
// 0.91 ms/search, 3,249 squares expanded per search; Shadowcast 4.45
// µs/fov; Creatures 0.65 ms/tick in the converged steady state, p50 0.38
// ms and p99 2.7 ms over the 1,000 ticks right after the population is
// complete (the p99 is the 2 ms sweep budget plus the creatures), 0.18
// sweeps/tick; all 0 allocs/op.

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/astar"
	"github.com/leyworks/ley/systems/creature"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/fov"
	"github.com/leyworks/ley/systems/spatial"
)

// worldMap returns a w x h floor layer with wallPct percent walls, from seed.
func worldMap(w, h, wallPct int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	floor := make([]int32, w*h)
	for i := range floor {
		floor[i] = ecs.FloorOpen
		if rng.IntN(100) < wallPct {
			floor[i] = ecs.FloorWall
		}
	}
	return floor
}

// openSquares returns n distinct non-wall squares of floor, from seed.
func openSquares(floor []int32, n int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	seen := make([]bool, len(floor))
	out := make([]int32, 0, n)
	for len(out) < n {
		c := rng.Int32N(int32(len(floor)))
		if floor[c] != ecs.FloorWall && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkFlowField: one whole Dijkstra sweep (8 directions) over a
// 256x256 map with 15% walls; one op is one sweep from one of 16 targets.
func BenchmarkFlowField(b *testing.B) {
	const w, h = 256, 256
	floor := worldMap(w, h, 15, 1)
	targets := openSquares(floor, 16, 2)
	f := flowfield.NewField(w, h)
	for _, t := range targets { // warm: the open set at its largest
		_ = f.Sweep(floor, t, true)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = f.Sweep(floor, targets[i%len(targets)], true)
		i++
	}
}

// BenchmarkAStar: 1,000 searches to unique random destinations on a
// 256x256 map with 15% walls, each from a random start in the same
// connected region (so every search finds a path); one op is the 1,000.
func BenchmarkAStar(b *testing.B) {
	const w, h, n = 256, 256, 1000
	floor := worldMap(w, h, 15, 1)
	f := flowfield.NewField(w, h)
	center := openSquares(floor, 1, 3)[0]
	_ = f.Sweep(floor, center, true)
	var reach []int32
	for _, c := range openSquares(floor, 4*n, 4) {
		if f.Reached(c) {
			reach = append(reach, c)
		}
	}
	if len(reach) < 2*n {
		b.Fatalf("only %d reachable squares", len(reach))
	}
	dests, starts := reach[:n], reach[n:2*n]
	s := astar.New(w, h)
	route := make([]int32, 0, 1024)
	var err error
	for i := range dests { // warm: the open set and the route at their largest
		if route, err = s.Search(astar.Query{Floor: floor, From: starts[i], To: dests[i], Diagonal: true}, route[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	expanded := 0
	for b.Loop() {
		for i := range dests {
			route, err = s.Search(astar.Query{Floor: floor, From: starts[i], To: dests[i], Diagonal: true}, route[:0])
			if err != nil {
				b.Fatal(err)
			}
			expanded += s.Expanded
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/search")
	b.ReportMetric(float64(expanded)/float64(b.N)/n, "expanded/search")
}

// BenchmarkShadowcast: symmetric shadowcasting, radius 16, from 1,000
// open squares of a 256x256 map with 15% walls; one op is the 1,000.
func BenchmarkShadowcast(b *testing.B) {
	const w, h, n = 256, 256, 1000
	floor := worldMap(w, h, 15, 1)
	origins := openSquares(floor, n, 5)
	c, err := fov.New(floor, w, h)
	if err != nil {
		b.Fatal(err)
	}
	v := fov.NewView(w * h)
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range origins {
			c.Compute(o%w, o/w, 16, v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/fov")
}

// creatureArea builds the BenchmarkCreatures world: a 256x256 arena with
// 10% walls, 4 wandering players (the creatures' quarry; they do not die)
// and 8 spawners of 625 creatures each over 24x24 squares: wolves (sense
// 24, hunt players and deer), deer (wander) and slimes (slow, sense 8, hunt
// players), leashed to the whole map. Systems: intake, movement, wander,
// creatures, on the Area's spatial hash.
func creatureArea(tb testing.TB) (*ecs.Area, *creature.System) {
	const w, h = 256, 256
	rules := ecs.RulesFor(ecs.KindArena)
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: w, H: h, Capacity: 6000})
	if err != nil {
		tb.Fatal(err)
	}
	for c, f := range worldMap(w, h, 10, 9) {
		if f == ecs.FloorWall {
			a.Grid.SetWall(ecs.Cell(c))
		}
	}
	clearAround := func(x, y, r int32) {
		for yy := max(y-r, 0); yy <= min(y+r, h-1); yy++ {
			for xx := max(x-r, 0); xx <= min(x+r, w-1); xx++ {
				c := a.Grid.Cell(xx, yy)
				a.Grid.Set(ecs.LayerFloor, c, ecs.FloorOpen)
				a.Grid.Set(ecs.LayerSight, c, 1)
			}
		}
	}
	wm := ecs.NewMap[ecs.Wander](&a.World)
	for i, p := range [][2]int32{{128, 128}, {64, 192}, {192, 64}, {200, 200}} {
		clearAround(p[0], p[1], 3)
		e, err := a.SpawnPlayer(uint64(i+1), p[0], p[1])
		if err != nil {
			tb.Fatal(err)
		}
		a.SetHealth(e, ecs.Health{HP: 60000, Max: 60000})
		a.World.Add(e, wm.ID())
		*wm.Get(e) = ecs.Wander{Seed: uint32(i + 11), Every: 2}
	}
	hash, err := spatial.Attach(a, 16)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := creature.Config{
		Kinds: []creature.Kind{
			{HP: 30, Period: 2, Sense: 24, Damage: 6, AttackEvery: 20, HuntsPlayers: true, Prey: []uint16{2}, Wanders: true},
			{HP: 15, Period: 3, Sense: 6, Wanders: true},
			{HP: 20, Period: 4, Sense: 8, Damage: 3, AttackEvery: 30, HuntsPlayers: true},
		},
		FieldBudget: 2 * time.Millisecond,
	}
	for i, p := range [][2]int32{{16, 16}, {216, 16}, {16, 216}, {216, 216}, {116, 16}, {16, 116}, {216, 116}, {116, 216}} {
		clearAround(p[0]+12, p[1]+12, 1)
		cfg.Spawners = append(cfg.Spawners, creature.Spawner{X: p[0], Y: p[1], W: 24, H: 24, Kind: uint16(1 + i%3), Count: 625, Respawn: 100, Leash: 256})
	}
	sys := &creature.System{Config: cfg, Hash: hash}
	if err := a.Use(append(systems.Default(), sys)...); err != nil {
		tb.Fatal(err)
	}
	a.OnDeath = func(a *ecs.Area, e ecs.Entity) { a.Despawn(e) } // deer the wolves kill
	return a, sys
}

func countCreatures(a *ecs.Area) int {
	n := 0
	q := ecs.NewFilter1[ecs.Creature]().Query(&a.World)
	for q.Next() {
		n++
	}
	return n
}

// BenchmarkCreatures: one 256x256 Area, 5,000 creatures from 8 spawners
// hunting 4 moving players (and wolves hunting deer), with sensing through
// the spatial hash and flow fields (sweeps capped at 2 ms a tick); one op
// is one tick. After the population is
// complete, 1,000 ticks are timed one by one for the p99 metric; the
// steady state must allocate nothing.
func BenchmarkCreatures(b *testing.B) {
	a, sys := creatureArea(b)
	a.Step()
	if n := countCreatures(a); n != 5000 {
		b.Fatalf("%d creatures after the first tick; want 5000", n)
	}
	for range 300 {
		a.Step()
	}
	ticks := make([]time.Duration, 1000)
	for i := range ticks {
		t0 := time.Now()
		a.Step()
		ticks[i] = time.Since(t0)
	}
	slices.Sort(ticks)
	sweeps := sys.Fields().Sweeps()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Step()
	}
	b.ReportMetric(float64(ticks[len(ticks)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(ticks[len(ticks)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(sys.Fields().Sweeps()-sweeps)/float64(b.N), "sweeps/tick")
	if err := a.CheckGrid(); err != nil {
		b.Fatal(err)
	}
}

// TestWorldCreaturesSteadyAllocs: the BenchmarkCreatures world's steady
// tick allocates nothing (a short version of the benchmark's check).
func TestWorldCreaturesSteadyAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 5,000-creature world")
	}
	a, _ := creatureArea(t)
	for range 100 {
		a.Step()
	}
	if got := testing.AllocsPerRun(50, a.Step); got != 0 {
		t.Fatalf("allocs per tick got = %v; want 0", got)
	}
	if err := a.CheckGrid(); err != nil {
		t.Fatal(err)
	}
}
