package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// downStore is a real store that is unavailable while down is set: its
// snapshot writes and new incarnations fail with store.ErrUnavailable,
// as the Postgres store's do while its server is stopped.
// tries counts its transactions of snapshots, commits those it let
// through.
type downStore struct {
	store.Store
	down           atomic.Bool
	tries, commits atomic.Int32
}

var errDown = fmt.Errorf("%w: the server is stopped", store.ErrUnavailable)

func (s *downStore) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	s.tries.Add(1)
	if s.down.Load() {
		return store.SnapshotResult{}, errDown
	}
	s.commits.Add(1)
	return s.Store.WriteSnapshot(ctx, snap)
}

func (s *downStore) WriteSnapshots(ctx context.Context, snaps []store.Snapshot) ([]store.SnapshotWrite, error) {
	s.tries.Add(1)
	if s.down.Load() {
		return nil, errDown
	}
	s.commits.Add(1)
	return s.Store.WriteSnapshots(ctx, snaps)
}

func (s *downStore) BeginIncarnation(ctx context.Context, area store.AreaID, placement store.TokenHash) (store.Epoch, error) {
	if s.down.Load() {
		return 0, errDown
	}
	return s.Store.BeginIncarnation(ctx, area, placement)
}

// TestAGoneHostsLastSnapshotsAreWrittenAfterTheOutage: a host that stops
// while the store is unavailable sends its Areas' final snapshots and
// closes, gives up waiting for their acks, and exits. Nobody will send
// those snapshots again, so the director writes them once the store is
// back, its host gone or not; and an Area a join makes live again before
// the registry's loop came to its snapshot starts from that snapshot,
// written first, not from the older one the store held (whose new
// incarnation would then fence the snapshot out for good). In a run of
// 941 homes on a host stopped during a Postgres outage, every one was
// stored as of its snapshot before the outage: what its player did in
// its last seconds was gone.
func TestAGoneHostsLastSnapshotsAreWrittenAfterTheOutage(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st := &downStore{Store: db}
	near, far := net.Pipe()
	defer far.Close()
	h := testHost(1, control.NewConn(near))
	r := testRegistry(st, h)
	ids, epochs, blob := liveHomes(t, db, r, h, 2)
	snap := func(i int, seq uint64, final bool) *control.Snapshot {
		return &control.Snapshot{Area: ids[i], Epoch: epochs[i], Seq: seq, Final: final, Blob: blob}
	}
	for i := range ids {
		r.write(ctx, h, snap(i, 1, false))
	}

	// The outage; the host stops in it.
	st.down.Store(true)
	sent := []control.Message{
		snap(0, 3, false),
		snap(0, 4, true), &control.AreaClosed{Area: ids[0], Epoch: epochs[0], Seq: 4},
		snap(1, 6, true), &control.AreaClosed{Area: ids[1], Epoch: epochs[1], Seq: 6},
	}
	r.readLink(ctx, h, func() (control.Message, error) {
		if len(sent) == 0 {
			return nil, io.EOF
		}
		m := sent[0]
		sent = sent[1:]
		return m, nil
	})
	select {
	case <-h.gone:
	default:
		t.Fatal("the host is still registered after its link ended")
	}
	if len(r.areas) != 0 {
		t.Fatalf("%d Areas live after their closes; want 0", len(r.areas))
	}
	r.retryWrites(ctx) // still in the outage: they wait
	a1, err := db.Area(ctx, store.AreaID(ids[1]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.EnsureLive(ctx, a1); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a join of a closed Area whose last snapshot waits, in the outage: %v; want store.ErrUnavailable", err)
	}

	// The store is back. The registry's loop writes home 0's.
	st.down.Store(false)
	r.pendingW.mu.Lock()
	delete(r.pendingW.m, store.AreaID(ids[1])) // kept aside: the join below comes to it before the loop does
	r.pendingW.mu.Unlock()
	r.retryWrites(ctx)
	if _, seq, _, err := db.AreaSnapshot(ctx, store.AreaID(ids[0])); err != nil || seq != 4 {
		t.Errorf("home 0 stored at seq %d, %v after the outage; want its final snapshot's 4", seq, err)
	}
	r.pendingW.put(h, snap(1, 6, true))

	// A join makes home 1 live on another host before the loop wrote its
	// final snapshot: the new incarnation starts from it.
	near2, far2 := net.Pipe()
	defer far2.Close()
	h2 := testHost(2, control.NewConn(near2))
	r.mu.Lock()
	r.hosts[h2.ID] = h2
	r.mu.Unlock()
	spawned := make(chan *control.SpawnArea, 1)
	go func() {
		m, err := control.NewConn(far2).Recv()
		if err != nil {
			close(spawned)
			return
		}
		sa := m.(*control.SpawnArea)
		spawned <- sa
		r.handle(ctx, h2, &control.AreaReady{Area: sa.Area, Epoch: sa.Epoch})
	}()
	if _, err := r.EnsureLive(ctx, a1); err != nil {
		t.Fatalf("a join of home 1 after the outage: %v", err)
	}
	sa := <-spawned
	if sa == nil {
		t.Fatal("no spawn_area reached the new host")
	}
	if sa.Seq != 6 || !bytes.Equal(sa.Blob, blob) {
		t.Errorf("home 1's new incarnation starts from seq %d (blob of %d bytes); want its final snapshot's 6", sa.Seq, len(sa.Blob))
	}
	if _, seq, _, err := db.AreaSnapshot(ctx, store.AreaID(ids[1])); err != nil || seq != 6 {
		t.Errorf("home 1 stored at seq %d, %v; want 6", seq, err)
	}
	if n := len(r.pendingW.all()); n != 0 {
		t.Errorf("%d snapshots still wait after the store came back; want 0", n)
	}
}

// TestWaitingSnapshotsShareACommit: the snapshots that waited out an
// outage are written in group commits once the store is back (64 to a
// transaction at most, as a link's are), not one transaction each: the
// registry's loop, which also drops silent hosts and closes idle Areas,
// is not held for thousands of commits. While the store is still out,
// a round tries once and waits for the next.
func TestWaitingSnapshotsShareACommit(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st := &downStore{Store: db}
	h := testHost(1, nil)
	r := testRegistry(st, h)
	const homes = 70
	ids, epochs, blob := liveHomes(t, db, r, h, homes)
	st.down.Store(true)
	group := make([]*control.Snapshot, homes)
	for i := range ids {
		group[i] = &control.Snapshot{Area: ids[i], Epoch: epochs[i], Seq: 1, Blob: blob}
	}
	r.persistGroup(ctx, h, group)
	if n := len(r.pendingW.all()); n != homes {
		t.Fatalf("%d snapshots wait in the outage; want %d", n, homes)
	}
	before := st.tries.Load()
	r.retryWrites(ctx)
	if n := st.tries.Load() - before; n != 1 {
		t.Errorf("a round in the outage tried %d transactions; want 1", n)
	}

	st.down.Store(false)
	r.retryWrites(ctx)
	if n := st.commits.Load(); n != 2 {
		t.Errorf("%d snapshots written in %d transactions once the store was back; want 2 (64 and 6)", homes, n)
	}
	for i := range ids {
		if _, seq, _, err := db.AreaSnapshot(ctx, store.AreaID(ids[i])); err != nil || seq != 1 {
			t.Fatalf("home %d stored at seq %d, %v; want 1", i, seq, err)
		}
	}
	if n := len(r.pendingW.all()); n != 0 {
		t.Errorf("%d snapshots still wait; want 0", n)
	}
}
