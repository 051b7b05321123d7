package registry

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
	"github.com/leyworks/ley/systems/persist"
)

// slowStore is a real store whose writes of snapshots wait until open is
// closed, as a store slow to answer does; began is told when the first
// of them waits.
type slowStore struct {
	store.Store
	began chan struct{}
	open  chan struct{}
}

func (s *slowStore) wait() {
	select {
	case s.began <- struct{}{}:
	default:
	}
	<-s.open
}

func (s *slowStore) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	s.wait()
	return s.Store.WriteSnapshot(ctx, snap)
}

func (s *slowStore) WriteSnapshots(ctx context.Context, snaps []store.Snapshot) ([]store.SnapshotWrite, error) {
	s.wait()
	return s.Store.WriteSnapshots(ctx, snaps)
}

// testDB is a real store (SQLite) in the test's temporary folder,
// closed when the test ends.
func testDB(t *testing.T) store.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testRegistry is a registry over st with hosts registered, for the
// tests of a host's link: no budget on snapshots, logs discarded.
func testRegistry(st store.Store, hosts ...*Host) *Registry {
	r := &Registry{cfg: Config{SnapshotRate: 1 << 30, SnapshotBurst: 1 << 30, JoinTimeout: 10 * time.Second}, log: slog.New(slog.DiscardHandler),
		metrics: newMetrics(nil), logs: loglimit.Limiter{Every: logEvery}, store: st, hosts: map[uint32]*Host{}, areas: map[store.AreaID]*Live{},
		lost: map[store.AreaID]time.Time{}, spawned: map[store.TokenHash]*child{}, changed: make(chan struct{}), started: time.Now()}
	for _, h := range hosts {
		r.hosts[h.ID] = h
	}
	return r
}

// testHost is host id, registered on conn, with room for 8 Areas.
func testHost(id uint32, conn *control.Conn) *Host {
	return &Host{ID: id, Pool: 8, conn: conn, soon: make(chan control.Message, 64), gone: make(chan struct{}),
		linkDone: make(chan struct{}), areas: map[store.AreaID]*Live{}}
}

// liveHomes makes n home Areas in db, each live on h at a new epoch in
// r, and returns their IDs and epochs and the blob of an empty Area's
// snapshot, for the tests of a host's link.
func liveHomes(t *testing.T, db store.Store, r *Registry, h *Host, n int) (ids []uint32, epochs []uint64, blob []byte) {
	t.Helper()
	ctx := context.Background()
	owner, err := db.CreateAccount(ctx, store.NewAccount{Email: "o@x", Name: "o", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		a, err := db.CreateArea(ctx, store.NewArea{Owner: owner.ID, Kind: "home", Name: "home", W: 16, H: 16, Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		e, err := db.BeginIncarnation(ctx, a.ID, store.TokenHash{})
		if err != nil {
			t.Fatal(err)
		}
		l := &Live{ID: a.ID, Host: h, Epoch: e, width: 16, height: 16, seqSince: time.Now(), tickRate: 20}
		r.areas[a.ID], h.areas[a.ID] = l, l
		ids, epochs = append(ids, uint32(a.ID)), append(epochs, uint64(e))
	}
	area, err := ecs.NewArea(ecs.Config{ID: 1, W: 16, H: 16})
	if err != nil {
		t.Fatal(err)
	}
	if blob, err = persist.Save(area, nil, nil); err != nil {
		t.Fatal(err)
	}
	return ids, epochs, blob
}

// TestAnExitedHostsLastWordsAreWritten: a spawned host whose process
// exits while its link's handler is still writing what it sent before
// (here a snapshot the store is slow to write, then a message, then an
// Area's final snapshot) is unregistered only once the link's reader
// has handled all of it: the final snapshot is written and acked, not
// dropped because its host was gone first. The spawner's exit notice
// (ChildExited) used to unregister the host at once, and a host that
// stopped with thousands of Areas left the director with the closes of
// half of them unread.
func TestAnExitedHostsLastWordsAreWritten(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	st := &slowStore{Store: db, began: make(chan struct{}, 1), open: make(chan struct{})}
	near, far := net.Pipe()
	defer far.Close()
	h := testHost(1, control.NewConn(near))
	h.spawned = true
	kid := &spawner.Child{Token: "spawn-token"}
	r := testRegistry(st, h)
	r.spawned[store.HashToken(kid.Token)] = &child{host: h, registered: make(chan struct{})}
	ids, epochs, blob := liveHomes(t, db, r, h, 2)
	// What the host sent before its process ended, then the link's end.
	sent := []control.Message{
		&control.Snapshot{Area: ids[0], Epoch: epochs[0], Seq: 1, Blob: blob},
		&control.GrantAck{Token: "none", Area: ids[0]}, // ends the first write's group
		&control.Snapshot{Area: ids[1], Epoch: epochs[1], Seq: 3, Final: true, Blob: blob},
	}
	recv := func() (control.Message, error) {
		if len(sent) == 0 {
			return nil, io.EOF
		}
		m := sent[0]
		sent = sent[1:]
		return m, nil
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		r.readLink(ctx, h, recv)
	}()
	<-st.began // the first snapshot's write waits for the store

	exited := make(chan struct{})
	go func() {
		defer close(exited)
		r.ChildExited(kid, false)
	}()
	select {
	case <-h.gone:
		t.Error("the host was unregistered while its link's handler still wrote what it had sent")
	case <-time.After(200 * time.Millisecond): // still waiting, as it should (or not run yet)
	}
	close(st.open)
	<-exited
	<-read

	select {
	case <-h.gone:
	default:
		t.Fatal("the exited host is still registered")
	}
	if len(r.hosts) != 0 {
		t.Fatalf("%d hosts registered after the exit; want 0", len(r.hosts))
	}
	for i, seq := range []store.Seq{1, 3} {
		if _, got, _, err := db.AreaSnapshot(ctx, store.AreaID(ids[i])); err != nil || got != seq {
			t.Errorf("area %d stored at seq %d, %v; want %d (what its host sent before it exited)", ids[i], got, err, seq)
		}
	}
	var acked []uint32
	for len(h.soon) > 0 {
		if ack, ok := (<-h.soon).(*control.SnapshotAck); ok && ack.Error == "" {
			acked = append(acked, ack.Area)
		}
	}
	if len(acked) != 2 || acked[0] != ids[0] || acked[1] != ids[1] {
		t.Errorf("snapshots acked for areas %v; want %v", acked, ids)
	}
}
