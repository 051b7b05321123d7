package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestDecodeSnapshotHead(t *testing.T) {
	want := &Snapshot{Tick: 86402, AckSeq: 70000, Flags: SnapshotReset, Records: exampleRecords}
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := DecodeSnapshotHead(b, nil, &got); err != nil {
		t.Fatalf("DecodeSnapshotHead(%x) = %v", b, err)
	}
	if got.Tick != want.Tick || got.AckSeq != want.AckSeq || got.Flags != want.Flags || !bytes.Equal(got.Records, want.Records) {
		t.Errorf("DecodeSnapshotHead = %+v; want %+v", got, want)
	}
	if &got.Records[0] != &b[len(b)-len(want.Records)] {
		t.Errorf("records do not alias the message")
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"truncated records", b[:len(b)-1], ErrMalformed},
		{"trailing byte", append(append([]byte(nil), b...), 0), ErrMalformed},
		{"an intent_result", AppendIntentResult(nil, 7, CodeBlocked), ErrUnknownType},
		{"version 1", append([]byte{0x83, 0x01}, b[2:]...), ErrVersion},
		{"ack_seq past 32 bits", []byte{0x83, byte(Version), 0x0c, 0x84, 0x00, 0x1b, 0, 0, 0, 1, 0, 0, 0, 0, 0x00, 0x40}, ErrMalformed},
		{"records as text", []byte{0x83, byte(Version), 0x0c, 0x84, 0x00, 0x00, 0x00, 0x60}, ErrMalformed},
		{"three fields", []byte{0x83, byte(Version), 0x0c, 0x83, 0x00, 0x00, 0x00}, ErrMalformed},
		{"empty", nil, ErrMalformed},
	}
	for _, tc := range tests {
		got := Snapshot{Tick: 1}
		if err := DecodeSnapshotHead(tc.b, nil, &got); !errors.Is(err, tc.want) {
			t.Errorf("%s: DecodeSnapshotHead(%x) = %v; want %v", tc.name, tc.b, err, tc.want)
		} else if got.Tick != 0 || got.Records != nil {
			t.Errorf("%s: failed but left %+v", tc.name, got)
		}
	}
}

func TestDecodeIntentResult(t *testing.T) {
	b := AppendIntentResult(nil, 4000000000, CodeTooFast)
	var got IntentResult
	if err := DecodeIntentResult(b, &got); err != nil || got.Seq != 4000000000 || got.Code != CodeTooFast {
		t.Errorf("DecodeIntentResult(%x) = %+v, %v; want seq 4000000000, TOO_FAST", b, got, err)
	}
	snap, _ := Encode(&Snapshot{Tick: 1})
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"a snapshot", snap, ErrUnknownType},
		{"trailing byte", append(append([]byte(nil), b...), 0), ErrMalformed},
		{"code past 16 bits", []byte{0x83, byte(Version), 0x0b, 0x82, 0x07, 0x1a, 0, 1, 0, 0}, ErrMalformed},
		{"truncated", b[:len(b)-1], ErrMalformed},
	}
	for _, tc := range tests {
		got := IntentResult{Seq: 1}
		if err := DecodeIntentResult(tc.b, &got); !errors.Is(err, tc.want) || got != (IntentResult{}) {
			t.Errorf("%s: DecodeIntentResult(%x) = %+v, %v; want zero, %v", tc.name, tc.b, got, err, tc.want)
		}
	}
}

// TestHeadReadersAllocs: a client reads snapshot heads and intent results
// at rate; neither allocates.
func TestHeadReadersAllocs(t *testing.T) {
	snap, _ := Encode(&Snapshot{Tick: 1 << 40, AckSeq: 7, Records: exampleRecords})
	short := append(AppendShortSnapshotHeader(nil, 1<<40+10, 8, len(exampleRecords)), exampleRecords...)
	res := AppendIntentResult(nil, 9, CodeBlocked)
	var s Snapshot
	var r IntentResult
	allocs := testing.AllocsPerRun(100, func() {
		if DecodeSnapshotHead(snap, nil, &s) != nil || DecodeSnapshotHead(short, &s, &s) != nil || DecodeIntentResult(res, &r) != nil {
			panic("decode failed")
		}
	})
	if allocs != 0 {
		t.Errorf("head readers allocs = %v; want 0", allocs)
	}
}

