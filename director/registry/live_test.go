package registry

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// TestUsedCountsTheHostsOwnFigure: a host's room is taken by its Areas'
// sizes and bodies, or by its own count of their memory when that is
// more, plus the Areas placed on it since the heartbeat that carried the
// count.
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
	// Bodies take room: bound, away, and on their way in.
	h.beat = control.Heartbeat{}
	h.areas[1].accounts = []store.AccountID{7, 8}
	h.areas[2].away = []store.AccountID{9}
	h.areas[3].grants = map[store.AccountID]time.Time{10: beat}
	if got, want := r.usedLocked(h), 3*small+4*bodyCost; got != want {
		t.Errorf("with four bodies: used %d; want %d", got, want)
	}
}

// TestPlacementsInFlightTakeTheirSlot: an Area picked for a host takes
// its slot (and its room) at once, not when its incarnation has been
// read and it is in the host's areas: joins arriving together would
// otherwise all be placed on a host's last free slot, and the host would
// refuse all but one ("pool full"). A placement that never comes gives
// its slot back.
func TestPlacementsInFlightTakeTheirSlot(t *testing.T) {
	st := testDB(t)
	h := &Host{ID: 1, Pool: 2, areas: map[store.AreaID]*Live{}}
	r := &Registry{cfg: Config{JoinTimeout: 50 * time.Millisecond}, log: slog.New(slog.DiscardHandler), store: st, hosts: map[uint32]*Host{1: h}}
	a := store.Area{ID: 9, W: 16, H: 16}
	for i := range 2 {
		if got, err := r.pickHost(context.Background(), a); err != nil || got != h {
			t.Fatalf("pick %d of a host with a pool of 2: %v, %v", i+1, got, err)
		}
	}
	if h.placing != 2 || h.placingCost != 2*placeCost(16, 16) {
		t.Fatalf("two placements in flight: placing %d (cost %d); want 2 (%d)", h.placing, h.placingCost, 2*placeCost(16, 16))
	}
	if got, err := r.pickHost(context.Background(), a); !errors.Is(err, ErrAtCapacity) {
		t.Fatalf("a third pick while two are in flight: a host (%t), err %v; want ErrAtCapacity", got != nil, err)
	}
	// Area 9 is not in the store: its incarnation cannot begin, and the
	// slot its pick took comes back.
	h.placing, h.placingCost = 1, placeCost(16, 16)
	if err := r.start(context.Background(), a, &Live{}); err == nil {
		t.Fatal("an Area the store does not have was started")
	}
	if h.placing != 1 || h.placingCost != placeCost(16, 16) {
		t.Fatalf("after a placement that failed: placing %d (cost %d); want the other one's 1 (%d)", h.placing, h.placingCost, placeCost(16, 16))
	}
}
