package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"pgregory.net/rapid"
)

// framed builds a snapshot message the way a server does: the header, then
// record bytes that may come from several shared buffers.
func framed(s *Snapshot, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := AppendSnapshotHeader(nil, s.Tick, s.AckSeq, s.Flags, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// marshalDefault is fxamacker's Marshal, default options, of [v, t, s].
func marshalDefault(t interface{ Fatal(...any) }, s *Snapshot) []byte {
	b, err := cbor.Marshal([]any{Version, TypeSnapshot, s})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSnapshotHeaderEqualsMarshal(t *testing.T) {
	big := bytes.Repeat([]byte{byte(OpGone), 5}, 200) // a 2-byte length head
	tests := []struct {
		name string
		s    Snapshot
	}{
		{"empty", Snapshot{Records: []byte{}}},
		{"reset", Snapshot{Tick: 1, Flags: SnapshotReset, Records: AppendCell(nil, 3, 0)}},
		{"extremes", Snapshot{Tick: 1<<64 - 1, AckSeq: 1<<32 - 1, Flags: 255, Records: AppendStep(nil, 1<<32-1, DirNW)}},
		{"400 bytes of records", Snapshot{Tick: 5, Records: big}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			half := len(tt.s.Records) / 2
			got := framed(&tt.s, tt.s.Records[:half], tt.s.Records[half:])
			if want := marshalDefault(t, &tt.s); !bytes.Equal(got, want) {
				t.Errorf("header + records = %x; want Marshal %x", got, want)
			}
			if want, _ := Encode(&tt.s); !bytes.Equal(got, want) {
				t.Errorf("header + records = %x; want Encode %x", got, want)
			}
			m, err := Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, &tt.s) {
				t.Errorf("Decode = %+v; want %+v", m, &tt.s)
			}
		})
	}
}

func genEntity() *rapid.Generator[EntityState] {
	return rapid.Custom(func(t *rapid.T) EntityState {
		return EntityState{
			ID:     rapid.Uint32().Draw(t, "id"),
			Kind:   EntityKind(rapid.Uint8().Draw(t, "kind")),
			X:      rapid.Int32Range(0, 1<<31-1).Draw(t, "x"),
			Y:      rapid.Int32Range(0, 1<<31-1).Draw(t, "y"),
			Facing: Dir(rapid.Uint8().Draw(t, "facing")),
			HP:     rapid.Uint16().Draw(t, "hp"),
			Flags:  EntityFlags(rapid.Uint8().Draw(t, "flags")),
		}
	})
}

// genRecords draws a sequence of records and their encoding.
func genRecords(t *rapid.T) ([]Record, []byte) {
	var recs []Record
	var b []byte
	for range rapid.IntRange(0, 20).Draw(t, "records") {
		id := rapid.Uint32().Draw(t, "id")
		switch rapid.IntRange(0, 6).Draw(t, "op") {
		case 0:
			d := Dir(rapid.IntRange(0, 7).Draw(t, "dir"))
			recs = append(recs, Record{Op: OpStep, Dir: d, ID: id})
			b = AppendStep(b, id, d)
		case 1:
			x, y := rapid.Int32Range(0, 1<<31-1).Draw(t, "x"), rapid.Int32Range(0, 1<<31-1).Draw(t, "y")
			recs = append(recs, Record{Op: OpPos, ID: id, X: x, Y: y})
			b = AppendPos(b, id, x, y)
		case 2:
			recs = append(recs, Record{Op: OpGone, ID: id})
			b = AppendGone(b, id)
		case 3:
			hp, fl, f := rapid.Uint16().Draw(t, "hp"), EntityFlags(rapid.Uint8().Draw(t, "flags")), Dir(rapid.Uint8().Draw(t, "facing"))
			recs = append(recs, Record{Op: OpState, ID: id, HP: hp, Flags: fl, Facing: f})
			b = AppendState(b, id, hp, fl, f)
		case 4:
			e := genEntity().Draw(t, "entity")
			recs = append(recs, Record{Op: OpEnter, Entity: e})
			b = AppendEnter(b, &e)
		case 5:
			cell := rapid.Uint32().Draw(t, "cell")
			ents := rapid.SliceOfN(genEntity(), 0, 5).Draw(t, "ents")
			recs = append(recs, Record{Op: OpCell, Cell: cell, N: len(ents)})
			b = AppendCell(b, cell, len(ents))
			for _, e := range ents {
				recs = append(recs, Record{Op: OpEnter, Entity: e, InCell: true})
				b = AppendEntity(b, &e)
			}
		case 6:
			cell := rapid.Uint32().Draw(t, "cell")
			recs = append(recs, Record{Op: OpForget, Cell: cell})
			b = AppendForget(b, cell)
		}
	}
	return recs, b
}

// TestRecordsRoundTrip: every record the appenders write reads back as
// written, in order, and the snapshot around them equals fxamacker's.
func TestRecordsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want, b := genRecords(t)
		r := RecordReader{B: b}
		var got []Record
		var rec Record
		for r.Next(&rec) {
			got = append(got, rec)
		}
		if err := r.Err(); err != nil {
			t.Fatalf("read %x: %v", b, err)
		}
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("read %+v; want %+v", got, want)
		}
		s := &Snapshot{Tick: rapid.Uint64().Draw(t, "tick"), AckSeq: rapid.Uint32().Draw(t, "ack"), Records: b}
		if s.Records == nil {
			s.Records = []byte{}
		}
		if msg, want := framed(s, b), marshalDefault(t, s); !bytes.Equal(msg, want) {
			t.Fatalf("framed = %x; want Marshal %x", msg, want)
		}
	})
}

