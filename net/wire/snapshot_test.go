package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"pgregory.net/rapid"
)

// chunked builds a snapshot message the way a server does: header, then
// one chunk per cell.
func chunked(s *Snapshot) []byte {
	h := SnapshotHeader{Tick: s.Tick, AckSeq: s.AckSeq, You: s.You}
	b := AppendSnapshotHeader(nil, &h, len(s.Cells))
	for _, c := range s.Cells {
		b = AppendCellChunk(b, c.Cell, c.Ents)
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

func TestSnapshotChunksEqualMarshal(t *testing.T) {
	big := make([]EntityState, 300) // a 2-byte array head
	for i := range big {
		big[i] = EntityState{ID: uint32(i * 70000), X: int32(-i * 1000), Y: int32(i * 300)}
	}
	tests := []struct {
		name string
		s    Snapshot
	}{
		{"empty", Snapshot{Cells: []CellChunk{}}},
		{"cleared cell", Snapshot{Tick: 1, Cells: []CellChunk{{Cell: 3, Ents: []EntityState{}}}}},
		{"extremes", Snapshot{Tick: 1<<64 - 1, AckSeq: 1<<32 - 1,
			You: You{ID: 1<<32 - 1, X: -1 << 31, Y: 1<<31 - 1, HP: 65535, Flags: 255},
			Cells: []CellChunk{{Cell: 1<<32 - 1, Ents: []EntityState{
				{ID: 23, Kind: 255, X: -24, Y: -25, Facing: 24, Flags: 255},
				{ID: 24, X: 23, Y: -1, Facing: 255},
			}}}}},
		{"300 entities", Snapshot{Tick: 5, Cells: []CellChunk{{Cell: 2, Ents: big}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunked(&tt.s)
			if want := marshalDefault(t, &tt.s); !bytes.Equal(got, want) {
				t.Errorf("chunks = %x; want Marshal %x", got, want)
			}
			if want, _ := Encode(&tt.s); !bytes.Equal(got, want) {
				t.Errorf("chunks = %x; want Encode %x", got, want)
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
			X:      rapid.Int32().Draw(t, "x"),
			Y:      rapid.Int32().Draw(t, "y"),
			Facing: Dir(rapid.Uint8().Draw(t, "facing")),
			Flags:  rapid.Uint8().Draw(t, "flags"),
		}
	})
}

func genSnapshot() *rapid.Generator[*Snapshot] {
	cell := rapid.Custom(func(t *rapid.T) CellChunk {
		return CellChunk{
			Cell: rapid.Uint32().Draw(t, "cell"),
			Ents: rapid.SliceOfN(genEntity(), 0, 30).Draw(t, "ents"),
		}
	})
	return rapid.Custom(func(t *rapid.T) *Snapshot {
		return &Snapshot{
			Tick:   rapid.Uint64().Draw(t, "tick"),
			AckSeq: rapid.Uint32().Draw(t, "ack"),
			You: You{
				ID:    rapid.Uint32().Draw(t, "you.id"),
				X:     rapid.Int32().Draw(t, "you.x"),
				Y:     rapid.Int32().Draw(t, "you.y"),
				HP:    rapid.Uint16().Draw(t, "you.hp"),
				Flags: rapid.Uint8().Draw(t, "you.flags"),
			},
			Cells: rapid.SliceOfN(cell, 0, 40).Draw(t, "cells"),
		}
	})
}

// normalize gives every empty list a non-nil value, as Decode does.
func normalize(s *Snapshot) {
	if s.Cells == nil {
		s.Cells = []CellChunk{}
	}
	for i := range s.Cells {
		if s.Cells[i].Ents == nil {
			s.Cells[i].Ents = []EntityState{}
		}
	}
}

func TestSnapshotChunksEqualMarshalProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot().Draw(t, "snapshot")
		got := chunked(s)
		enc, err := Encode(s) // nil slices included: encoded as empty arrays
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, enc) {
			t.Fatalf("chunks = %x; want Encode %x", got, enc)
		}
		normalize(s)
		if want := marshalDefault(t, s); !bytes.Equal(got, want) {
			t.Fatalf("chunks = %x; want Marshal %x", got, want)
		}
		m, err := Decode(got)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if !reflect.DeepEqual(m, s) {
			t.Fatalf("Decode = %+v; want %+v", m, s)
		}
	})
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

// TestSnapshotAllocs: building a frame into warmed buffers allocates
// nothing.
func TestSnapshotAllocs(t *testing.T) {
	ents := make([]EntityState, 8)
	for i := range ents {
		ents[i] = EntityState{ID: uint32(1000 + i), X: int32(i), Y: -int32(i)}
	}
	h := SnapshotHeader{Tick: 123456, AckSeq: 99, You: You{ID: 1000, HP: 50}}
	hdr := make([]byte, 0, MaxSnapshotHeaderSize)
	shared := make([]byte, 0, 9*(15+22*len(ents)))
	parts := make([][]byte, 0, 10)
	var in Intent
	intent := AppendIntent(nil, &Intent{Seq: 3, Target: Cell{X: -5, Y: 900}})
	res := make([]byte, 0, 12)
	allocs := testing.AllocsPerRun(100, func() {
		shared = shared[:0]
		parts = parts[:0]
		hdr = AppendSnapshotHeader(hdr[:0], &h, 9)
		parts = append(parts, hdr)
		for c := uint32(0); c < 9; c++ {
			start := len(shared)
			shared = AppendCellChunk(shared, c, ents)
			parts = append(parts, shared[start:])
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

func BenchmarkAppendCellChunk(b *testing.B) {
	ents := make([]EntityState, 8)
	for i := range ents {
		ents[i] = EntityState{ID: uint32(1000 + i), X: int32(i * 3), Y: int32(i * 5)}
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCellChunk(buf[:0], 42, ents)
	}
	b.SetBytes(int64(len(buf)))
}
