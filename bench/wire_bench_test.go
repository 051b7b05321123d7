package bench

import (
	"bytes"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/leyworks/ley/net/wire"
)

// wireWorld is a snapshot round's input: a side x side grid of
// spatial-hash cells with perCell entities each, and peers that each see
// the 3x3 cells around their own (wrapping at the edges, so exactly 9).
type wireWorld struct {
	ents  [][]wire.EntityState // by cell index
	peers []wirePeer
}

type wirePeer struct {
	hdr   wire.SnapshotHeader
	cells [9]uint32
}

func newWireWorld(side, perCell, peers int) *wireWorld {
	w := &wireWorld{ents: make([][]wire.EntityState, side*side), peers: make([]wirePeer, peers)}
	id := uint32(1)
	for c := range w.ents {
		cx, cy := c%side, c/side
		w.ents[c] = make([]wire.EntityState, perCell)
		for i := range w.ents[c] {
			w.ents[c][i] = wire.EntityState{
				ID: id, Kind: wire.EntityKind(i % 3),
				X: int32(cx*16 + i), Y: int32(cy*16 + 2*i),
				Facing: wire.Dir(i % 8), Flags: uint8(i & 1),
			}
			id++
		}
	}
	for p := range w.peers {
		c := (p * 7) % (side * side)
		cx, cy := c%side, c/side
		pe := &w.peers[p]
		pe.hdr = wire.SnapshotHeader{Tick: 1 << 20, AckSeq: uint32(p * 11),
			You: wire.You{ID: uint32(p + 1), X: int32(cx * 16), Y: int32(cy * 16), HP: 100}}
		k := 0
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				pe.cells[k] = uint32(((cy+dy+side)%side)*side + (cx+dx+side)%side)
				k++
			}
		}
	}
	return w
}

// sharedRound is the shared-chunk path's state, reused across rounds.
type sharedRound struct {
	buf    []byte   // every cell's chunk, back to back
	chunks [][]byte // chunk of each cell, slices of buf
	hdrs   [][]byte // per-peer header buffer
	parts  [][][]byte
}

func newSharedRound(w *wireWorld) *sharedRound {
	r := &sharedRound{
		buf:    make([]byte, 0, len(w.ents)*(15+22*len(w.ents[0]))),
		chunks: make([][]byte, len(w.ents)),
		hdrs:   make([][]byte, len(w.peers)),
		parts:  make([][][]byte, len(w.peers)),
	}
	for p := range w.peers {
		r.hdrs[p] = make([]byte, 0, wire.MaxSnapshotHeaderSize)
		r.parts[p] = make([][]byte, 0, 1+len(w.peers[p].cells))
	}
	return r
}

// run encodes each cell once, then gives each peer its header and the
// list of parts to writev. It returns the bytes that would go out.
func (r *sharedRound) run(w *wireWorld) int {
	r.buf = r.buf[:0]
	for c := range w.ents {
		start := len(r.buf)
		r.buf = wire.AppendCellChunk(r.buf, uint32(c), w.ents[c])
		// If buf grew, earlier chunks still point into the old array, whose
		// bytes stay valid; with buf pre-sized it never grows.
		r.chunks[c] = r.buf[start:len(r.buf):len(r.buf)]
	}
	out := 0
	for p := range w.peers {
		pe := &w.peers[p]
		r.hdrs[p] = wire.AppendSnapshotHeader(r.hdrs[p][:0], &pe.hdr, len(pe.cells))
		parts := append(r.parts[p][:0], r.hdrs[p])
		out += len(r.hdrs[p])
		for _, c := range pe.cells {
			parts = append(parts, r.chunks[c])
			out += len(r.chunks[c])
		}
		r.parts[p] = parts
	}
	return out
}

// perPeer marshals each peer's whole snapshot with fxamacker/cbor.
type perPeerRound struct {
	cells [][]wire.CellChunk
	out   [][]byte
}

func newPerPeerRound(w *wireWorld) *perPeerRound {
	r := &perPeerRound{cells: make([][]wire.CellChunk, len(w.peers)), out: make([][]byte, len(w.peers))}
	for p := range w.peers {
		r.cells[p] = make([]wire.CellChunk, 0, len(w.peers[p].cells))
	}
	return r
}

func (r *perPeerRound) run(tb testing.TB, w *wireWorld) int {
	out := 0
	for p := range w.peers {
		pe := &w.peers[p]
		cells := r.cells[p][:0]
		for _, c := range pe.cells {
			cells = append(cells, wire.CellChunk{Cell: c, Ents: w.ents[c]})
		}
		r.cells[p] = cells
		s := wire.Snapshot{Tick: pe.hdr.Tick, AckSeq: pe.hdr.AckSeq, You: pe.hdr.You, Cells: cells}
		b, err := wire.Encode(&s)
		if err != nil {
			tb.Fatal(err)
		}
		r.out[p] = b
		out += len(b)
	}
	return out
}

// TestWireSharedEqualsPerPeer: both paths put the same bytes on the wire.
func TestWireSharedEqualsPerPeer(t *testing.T) {
	w := newWireWorld(8, 8, 200)
	s, pp := newSharedRound(w), newPerPeerRound(w)
	if a, b := s.run(w), pp.run(t, w); a != b {
		t.Fatalf("shared bytes = %d; want %d", a, b)
	}
	for p := range w.peers {
		if got := bytes.Join(s.parts[p], nil); !bytes.Equal(got, pp.out[p]) {
			t.Fatalf("peer %d: shared = %x; want %x", p, got, pp.out[p])
		}
	}
	allocs := testing.AllocsPerRun(10, func() { s.run(w) })
	if allocs != 0 {
		t.Errorf("shared round allocs = %v; want 0", allocs)
	}
}

func BenchmarkWireSnapshot(b *testing.B) {
	const side, perCell, peers = 8, 8, 200
	w := newWireWorld(side, perCell, peers)
	b.Run("path=shared/peers=200", func(b *testing.B) {
		r := newSharedRound(w)
		out := 0
		b.ReportAllocs()
		for b.Loop() {
			out = r.run(w)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*peers), "ns/peer")
		b.ReportMetric(float64(out)/peers, "bytes/peer")
	})
	b.Run("path=perpeer/peers=200", func(b *testing.B) {
		r := newPerPeerRound(w)
		out := 0
		b.ReportAllocs()
		for b.Loop() {
			out = r.run(b, w)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*peers), "ns/peer")
		b.ReportMetric(float64(out)/peers, "bytes/peer")
	})
}

func BenchmarkDecodeIntent(b *testing.B) {
	in := wire.AppendIntent(nil, &wire.Intent{Seq: 123456, Kind: wire.IntentMoveTo, Target: wire.Cell{X: 300, Y: -40}})
	b.Run("path=fast", func(b *testing.B) {
		var dst wire.Intent
		b.ReportAllocs()
		for b.Loop() {
			if err := wire.DecodeIntent(in, &dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	// DecodeClient shares the intent decoder and adds the *Intent result.
	b.Run("path=decodeclient", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := wire.DecodeClient(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	// fxamacker/cbor's Unmarshal of the whole envelope, for comparison.
	b.Run("path=fxamacker", func(b *testing.B) {
		var env struct {
			_    struct{} `cbor:",toarray"`
			V    uint16
			T    wire.Type
			Body wire.Intent
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := cbor.Unmarshal(in, &env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