// TestRecordReaderRefusesGarbage: truncated records, unknown ops, varints
// out of range and cell counts beyond the bytes left are malformed, never
// a panic or a long loop.
func TestRecordReaderRefusesGarbage(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
	}{
		{"unknown op", []byte{0x13, 1}},
		{"truncated step", []byte{0x02}},
		{"truncated varint", []byte{0x08, 0x80}},
		{"x over 2^31", append([]byte{0x08, 1}, 0x80, 0x80, 0x80, 0x80, 0x08, 0)},
		{"hp over 2^16", []byte{0x0a, 1, 0x80, 0x80, 0x04, 0, 0}},
		{"cell count beyond the bytes", []byte{0x11, 1, 0xff, 0xff, 0xff, 0xff, 0x07}},
		{"truncated cell entity", []byte{0x11, 1, 1, 5, 0, 1, 2, 0, 0, 0}[:9]},
		{"ten-byte varint", []byte{0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, tt := range tests {
		r := RecordReader{B: tt.b}
		var rec Record
		n := 0
		for r.Next(&rec) {
			n++
		}
		if r.Err() == nil || !isDecodeError(r.Err()) {
			t.Errorf("%s: %x read %d records, err %v; want ErrMalformed", tt.name, tt.b, n, r.Err())
		}
	}
}

func TestAppendIntentEqualsEncode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := &Intent{
			Seq:    rapid.Uint32().Draw(t, "seq"),
			Kind:   IntentKind(rapid.Uint8().Draw(t, "kind")),
			Dir:    Dir(rapid.Uint8().Draw(t, "dir")),
			Target: Cell{X: rapid.Int32().Draw(t, "x"), Y: rapid.Int32().Draw(t, "y")},
		}
		got := AppendIntent(nil, in)
		want, err := Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendIntent = %x; want %x", got, want)
		}
		var back Intent
		if err := DecodeIntent(got, &back); err != nil {
			t.Fatal(err)
		}
		if back != *in {
			t.Fatalf("DecodeIntent = %+v; want %+v", back, *in)
		}

		seq, code := rapid.Uint32().Draw(t, "rseq"), Code(rapid.Uint16().Draw(t, "code"))
		got = AppendIntentResult(nil, seq, code)
		want, err = Encode(&IntentResult{Seq: seq, Code: code})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendIntentResult = %x; want %x", got, want)
		}
	})
}

func TestSeqAfter(t *testing.T) {
	tests := []struct {
		a, b uint32
		want bool
	}{
		{1, 0, true}, {0, 0, false}, {5, 7, false}, {7, 5, true},
		{0, 1<<32 - 1, true}, {1<<32 - 1, 0, false}, {3, 1<<32 - 2, true},
		{1 << 31, 0, false}, {1<<31 - 1, 0, true},
	}
	for _, tt := range tests {
		if got := SeqAfter(tt.a, tt.b); got != tt.want {
			t.Errorf("SeqAfter(%d, %d) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestSnapshotAllocs: building a frame into warmed buffers, reading its
// records, decoding an intent and answering it allocate nothing.
func TestSnapshotAllocs(t *testing.T) {
	ents := make([]EntityState, 8)
	for i := range ents {
		ents[i] = EntityState{ID: uint32(1000 + i), X: int32(i), Y: int32(i)}
	}
	hdr := make([]byte, 0, MaxSnapshotHeaderSize)
	shared := make([]byte, 0, 9*(8+12*len(ents)))
	parts := make([][]byte, 0, 10)
	var in Intent
	intent := AppendIntent(nil, &Intent{Seq: 3, Target: Cell{X: -5, Y: 900}})
	res := make([]byte, 0, 12)
	var rec Record
	allocs := testing.AllocsPerRun(100, func() {
		shared = shared[:0]
		parts = parts[:0]
		for c := uint32(0); c < 9; c++ {
			start := len(shared)
			shared = AppendCell(shared, c, len(ents))
			for i := range ents {
				shared = AppendEntity(shared, &ents[i])
			}
			shared = AppendStep(shared, 1000, DirE)
			parts = append(parts, shared[start:])
		}
		hdr = AppendSnapshotHeader(hdr[:0], 123456, 99, 0, len(shared))
		r := RecordReader{B: shared}
		for r.Next(&rec) {
		}
		if err := DecodeIntent(intent, &in); err != nil {
			panic(err)
		}
		res = AppendIntentResult(res[:0], in.Seq, CodeTooFast)
	})
	if allocs != 0 {
		t.Errorf("allocs per frame = %v; want 0", allocs)
	}
}

func BenchmarkAppendCell(b *testing.B) {
	ents := make([]EntityState, 8)
	for i := range ents {
		ents[i] = EntityState{ID: uint32(1000 + i), X: int32(i * 3), Y: int32(i * 5)}
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCell(buf[:0], 42, len(ents))
		for i := range ents {
			buf = AppendEntity(buf, &ents[i])
		}
	}
	b.SetBytes(int64(len(buf)))
}
