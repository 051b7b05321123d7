package bench

import (
	"bytes"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"golang.org/x/sys/unix"

	"github.com/leyworks/ley/net/poll"
	"github.com/leyworks/ley/net/wire"
)

// wireWorld is a snapshot round's input: a side x side grid of
// spatial-hash cells with perCell entities each, and peers that each see
// the 3x3 cells around their own (wrapping at the edges, so exactly 9),
// every cell whole (as a peer new to them gets them).
type wireWorld struct {
	ents  [][]wire.EntityState // by cell index
	peers []wirePeer
}

type wirePeer struct {
	tick  uint64
	ack   uint32
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
				Facing: wire.Dir(i % 8), HP: 100, Flags: wire.EntityFlags(i & 1),
			}
			id++
		}
	}
	for p := range w.peers {
		c := (p * 7) % (side * side)
		cx, cy := c%side, c/side
		pe := &w.peers[p]
		pe.tick, pe.ack = 1<<20, uint32(p*11)
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

// appendWhole appends cell c's whole form (a cell record of its entities).
func (w *wireWorld) appendWhole(dst []byte, c uint32) []byte {
	dst = wire.AppendCell(dst, c, len(w.ents[c]))
	for i := range w.ents[c] {
		dst = wire.AppendEntity(dst, &w.ents[c][i])
	}
	return dst
}

// sharedRound is the shared path's state, reused across rounds.
type sharedRound struct {
	buf    []byte   // every cell's records, back to back
	chunks [][]byte // records of each cell, slices of buf
	hdrs   [][]byte // per-peer header buffer
	parts  [][][]byte
}

func newSharedRound(w *wireWorld) *sharedRound {
	r := &sharedRound{
		buf:    make([]byte, 0, len(w.ents)*(8+16*len(w.ents[0]))),
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
		r.buf = w.appendWhole(r.buf, uint32(c))
		// If buf grew, earlier chunks still point into the old array, whose
		// bytes stay valid; with buf pre-sized it never grows.
		r.chunks[c] = r.buf[start:len(r.buf):len(r.buf)]
	}
	out := 0
	for p := range w.peers {
		pe := &w.peers[p]
		n := 0
		for _, c := range pe.cells {
			n += len(r.chunks[c])
		}
		r.hdrs[p] = wire.AppendSnapshotHeader(r.hdrs[p][:0], pe.tick, pe.ack, 0, n)
		parts := append(r.parts[p][:0], r.hdrs[p])
		out += len(r.hdrs[p]) + n
		for _, c := range pe.cells {
			parts = append(parts, r.chunks[c])
		}
		r.parts[p] = parts
	}
	return out
}

// handRound encodes each peer's whole frame into a buffer of its own with
// the same hand encoders: the baseline that isolates what sharing saves.
type handRound struct {
	body []byte
	out  [][]byte
}

func newHandRound(w *wireWorld) *handRound {
	r := &handRound{out: make([][]byte, len(w.peers)), body: make([]byte, 0, 9*(8+16*len(w.ents[0])))}
	for p := range r.out {
		r.out[p] = make([]byte, 0, wire.MaxSnapshotHeaderSize+cap(r.body))
	}
	return r
}

func (r *handRound) run(w *wireWorld) int {
	out := 0
	for p := range w.peers {
		pe := &w.peers[p]
		r.body = r.body[:0]
		for _, c := range pe.cells {
			r.body = w.appendWhole(r.body, c)
		}
		o := wire.AppendSnapshotHeader(r.out[p][:0], pe.tick, pe.ack, 0, len(r.body))
		r.out[p] = append(o, r.body...)
		out += len(r.out[p])
	}
	return out
}

// TestWireSharedEqualsPerPeer: both paths put the same bytes on the wire,
// every frame decodes, and the shared round allocates nothing.
func TestWireSharedEqualsPerPeer(t *testing.T) {
	w := newWireWorld(8, 8, 200)
	s, h := newSharedRound(w), newHandRound(w)
	if a, b := s.run(w), h.run(w); a != b {
		t.Fatalf("shared bytes = %d; want %d", a, b)
	}
	for p := range w.peers {
		got := bytes.Join(s.parts[p], nil)
		if !bytes.Equal(got, h.out[p]) {
			t.Fatalf("peer %d: shared = %x; want %x", p, got, h.out[p])
		}
		if _, err := wire.Decode(got); err != nil {
			t.Fatalf("peer %d: %v", p, err)
		}
	}
	allocs := testing.AllocsPerRun(10, func() { s.run(w) })
	if allocs != 0 {
		t.Errorf("shared round allocs = %v; want 0", allocs)
	}
}

// socketPeers are one connected unix socket pair per peer with a reader
// draining the far end, so that a round's writes cost what the kernel
// makes them cost.
type socketPeers struct {
	fds  []int
	done chan struct{}
}

func newSocketPeers(tb testing.TB, n int) *socketPeers {
	sp := &socketPeers{done: make(chan struct{})}
	for range n {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			tb.Fatal(err)
		}
		sp.fds = append(sp.fds, pair[0])
		go func(fd int) {
			buf := make([]byte, 64<<10)
			for {
				if _, err := unix.Read(fd, buf); err != nil {
					unix.Close(fd)
					return
				}
			}
		}(pair[1])
	}
	tb.Cleanup(func() {
		for _, fd := range sp.fds {
			unix.Close(fd)
		}
	})
	return sp
}

// BenchmarkWireSnapshot: one snapshot round for 200 peers that each see 9
// cells of 8 entities, every cell whole. path=shared encodes each cell
// once and gives each peer a header plus slices (what the host does);
// path=hand encodes each peer's frame with the same encoders into a buffer
// of its own (no sharing). The two sockets=1 variants also write every
// frame to a real socket (writev of the parts vs write of the buffer), so
// that their ratio includes the kernel.
func BenchmarkWireSnapshot(b *testing.B) {
	const side, perCell, peers = 8, 8, 200
	w := newWireWorld(side, perCell, peers)
	for _, sockets := range []bool{false, true} {
		var sp *socketPeers
		if sockets {
			sp = newSocketPeers(b, peers)
		}
		name := func(path string) string {
			if sockets {
				return "path=" + path + "/peers=200/sockets=1"
			}
			return "path=" + path + "/peers=200/sockets=0"
		}
		b.Run(name("shared"), func(b *testing.B) {
			r := newSharedRound(w)
			out := 0
			var iov []unix.Iovec // reused, as the gate reuses its own
			b.ReportAllocs()
			for b.Loop() {
				out = r.run(w)
				if sp != nil {
					for p, fd := range sp.fds {
						if _, err := poll.WriteBuffers(fd, r.parts[p], &iov); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*peers), "ns/peer")
			b.ReportMetric(float64(out)/peers, "bytes/peer")
		})
		b.Run(name("hand"), func(b *testing.B) {
			r := newHandRound(w)
			out := 0
			b.ReportAllocs()
			for b.Loop() {
				out = r.run(w)
				if sp != nil {
					for p, fd := range sp.fds {
						if _, err := unix.Write(fd, r.out[p]); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*peers), "ns/peer")
			b.ReportMetric(float64(out)/peers, "bytes/peer")
		})
	}
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
