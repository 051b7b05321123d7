package interest

import (
	"fmt"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// perPeer encodes every client's snapshot from scratch with the same hand
// encoders the rounds use: every cell within its radius whole, no sharing
// between clients, no deltas. The ratio to path=shared is what sharing
// and deltas save; the encoder is the same on both sides.
func (f *fanout) perPeer() {
	var cells []int32
	var body, buf []byte
	for _, c := range f.clients {
		pos := f.s.pos.Get(c.e)
		cells = f.hash.CellsWithin(pos.X, pos.Y, f.s.radius, cells[:0])
		body = body[:0]
		for _, hc := range cells {
			body = wire.AppendCell(body, uint32(hc), f.hash.Count(hc))
			for id := f.hash.First(hc); id >= 0; id = f.hash.Next(id) {
				st := f.s.State(f.hash.Entity(id), f.hash.Square(id))
				body = wire.AppendEntity(body, &st)
			}
		}
		buf = wire.AppendSnapshotHeader(buf[:0], f.a.Tick, 0, 0, len(body))
		buf = append(buf, body...)
		f.bytes += int64(len(buf))
		f.frames++
	}
}

// BenchmarkSnapshotFanout: one 128x128 Area, 200 players all stepping every
// tick; one op is one snapshot round to all 200 clients (the tick that
// moves them runs outside the timer). path=shared is the interest system
// (each cell's records encoded once, per-client headers, deltas);
// path=perpeer encodes each client's whole view from scratch with the
// same hand encoders. Neither writes to a socket (bench/ has the
// end-to-end figures).
func BenchmarkSnapshotFanout(b *testing.B) {
	for _, radius := range []int{16, 0} {
		for _, path := range []string{"shared", "perpeer"} {
			b.Run(fmt.Sprintf("players=200/radius=%d/path=%s", radius, path), func(b *testing.B) {
				f := newFanout(b, 200, radius)
				round := f.round
				if path == "perpeer" {
					round = f.perPeer
				}
				for range 20 {
					f.tick()
					round()
				}
				f.bytes, f.frames = 0, 0
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					f.tick()
					b.StartTimer()
					round()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(f.frames), "ns/peer")
				b.ReportMetric(float64(f.bytes)/float64(f.frames), "B/peer")
			})
		}
	}
}

// BenchmarkHomeRound: 500 homes of one player on a 64x64 floor, each
// player stepping every other round (5 steps a second at 10 rounds a
// second, as the peer comparison's homes do); one op is a round of every
// home in turn, reported per home-round. Only the rounds are timed: the
// homes' ticks run outside the timer, and so does, in the cold variant,
// a write of 8 MiB of other memory between two homes' rounds, as a
// host's kernel work for its sockets does between two Areas: each round
// then finds its home's memory out of the caches, as in a host of many
// homes.
func BenchmarkHomeRound(b *testing.B) {
	for _, radius := range []int{24, 0} {
		for _, cold := range []bool{false, true} {
			name := fmt.Sprintf("homes=500/radius=%d", radius)
			if cold {
				name += "/cold"
			}
			b.Run(name, func(b *testing.B) { benchHomeRound(b, radius, cold) })
		}
	}
}

func benchHomeRound(b *testing.B, radius int, cold bool) {
	var trash []byte
	if cold {
		trash = make([]byte, 8<<20)
	}
	rules := ecs.RulesFor(ecs.KindHome)
	rules.StepsPerSecond = 20 // a step never waits for its budget
	homes := make([]*fanout, 500)
	for i := range homes {
		homes[i] = newFanoutSized(b, rules, 1, radius, 64)
	}
	rounds := 0
	op := func() {
		rounds++
		b.StopTimer()
		for _, f := range homes {
			if rounds%2 == 0 {
				f.tick()
			} else {
				f.a.Step()
			}
		}
		b.StartTimer()
		for _, f := range homes {
			if cold {
				b.StopTimer()
				for i := 0; i < len(trash); i += 64 {
					trash[i]++
				}
				b.StartTimer()
			}
			f.round()
		}
	}
	timeRounds(b, op, len(homes), "ns/home-round")
}

// timeRounds runs op 20 times to let its buffers settle, then times it,
// reporting the time per op over per (the rounds or frames an op makes)
// in unit.
func timeRounds(b *testing.B, op func(), per int, unit string) {
	for range 20 {
		op()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), unit)
}

// TestRoundAllocatesNothing: a steady snapshot round (records, 200
// frames) allocates nothing once its buffers settled.
func TestRoundAllocatesNothing(t *testing.T) {
	f := newFanout(t, 200, 16)
	for range 40 {
		f.tick()
		f.round()
	}
	if n := testing.AllocsPerRun(50, func() {
		f.a.Step() // no intents: a quiet tick, then a round
		f.round()
	}); n != 0 {
		t.Fatalf("a steady round allocates %v times; want 0", n)
	}
}

// BenchmarkVillageRound: 25 villages of 20 players on 64x64 floors, every
// player seeing the whole village (radius 0), half of each village's
// players stepping before each round (5 steps a second at 10 rounds a
// second, as the peer comparison's villages do); one op is a round of
// every village in turn, reported per client frame built. Only the rounds
// are timed.
func BenchmarkVillageRound(b *testing.B) {
	rules := ecs.RulesFor(ecs.KindVillage)
	rules.StepsPerSecond = 20 // a step never waits for its budget
	villages := make([]*fanout, 25)
	for i := range villages {
		villages[i] = newFanoutSized(b, rules, 20, 0, 64)
	}
	rounds := 0
	op := func() {
		rounds++
		b.StopTimer()
		for _, f := range villages {
			f.seq++
			for i, c := range f.clients {
				if i%2 == rounds%2 {
					f.a.Post(c.e, ecs.Intent{Seq: f.seq, Kind: ecs.IntentStep, Dir: ecs.Dir(f.rng.IntN(8))})
				}
			}
			f.a.Step()
		}
		b.StartTimer()
		for _, f := range villages {
			f.round()
		}
	}
	timeRounds(b, op, len(villages)*20, "ns/frame")
}
