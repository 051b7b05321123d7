package interest

import (
	"fmt"
	"testing"

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
