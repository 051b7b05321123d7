package build

import (
	"fmt"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
)

// BenchmarkHomeTick: home Areas built from the default content, each with
// its one player walking as the workload bench's homes do (a step every
// 4th tick at 20 Hz: 5 a second, east and west in turn); one op is those 4
// ticks of every home, reported per Area-tick. The host's own steps after
// each tick (snapshots, chores) are not in it. The cold variant writes 8
// MiB of other memory between two Areas' ticks, untimed, as a host's
// kernel work for its sockets does: each tick then finds its Area's
// memory out of the caches.
func BenchmarkHomeTick(b *testing.B) {
	for _, homes := range []int{1, 500} {
		b.Run(fmt.Sprintf("homes=%d", homes), func(b *testing.B) { benchHomeTick(b, homes, false) })
	}
	b.Run("homes=500/cold", func(b *testing.B) { benchHomeTick(b, 500, true) })
}

// benchHomeTick ticks homes Areas in turn, as one host's clock does;
// cold evicts the caches between two Areas' ticks.
func benchHomeTick(b *testing.B, homes int, cold bool) {
	var trash []byte
	if cold {
		trash = make([]byte, 8<<20)
	}
	areas := make([]*ecs.Area, homes)
	players := make([]ecs.Entity, homes)
	for i := range areas {
		built, err := Area(content.Default(), Spec{ID: ecs.AreaID(i + 1), Template: "home", TickRate: 20, CellSize: 8, Seed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		sp := built.Template.Map.Spawns[0]
		if players[i], err = built.Area.SpawnPlayer(uint64(i+1), sp.X, sp.Y); err != nil {
			b.Fatal(err)
		}
		areas[i] = built.Area
	}
	seq := uint32(0)
	op := func() {
		seq++
		dir := ecs.East
		if seq%2 == 0 {
			dir = ecs.West
		}
		for i, a := range areas {
			a.Post(players[i], ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: dir})
		}
		for range 4 {
			for _, a := range areas {
				a.Step()
				if cold {
					b.StopTimer()
					for i := 0; i < len(trash); i += 64 {
						trash[i]++
					}
					b.StartTimer()
				}
			}
		}
	}
	for range 100 {
		op()
	}
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4*homes), "ns/tick")
}
