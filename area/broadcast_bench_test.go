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
	chunks  []wire.CellChunk
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

// perPeer encodes every peer's snapshot from scratch with the general
// encoder: all cells within its radius, no sharing, no deltas.
func (f *fanout) perPeer() {
	bc := &f.ha.bcast
	for _, b := range f.ha.order {
		pos := bc.pos.Get(b.entity)
		f.cells = bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, f.cells[:0])
		f.chunks = f.chunks[:0]
		for _, hc := range f.cells {
			var ents []wire.EntityState
			for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
				x, y := f.ha.a.Grid.XY(bc.hash.Square(id))
				ents = append(ents, wire.EntityState{ID: bc.hash.Entity(id).ID(), X: x, Y: y})
			}
			f.chunks = append(f.chunks, wire.CellChunk{Cell: uint32(hc), Ents: ents})
		}
		snap := wire.Snapshot{Tick: f.ha.a.Tick, You: wire.You{ID: b.entity.ID(), X: pos.X, Y: pos.Y}, Cells: f.chunks}
		var err error
		f.buf, err = wire.AppendEncode(f.buf[:0], &snap)
		if err != nil {
			panic(err)
		}
		f.bytes += int64(len(f.buf))
		f.frames++
	}
}

// BenchmarkSnapshotFanout: one 128x128 Area, 200 players all stepping every
// tick; one op is one snapshot round to all 200 peers (the tick that moves
// them runs outside the timer). path=shared is the broadcaster (each cell
// encoded once, per-peer headers, deltas); path=perpeer encodes each
// peer's whole view from scratch with the general encoder.
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
