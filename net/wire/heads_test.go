package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecodeSnapshotHead(t *testing.T) {
	want := &Snapshot{Tick: 86402, AckSeq: 70000, Flags: SnapshotReset, Records: exampleRecords}
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := DecodeSnapshotHead(b, &got); err != nil {
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
		if err := DecodeSnapshotHead(tc.b, &got); !errors.Is(err, tc.want) {
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
	res := AppendIntentResult(nil, 9, CodeBlocked)
	var s Snapshot
	var r IntentResult
	allocs := testing.AllocsPerRun(100, func() {
		if DecodeSnapshotHead(snap, &s) != nil || DecodeIntentResult(res, &r) != nil {
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
		if err := DecodeSnapshotHead(snap, &s); err != nil {
			b.Fatal(err)
		}
	}
}
