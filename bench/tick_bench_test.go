package bench

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/scenario"
)

// BenchmarkAreaTick: one 256x256 village Area, 100 players each sending a
// step intent every tick (their queues stay busy) and 1,000 wandering
// bodies; one op is one tick. Steady state must allocate nothing.
func BenchmarkAreaTick(b *testing.B) {
	a, players, err := scenario.Build(scenario.Scenario{ID: 1, W: 256, H: 256, Players: 100, Wanderers: 1000, WallPercent: 10, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	seq := uint32(0)
	tick := func() {
		seq++
		for i, e := range players {
			a.Post(e, ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: ecs.Dir((int(seq) + i) % int(ecs.NumDirs))})
		}
		a.Step()
	}
	for range 100 { // warm: queues, outbox and move log at their steady size
		tick()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tick()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1100, "ns/entity")
}

func newFrozenHome(b *testing.B, id int) *ecs.Area {
	a, _, err := scenario.Build(scenario.Scenario{ID: ecs.AreaID(id), Kind: ecs.KindHome, W: 32, H: 32, Players: 0, Wanderers: 4, WallPercent: 5, Seed: uint64(id)})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkFrozenAreas: 10,000 frozen 32x32 home Areas (4 bodies each)
// driven by one Clock; one op is one simulated second (20 slots, each
// frozen Area polled 4 times). Reports CPU ns per frozen Area per second
// and heap bytes per frozen Area.
func BenchmarkFrozenAreas(b *testing.B) {
	const n = 10000
	before := heapInUse()
	areas := make([]*ecs.Area, n)
	for i := range areas {
		areas[i] = newFrozenHome(b, i)
	}
	perArea := float64(heapInUse()-before) / n
	clock, err := ecs.NewClock(ecs.DefaultClockConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer clock.Close()
	for _, a := range areas {
		clock.Add(a)
	}
	now := time.Unix(0, 0)
	second := func() {
		for range 20 {
			clock.Step(now)
			now = now.Add(clock.Period())
		}
	}
	second()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		second()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/area/s")
	b.ReportMetric(perArea, "heapB/area")
	runtime.KeepAlive(areas)
}

// BenchmarkSchedulerMixed: 1,000 Areas on one Clock, 100 active 64x64
// villages with 10 players (a step intent each per tick) and 50 wanderers,
// 900 frozen homes; one op is one simulated second (20 slots). Reports the
// worst lateness of a tick's start within its slot.
func BenchmarkSchedulerMixed(b *testing.B) {
	clock, err := ecs.NewClock(ecs.DefaultClockConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer clock.Close()
	type active struct {
		a       *ecs.Area
		players []ecs.Entity
	}
	var actives []active
	for i := 0; i < 1000; i++ {
		if i%10 == 0 {
			a, players, err := scenario.Build(scenario.Scenario{ID: ecs.AreaID(i), W: 64, H: 64, Players: 10, Wanderers: 50, WallPercent: 10, Seed: uint64(i)})
			if err != nil {
				b.Fatal(err)
			}
			a.Wake()
			clock.Add(a)
			actives = append(actives, active{a, players})
			continue
		}
		clock.Add(newFrozenHome(b, i))
	}
	now := time.Unix(0, 0)
	seq := uint32(0)
	var worst time.Duration
	second := func() {
		for range 20 {
			seq++
			for _, ac := range actives {
				for j, e := range ac.players {
					ac.a.Post(e, ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: ecs.Dir((int(seq) + j) % 8)})
				}
			}
			rep := clock.Step(now)
			worst = max(worst, rep.WorstLate)
			now = now.Add(clock.Period())
		}
	}
	second()
	worst = 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		second()
	}
	b.ReportMetric(float64(worst.Microseconds()), "worst-late-µs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms-cpu/s")
}

func Example_areaTickStats() {
	a, _, _ := scenario.Build(scenario.Scenario{ID: 7, W: 16, H: 16, Wanderers: 10, Seed: 1})
	for range 5 {
		a.Step()
	}
	st := a.Stats()
	fmt.Println(st.Tick, st.Entities, len(st.Systems))
	// Output: 5 10 3
}
