package area

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/spatial"
)

// fanout is one Area of moving players with a broadcaster whose frames go
// to a counting sink instead of sockets.
type fanout struct {
	ha      *hostArea
	players []ecs.Entity
	rng     *rand.Rand
	seq     uint32
	bytes   int64
	frames  int64
	buf     []byte
	body    []byte
	cells   []int32
}

func newFanout(tb testing.TB, players, radius int) *fanout {
	cfg := DefaultConfig()
	cfg.InterestRadius = radius
	h := &Host{cfg: cfg}
	rules := ecs.RulesFor(ecs.KindArena)
	rules.MaxPlayers = players
	rules.StepsPerSecond = 20 // everyone moves every tick
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: 128, H: 128})
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.Use(systems.Default()...); err != nil {
		tb.Fatal(err)
	}
	hash, err := spatial.Attach(a, cfg.CellSize)
	if err != nil {
		tb.Fatal(err)
	}
	ha := &hostArea{h: h, id: 1, a: a, bodies: map[uint64]*body{}}
	f := &fanout{ha: ha, rng: rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < players; i++ {
		x, y, _ := nearestFree(a.Grid, f.rng.Int32N(128), f.rng.Int32N(128), nil)
		e, err := a.SpawnPlayer(uint64(i+1), x, y)
		if err != nil {
			tb.Fatal(err)
		}
		b := &body{account: uint64(i + 1), entity: e, peer: &peer{h: h}}
		ha.bodies[b.account] = b
		ha.order = append(ha.order, b)
		f.players = append(f.players, e)
	}
	ha.bound = players
	if err := ha.bcast.init(ha, hash); err != nil {
		tb.Fatal(err)
	}
	ha.bcast.static = func(*peer, int32, uint32) {}    // maps are reliable messages, not part of a round
	ha.bcast.deliver = func(_ *peer, fr *gate.Frame) { // as if written whole at once
		f.bytes += int64(fr.Len())
		f.frames++
		fr.Delivered.Store(fr.Round)
		fr.Release()
	}
	return f
}

// tick moves every player one random step (posted as intents, as clients would).
func (f *fanout) tick() {
	f.seq++
	for _, e := range f.players {
		f.ha.a.Post(e, ecs.Intent{Seq: f.seq, Kind: ecs.IntentStep, Dir: ecs.Dir(f.rng.IntN(8))})
	}
	f.ha.a.Step()
}

// perPeer encodes every peer's snapshot from scratch with the same hand
// encoders the broadcaster uses: every cell within its radius whole, no
// sharing between peers, no deltas. The ratio to path=shared is what
// sharing and deltas save; the encoder is the same on both sides.
func (f *fanout) perPeer() {
	bc := &f.ha.bcast
	for _, b := range f.ha.order {
		pos := bc.pos.Get(b.entity)
		f.cells = bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, f.cells[:0])
		f.body = f.body[:0]
		for _, hc := range f.cells {
			f.body = wire.AppendCell(f.body, uint32(hc), bc.hash.Count(hc))
			for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
				e := bc.hash.Entity(id)
				st := bc.state(e, bc.hash.Square(id))
				f.body = wire.AppendEntity(f.body, &st)
			}
		}
		f.buf = wire.AppendSnapshotHeader(f.buf[:0], f.ha.a.Tick, 0, 0, len(f.body))
		f.buf = append(f.buf, f.body...)
		f.bytes += int64(len(f.buf))
		f.frames++
	}
}

// BenchmarkSnapshotFanout: one 128x128 Area, 200 players all stepping every
// tick; one op is one snapshot round to all 200 peers (the tick that moves
// them runs outside the timer). path=shared is the broadcaster (each
// cell's records encoded once, per-peer headers, deltas); path=perpeer
// encodes each peer's whole view from scratch with the same hand encoders.
// Neither writes to a socket (bench/ has the end-to-end figures).
func BenchmarkSnapshotFanout(b *testing.B) {
	for _, radius := range []int{16, 0} {
		for _, path := range []string{"shared", "perpeer"} {
			b.Run(fmt.Sprintf("players=200/radius=%d/path=%s", radius, path), func(b *testing.B) {
				f := newFanout(b, 200, radius)
				round := f.ha.bcast.send
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

// TestSharedRoundAllocatesNothing: a steady-state snapshot round on the
// shared path allocates nothing.
func TestSharedRoundAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; make test runs this without it")
	}
	f := newFanout(t, 100, 16)
	for range 30 {
		f.tick()
		f.ha.bcast.send()
	}
	allocs := testing.AllocsPerRun(50, func() {
		f.ha.bcast.send()
	})
	if allocs != 0 {
		t.Fatalf("allocs per round = %v; want 0", allocs)
	}
}
