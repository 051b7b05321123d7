package registry

import (
	"testing"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// TestUsedCountsTheHostsOwnFigure: a host's room is taken by its Areas'
// sizes, or by its own count of their memory when that is more, plus the
// Areas placed on it since the heartbeat that carried the count.
func TestUsedCountsTheHostsOwnFigure(t *testing.T) {
	beat := time.Now()
	small := areaCost(16, 16)
	h := &Host{lastBeat: beat, areas: map[store.AreaID]*Live{
		1: {width: 16, height: 16, seqSince: beat.Add(-time.Minute)},
		2: {width: 16, height: 16, seqSince: beat.Add(-time.Minute)},
	}}
	r := &Registry{}
	if got := r.usedLocked(h); got != 2*small {
		t.Errorf("no count from the host: used %d; want the sizes' %d", got, 2*small)
	}
	h.beat = control.Heartbeat{AreaBytes: 40 << 20} // its creatures and line of sight cost more
	if got := r.usedLocked(h); got != 40<<20 {
		t.Errorf("the host counts more: used %d; want its %d", got, 40<<20)
	}
	h.areas[3] = &Live{width: 16, height: 16, seqSince: beat.Add(time.Second)} // placed since the heartbeat
	if got := r.usedLocked(h); got != 40<<20+small {
		t.Errorf("an Area placed since the count: used %d; want %d", got, 40<<20+small)
	}
}
