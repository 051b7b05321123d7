package registry

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/net/control"
)

// TestTheLinkReaderBoundsWhatWaits: what a host's link reader hands its
// handler is bounded in messages and in snapshot bytes; a snapshot past
// either bound is left unacked (counted "backlog"), a presence that finds
// no room is dropped (counted refused), an Area's final snapshot waits
// for room, and a heartbeat is answered at once however full the backlog
// is. The handler gives the bytes back as it finishes, and drops what is
// queued for a host that is gone.
func TestTheLinkReaderBoundsWhatWaits(t *testing.T) {
	r := &Registry{log: slog.New(slog.DiscardHandler), metrics: newMetrics(nil), logs: loglimit.Limiter{Every: logEvery}}
	h := &Host{soon: make(chan control.Message, 4), gone: make(chan struct{})}
	work := make(chan control.Message, 2)
	left := func() float64 { return counted(t, r.metrics.snapshots.WithLabelValues("backlog")) }

	big := &control.Snapshot{Area: 1, Seq: 1, Blob: make([]byte, linkBacklogBytes/2+1)}
	r.take(h, work, big)
	if len(work) != 1 || h.backlog.Load() != snapshotBytes(big) {
		t.Fatalf("a snapshot within the bounds: %d queued, backlog %d bytes; want 1, %d", len(work), h.backlog.Load(), snapshotBytes(big))
	}
	r.take(h, work, &control.Snapshot{Area: 2, Seq: 1, Blob: make([]byte, linkBacklogBytes/2)})
	if len(work) != 1 || left() != 1 || h.backlog.Load() != snapshotBytes(big) {
		t.Fatalf("a snapshot past the bytes: %d queued, %v left, backlog %d; want 1, 1, %d", len(work), left(), h.backlog.Load(), snapshotBytes(big))
	}
	r.take(h, work, &control.Presence{Area: 1})
	r.take(h, work, &control.Snapshot{Area: 3, Seq: 1, Blob: []byte{1}})
	if len(work) != 2 || left() != 2 {
		t.Fatalf("a snapshot finding the backlog full: %d queued, %v left; want 2, 2", len(work), left())
	}
	r.take(h, work, &control.Presence{Area: 2})
	if n := counted(t, r.metrics.hostRefusals.WithLabelValues("presence", RefuseBacklog)); len(work) != 2 || n != 1 {
		t.Fatalf("a presence finding the backlog full: %d queued, %v refused; want 2, 1", len(work), n)
	}
	took := make(chan struct{})
	go func() {
		defer close(took)
		r.take(h, work, &control.Heartbeat{UnixMS: 7})
	}()
	select {
	case <-took:
	case <-time.After(10 * time.Second):
		t.Fatal("a heartbeat waited behind a full backlog")
	}
	select {
	case m := <-h.soon:
		if ack, ok := m.(*control.HeartbeatAck); !ok || ack.SentMS != 7 {
			t.Fatalf("the heartbeat's answer: %#v", m)
		}
	default:
		t.Fatal("a heartbeat behind a full backlog was not answered")
	}
	if h.beat.UnixMS != 7 {
		t.Fatalf("the heartbeat's figures were not taken: %+v", h.beat)
	}

	// An Area's final snapshot is never dropped: it waits for room.
	final := &control.Snapshot{Area: 4, Seq: 9, Final: true, Blob: []byte{1, 2}}
	took = make(chan struct{})
	go func() {
		defer close(took)
		r.take(h, work, final)
	}()
	select {
	case <-took:
		t.Fatalf("a final snapshot behind a full backlog was not kept waiting (%v left)", left())
	case <-time.After(200 * time.Millisecond): // waiting, as it should (or not run yet: either way nothing is dropped)
	}
	first := <-work // the handler takes one: room for the final snapshot
	select {
	case <-took:
	case <-time.After(10 * time.Second):
		t.Fatal("a final snapshot still waits with room in the backlog")
	}
	if left() != 2 || len(work) != 2 {
		t.Fatalf("a final snapshot behind a full backlog: %v left, %d queued; want 2 (the others), 2", left(), len(work))
	}
	h.backlog.Add(-snapshotBytes(first.(*control.Snapshot))) // what the handler gives back for the one taken above

	close(h.gone) // nothing queued is handled for a host that is gone
	close(work)
	outcomes := counted(t, r.metrics.snapshots) + counted(t, r.metrics.hostRefusals)
	r.handleLink(context.Background(), h, work)
	if got := counted(t, r.metrics.snapshots) + counted(t, r.metrics.hostRefusals); got != outcomes {
		t.Fatalf("the handler took %v messages of a host that is gone", got-outcomes)
	}
	if h.backlog.Load() != 0 {
		t.Fatalf("after the handler: backlog %d bytes; want 0", h.backlog.Load())
	}
	if len(h.soon) != 0 {
		t.Fatalf("the handler answered %d messages of a host that is gone", len(h.soon))
	}

	// A host that stops sends three messages per Area at once: the
	// backlog holds four per slot of a large pool.
	for _, tt := range []struct{ pool, want int }{{64, linkBacklog}, {1024, linkBacklog}, {8192, 32768}} {
		if got := linkBacklogFor(tt.pool); got != tt.want {
			t.Errorf("backlog for a pool of %d: %d; want %d", tt.pool, got, tt.want)
		}
	}
}

// counted sums the series of a counter (vector).
func counted(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	c.Collect(ch)
	close(ch)
	sum := 0.0
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		sum += d.GetCounter().GetValue()
	}
	return sum
}

// TestWaitLinksWaitsForTheLinksServed: WaitLinks does not report the links
// ended while a control connection is still being served, and does once it
// ends; the director closes its store only then.
func TestWaitLinksWaitsForTheLinksServed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.RegisterTimeout = time.Minute
	r, err := New(cfg, nil) // the store is never reached: the connection never registers
	if err != nil {
		t.Fatal(err)
	}
	host, dir := net.Pipe()
	served := make(chan struct{})
	go func() { defer close(served); r.ServeConn(context.Background(), dir) }()
	for deadline := time.Now().Add(10 * time.Second); r.Unregistered() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the connection was not admitted")
		}
	}
	if r.WaitLinks(50 * time.Millisecond) {
		t.Fatal("WaitLinks reported the links ended while one is served")
	}
	host.Close()
	if !r.WaitLinks(10 * time.Second) {
		t.Fatal("WaitLinks still waits after the link ended")
	}
	<-served
}
