package registry

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// writesStore is a real store that records each snapshot write: the
// (area, seq) pairs of each transaction, in order.
type writesStore struct {
	store.Store
	mu     sync.Mutex
	writes [][][2]uint64
}

func (s *writesStore) record(snaps ...store.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w [][2]uint64
	for _, snap := range snaps {
		w = append(w, [2]uint64{uint64(snap.Area), uint64(snap.Seq)})
	}
	s.writes = append(s.writes, w)
}

func (s *writesStore) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	s.record(snap)
	return s.Store.WriteSnapshot(ctx, snap)
}

func (s *writesStore) WriteSnapshots(ctx context.Context, snaps []store.Snapshot) ([]store.SnapshotWrite, error) {
	s.record(snaps...)
	return s.Store.WriteSnapshots(ctx, snaps)
}

// TestSnapshotsReadTogetherShareACommit: the snapshots a host's link
// has read before its handler comes to them are written in one
// transaction, each admitted on its own (a stale incarnation's is
// refused and answered, never written) and acked by its own outcome
// after the commit; a presence among them is taken as it is read; any
// other message ends the group, and what comes after it is written
// after it.
func TestSnapshotsReadTogetherShareACommit(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st := &writesStore{Store: db}
	h := testHost(1, nil)
	r := testRegistry(st, h)
	ids, epochs, blob := liveHomes(t, db, r, h, 3)
	snap := func(i int, seq uint64) *control.Snapshot {
		return &control.Snapshot{Area: ids[i], Epoch: epochs[i], Seq: seq, Blob: blob}
	}
	stale := snap(2, 5)
	stale.Epoch--
	queued := []control.Message{
		snap(0, 1), &control.Presence{Area: ids[0], Peers: 1}, snap(1, 1), stale, snap(0, 2),
		&control.GrantAck{Token: "none", Area: ids[1]}, // unsolicited: refused, and it ends the group
		snap(1, 2),
	}
	work := make(chan control.Message, len(queued))
	for _, m := range queued {
		r.take(h, work, m) // as the link's reader hands them on
	}
	close(work)
	r.handleLink(ctx, h, work)

	want := [][][2]uint64{
		{{uint64(ids[0]), 1}, {uint64(ids[1]), 1}, {uint64(ids[0]), 2}}, // one transaction; the stale one not in it
		{{uint64(ids[1]), 2}}, // after the message that ended the group
	}
	if !slices.EqualFunc(st.writes, want, func(a, b [][2]uint64) bool { return slices.Equal(a, b) }) {
		t.Fatalf("the store's writes (area, seq) by transaction: %v; want %v", st.writes, want)
	}
	var acks []string
	for len(h.soon) > 0 {
		if ack, ok := (<-h.soon).(*control.SnapshotAck); ok {
			acks = append(acks, ackString(ack))
		}
	}
	wantAcks := []string{
		ackString(&control.SnapshotAck{Area: ids[2], Seq: 5, Error: "refused: " + RefuseStaleEpoch}),
		ackString(&control.SnapshotAck{Area: ids[0], Seq: 1}), ackString(&control.SnapshotAck{Area: ids[1], Seq: 1}),
		ackString(&control.SnapshotAck{Area: ids[0], Seq: 2}), ackString(&control.SnapshotAck{Area: ids[1], Seq: 2}),
	}
	if !slices.Equal(acks, wantAcks) {
		t.Fatalf("acks %q; want %q", acks, wantAcks)
	}
	for i, seq := range []store.Seq{2, 2, 0} {
		if _, got, _, err := db.AreaSnapshot(ctx, store.AreaID(ids[i])); err != nil || got != seq {
			t.Errorf("area %d stored at seq %d, %v; want %d", ids[i], got, err, seq)
		}
	}
	if l := h.areas[store.AreaID(ids[0])]; l.peers != 1 || l.storedSeq != 2 {
		t.Errorf("area %d: %d peers, stored seq %d; want the presence's 1 and 2", ids[0], l.peers, l.storedSeq)
	}
	if h.backlog.Load() != 0 {
		t.Errorf("backlog %d bytes after the handler; want 0", h.backlog.Load())
	}
}

func ackString(a *control.SnapshotAck) string {
	return fmt.Sprintf("area %d seq %d %q", a.Area, a.Seq, a.Error)
}
