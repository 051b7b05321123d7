package registry

import (
	"testing"
	"time"

	"github.com/leyworks/ley/store"
)

// TestSeqLimit: the bound on a snapshot's seq lets through every seq an
// honest host could have reached by then, and refuses what it could not.
func TestSeqLimit(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name      string
		from      store.Seq
		rate      int
		elapsed   time.Duration
		allowed   store.Seq // must pass
		forbidden store.Seq // must be refused
	}{
		{"just started, 20 Hz", 5, 20, 0, 5 + 200, 1 << 62},
		{"an hour at 20 Hz", 100, 20, time.Hour, 100 + 20*3600*3, 100 + 20*3610*maxSnapshotsPerTick + maxSnapshotsPerTick + 1},
		{"a host started elsewhere, 1000 Hz", 0, maxHostTickRate, time.Minute, 1000 * 60 * 10, 1 << 40},
		{"a clock behind the start", 7, 20, -time.Hour, 7 + 10*20, 1 << 62},
		{"near the top of int64", 1<<63 - 10, 20, time.Hour, 1<<63 - 1, 1 << 63},
		{"two centuries", 0, maxHostTickRate, 200 * 365 * 24 * time.Hour, 1 << 40, 1<<40*maxSnapshotsPerTick + 1},
	}
	for _, tt := range tests {
		l := &Live{seqFrom: tt.from, seqSince: t0, tickRate: tt.rate}
		got := seqLimit(l, t0.Add(tt.elapsed))
		if got < tt.allowed || got >= tt.forbidden {
			t.Errorf("%s: seqLimit = %d; want in [%d, %d)", tt.name, got, tt.allowed, tt.forbidden)
		}
	}
}
