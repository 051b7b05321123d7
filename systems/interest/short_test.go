package interest

import (
	"math"
	"testing"

	"github.com/leyworks/ley/net/wire"
)

// TestShortSnapshotsCountFromTheWrittenFrame: a frame goes in the short
// form only when the client is known to hold a snapshot it can count from
// (the writer reported one written) and the tick and ack_seq moved less
// than wire.ShortReach from every snapshot the client may hold; the
// client, reading only the frames written, always gets the true tick and
// ack_seq. It fails if the short form counts from the last frame built
// rather than the last written, or ignores the reach.
func TestShortSnapshotsCountFromTheWrittenFrame(t *testing.T) {
	f := newFanout(t, 1, 0)
	c := f.clients[0]
	var st wire.Stream // what the client read
	steps := []struct {
		name   string
		ticks  uint64 // the Area's tick moves this far first
		ack    uint32
		short  bool // the frame goes in the short form
		writes bool // and is written
	}{
		{"the first frame resets the view: whole", 1, 0, false, false},
		{"the first was never written: whole again", 1, 1, false, true},
		{"counting from the written one", 1, 2, true, true},
		{"one built, not written", 3, 3, true, false},
		{"two not written: still from the written one", 5, 9, true, false},
		{"written", 7, 12, true, true},
		{"the tick moved 256 since the written frame: whole", wire.ShortReach, 13, false, true},
		{"ack_seq moved 255: short", 1, 13 + wire.ShortReach - 1, true, true},
		{"ack_seq moved 256: whole", 1, 13 + 2*wire.ShortReach - 1, false, true},
		{"a keep-alive after a long quiet", 200, 13 + 2*wire.ShortReach - 1, true, false},
		{"255 ticks since the written frame, 55 since the pending one: short", 55, 13 + 2*wire.ShortReach - 1, true, true},
		{"ack_seq near its top: whole", 1, math.MaxUint32 - 1, false, true},
		{"ack_seq wraps, as seqs do: short", 1, 2, true, true},
	}
	for _, s := range steps {
		f.a.Tick += s.ticks
		f.arena = f.s.Round(f.arena[:0])
		f.arena = f.s.Build(&c.v, c.e, s.ack, f.arena, &f.frame)
		if len(f.frame.Parts) == 0 {
			t.Fatalf("%s: no frame", s.name)
		}
		b := message(&f.frame)
		if wire.IsShortSnapshot(b) != s.short {
			t.Fatalf("%s: short form %v (%x); want %v", s.name, wire.IsShortSnapshot(b), b, s.short)
		}
		if !s.writes {
			continue // replaced before it was written: the client never reads it
		}
		c.v.Written.Store(f.frame.Round)
		m, err := st.Decode(b)
		if err != nil {
			t.Fatalf("%s: the client cannot read %x: %v", s.name, b, err)
		}
		if got := m.(*wire.Snapshot); got.Tick != f.a.Tick || got.AckSeq != s.ack {
			t.Fatalf("%s: the client reads tick %d, ack_seq %d; the frame meant %d, %d", s.name, got.Tick, got.AckSeq, f.a.Tick, s.ack)
		}
	}
}