func BenchmarkDecodeSnapshotHead(b *testing.B) {
	snap, _ := Encode(&Snapshot{Tick: 1 << 40, AckSeq: 7, Records: exampleRecords})
	var s Snapshot
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeSnapshotHead(snap, nil, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestShortSnapshot: a short snapshot stands for the snapshot whose tick
// and ack_seq are the nearest at or above the last snapshot's with its low
// bytes, across the wrap of those bytes, as far as ShortReach; the head
// reader and the full decoder agree; and what is malformed is refused.
func TestShortSnapshot(t *testing.T) {
	tests := []struct {
		name       string
		last, want Snapshot
	}{
		{"the worked example", Snapshot{Tick: 86402, AckSeq: 7}, Snapshot{Tick: 86412, AckSeq: 8}},
		{"nothing moved", Snapshot{Tick: 9, AckSeq: 3}, Snapshot{Tick: 9, AckSeq: 3}},
		{"across the low byte's wrap", Snapshot{Tick: 250, AckSeq: 255}, Snapshot{Tick: 260, AckSeq: 256}},
		{"as far as it reaches", Snapshot{Tick: 1 << 40, AckSeq: 1 << 20}, Snapshot{Tick: 1<<40 + ShortReach - 1, AckSeq: 1<<20 + ShortReach - 1}},
		{"ack_seq at its top", Snapshot{Tick: 5, AckSeq: math.MaxUint32 - 3}, Snapshot{Tick: 6, AckSeq: math.MaxUint32}},
		{"ack_seq wraps, as seqs do", Snapshot{Tick: 5, AckSeq: math.MaxUint32 - 1}, Snapshot{Tick: 6, AckSeq: 3}},
	}
	for _, tc := range tests {
		recs := AppendStep(nil, 9, DirS)
		b := append(AppendShortSnapshotHeader(nil, tc.want.Tick, tc.want.AckSeq, len(recs)), recs...)
		if len(b) != 5 {
			t.Errorf("%s: a step's short snapshot is %d bytes (%x); want 5", tc.name, len(b), b)
		}
		var got Snapshot
		if err := DecodeSnapshotHead(b, &tc.last, &got); err != nil || got.Tick != tc.want.Tick || got.AckSeq != tc.want.AckSeq || got.Flags != 0 || !bytes.Equal(got.Records, recs) {
			t.Errorf("%s: DecodeSnapshotHead(%x) = %+v, %v; want %+v", tc.name, b, got, err, tc.want)
		}
		m, err := Decode(b)
		ss, ok := m.(*ShortSnapshot)
		if err != nil || !ok {
			t.Fatalf("%s: Decode(%x) = %T, %v", tc.name, b, m, err)
		}
		if x := ss.Expand(&tc.last); x.Tick != tc.want.Tick || x.AckSeq != tc.want.AckSeq || !bytes.Equal(x.Records, recs) {
			t.Errorf("%s: Expand = %+v; want %+v", tc.name, x, tc.want)
		}
		if again, err := Encode(ss); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: Encode(Decode(%x)) = %x, %v", tc.name, b, again, err)
		}
		if typ, err := Peek(b); typ != TypeSnapshot || err != nil {
			t.Errorf("%s: Peek = %v, %v; want a snapshot", tc.name, typ, err)
		}
	}
	last := Snapshot{Tick: 86402, AckSeq: 7}
	bad := []struct {
		name string
		b    []byte
		last *Snapshot
	}{
		{"no snapshot before it", []byte{0x44, 0x8c, 0x08, 0x04, 0x09}, nil},
		{"one byte", []byte{0x41, 0x8c}, &last},
		{"empty", []byte{0x40}, &last},
		{"truncated", []byte{0x45, 0x8c, 0x08, 0x04, 0x09}, &last},
		{"trailing byte", []byte{0x44, 0x8c, 0x08, 0x04, 0x09, 0x00}, &last},
		{"indefinite", []byte{0x5f, 0x42, 0x8c, 0x08, 0xff}, &last},
	}
	for _, tc := range bad {
		got := Snapshot{Tick: 1}
		if err := DecodeSnapshotHead(tc.b, tc.last, &got); !errors.Is(err, ErrMalformed) || got.Tick != 0 || got.Records != nil {
			t.Errorf("%s: DecodeSnapshotHead(%x) = %+v, %v; want MALFORMED and zero", tc.name, tc.b, got, err)
		}
	}
	big := make([]byte, MaxServerMessageSize+1)
	big[0] = 0x5a
	if _, err := Decode(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode of a short snapshot over the limit = %v; want TOO_LARGE", err)
	}
}
