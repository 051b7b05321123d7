package load

import (
	"testing"
	"time"

	"github.com/leyworks/ley/net/client"
	"github.com/leyworks/ley/net/wire"
)

// TestGapLessQuietRounds: a snapshot's gap, as the SLO counts it, leaves
// out the ticks between it and the one before, beyond a round's, that
// sent nothing (quiet rounds, or an Area at rest whose next round comes
// off the cadence); one round late is still late.
func TestGapLessQuietRounds(t *testing.T) {
	var p player
	ms := time.Millisecond
	if got := p.gapOf(client.Frame{Gap: 900 * ms, Ticks: 18}); got != 900*ms {
		t.Fatalf("before area_info: gap %v, want the raw 900ms", got)
	}
	p.noteRound(&wire.AreaInfo{TickHz: 20, SnapshotHz: 10})
	for _, c := range []struct {
		gap   time.Duration
		ticks uint64
		want  time.Duration
	}{
		{100 * ms, 2, 100 * ms},   // the next round
		{140 * ms, 2, 140 * ms},   // the next round, late
		{200 * ms, 4, 100 * ms},   // one quiet round between
		{150 * ms, 3, 100 * ms},   // an Area at rest: its round comes a tick off the cadence
		{1000 * ms, 20, 100 * ms}, // a keep-alive after nine
		{1300 * ms, 20, 400 * ms}, // a keep-alive, late
		{180 * ms, 6, 0},          // early (jitter): never below 0
	} {
		if got := p.gapOf(client.Frame{Gap: c.gap, Ticks: c.ticks}); got != c.want {
			t.Errorf("gap %v over %d ticks: %v; want %v", c.gap, c.ticks, got, c.want)
		}
	}
}
