package load

import (
	"testing"

	"github.com/leyworks/ley/net/wire"
)

func TestHeadParsers(t *testing.T) {
	snap, err := wire.Encode(&wire.Snapshot{Tick: 86402, AckSeq: 70000, You: wire.You{ID: 1001, X: 12, Y: -3, HP: 100},
		Cells: []wire.CellChunk{{Cell: 9, Ents: []wire.EntityState{{ID: 1001, X: 12, Y: -3}}}}})
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
