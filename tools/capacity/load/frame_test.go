package load

import (
	"testing"

	"github.com/leyworks/ley/net/wire"
)

func TestHeadParsers(t *testing.T) {
	snap, err := wire.Encode(&wire.Snapshot{Tick: 86402, AckSeq: 70000, Records: wire.AppendStep(nil, 1001, wire.DirE)})
	if err != nil {
		t.Fatal(err)
	}
	if ack, ok := snapshotAck(snap); !ok || ack != 70000 {
		t.Errorf("snapshotAck = %d, %v; want 70000, true", ack, ok)
	}
	res := wire.AppendIntentResult(nil, 4000000000, wire.CodeTooFast)
	if seq, code, ok := intentResult(res); !ok || seq != 4000000000 || code != wire.CodeTooFast {
		t.Errorf("intentResult = %d, %v, %v; want 4000000000, TOO_FAST, true", seq, code, ok)
	}
	for n := range len(snap) {
		if _, ok := snapshotAck(snap[:n]); ok && n < 12 {
			t.Errorf("snapshotAck of %d bytes: ok", n)
		}
	}
	if _, _, ok := intentResult(snap); ok {
		t.Errorf("intentResult of a snapshot: ok")
	}
}

func TestHeadParsersAllocate(t *testing.T) {
	snap, _ := wire.Encode(&wire.Snapshot{Tick: 1, AckSeq: 7})
	if n := testing.AllocsPerRun(100, func() { snapshotAck(snap) }); n != 0 {
		t.Errorf("snapshotAck allocs = %v; want 0", n)
	}
}

// FuzzHeadParsers: the driver's head-only parsers never panic on any bytes,
// and whatever they accept as a well-formed message agrees with the full
// decoder.
func FuzzHeadParsers(f *testing.F) {
	snap, _ := wire.Encode(&wire.Snapshot{Tick: 86402, AckSeq: 70000, Records: wire.AppendStep(nil, 1001, wire.DirE)})
	f.Add(snap)
	f.Add(wire.AppendIntentResult(nil, 7, wire.CodeBlocked))
	f.Add([]byte{0x83, 0x02, 0x0c, 0x84, 0x1b})
	f.Fuzz(func(t *testing.T, b []byte) {
		ack, okAck := snapshotAck(b)
		seq, code, okRes := intentResult(b)
		m, err := wire.Decode(b)
		if err != nil {
			return // the parsers read heads only: they may accept what the decoder refuses
		}
		switch m := m.(type) {
		case *wire.Snapshot:
			if !okAck || ack != m.AckSeq {
				t.Fatalf("snapshotAck(%x) = %d, %v; the decoder says ack_seq %d", b, ack, okAck, m.AckSeq)
			}
		case *wire.IntentResult:
			if !okRes || seq != m.Seq || code != m.Code {
				t.Fatalf("intentResult(%x) = %d, %v, %v; the decoder says %+v", b, seq, code, okRes, m)
			}
		}
	})
}
