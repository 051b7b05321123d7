package area

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
)

// director wraps the scripted areatest.Director for tests: failures fail
// the test.
type director struct {
	*areatest.Director
	t *testing.T
}

func newDirector(t *testing.T) *director {
	t.Helper()
	d, err := areatest.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return &director{Director: d, t: t}
}

func (d *director) send(m control.Message) {
	d.t.Helper()
	if err := d.Send(m); err != nil {
		d.t.Fatal(err)
	}
}

// expect returns the next message of T's type, skipping others.
func expect[T control.Message](d *director, within time.Duration) T {
	d.t.Helper()
	m, err := areatest.Expect[T](d.Director, within)
	if err != nil {
		d.t.Fatal(err)
	}
	return m
}

// testHost starts a Host registered with a fake director and returns both.
func testHost(t *testing.T, tune func(*Config)) (*Host, *director) {
	t.Helper()
	d := newDirector(t)
	cfg := DefaultConfig()
	cfg.Director = d.Addr()
	cfg.SpawnToken = "spawn-token"
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Name = t.Name()
	cfg.ShutdownGrace = 50 * time.Millisecond
	cfg.FinalAckTimeout = 300 * time.Millisecond // the fake director acks only when a test says so
	if tune != nil {
		tune(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, ErrRegistration) {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("host did not stop")
		}
	})
	if _, err := d.Registered(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	return h, d
}

// spawn makes Area id live on the host: a village's open floor of w x h
// with nobody else on it, so a test's steps land where it says.
func (d *director) spawn(id uint32, w, h int) {
	d.t.Helper()
	if err := d.SpawnTemplate(id, w, h, "village", build.TemplateEmpty); err != nil {
		d.t.Fatal(err)
	}
}

// spawnBusy makes Area id live with a wanderer per 256 squares walking
// about (the Area a director that names no template gets): a step may
// then be BLOCKED by one.
func (d *director) spawnBusy(id uint32, w, h int) {
	d.t.Helper()
	if err := d.Spawn(id, w, h); err != nil {
		d.t.Fatal(err)
	}
}

// grant registers a grant for account in area and returns its token.
func (d *director) grant(area uint32, account uint64, joinID uint64, x, y int32, ttl time.Duration) string {
	d.t.Helper()
	tok, err := d.Grant(area, account, joinID, x, y, ttl)
	if err != nil {
		d.t.Fatal(err)
	}
	return tok
}

// client is a test WebSocket client speaking wire. It keeps its view of
// the Area (net/view) from every message the test consumes.
type client struct {
	t      *testing.T
	c      *gate.ClientConn
	msgs   chan wire.Message
	errs   chan error
	v      *view.View
	entity uint32 // from the last hello_ack

	mu     sync.Mutex
	shorts [][]byte // every short snapshot as it came, bytes and all
}

// shortFrames returns the short snapshots the client got so far.
func (cl *client) shortFrames() [][]byte {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return slices.Clone(cl.shorts)
}

func dial(t *testing.T, h *Host) *client {
	t.Helper()
	c, err := gate.Dial(context.Background(), h.WSURL())
	if err != nil {
		t.Fatal(err)
	}
	cl := &client{t: t, c: c, msgs: make(chan wire.Message, 4096), errs: make(chan error, 1), v: view.New()}
	go func() {
		var st wire.Stream // this connection's
		for {
			b, err := c.ReadMessage()
			if err != nil {
				cl.errs <- err
				close(cl.msgs)
				return
			}
			if wire.IsShortSnapshot(b) {
				cl.mu.Lock()
				cl.shorts = append(cl.shorts, slices.Clone(b))
				cl.mu.Unlock()
			}
			m, err := st.Decode(b)
			if err != nil {
				cl.errs <- fmt.Errorf("decode from server: %w", err)
				close(cl.msgs)
				return
			}
			cl.msgs <- m
		}
	}()
	t.Cleanup(func() { c.Close(1000, "") })
	return cl
}

func (cl *client) send(m wire.Message) {
	cl.t.Helper()
	b, err := wire.Encode(m)
	if err != nil {
		cl.t.Fatal(err)
	}
	if err := cl.c.WriteMessage(b); err != nil {
		cl.t.Fatal(err)
	}
}

// next returns the next message (failing after within).
func (cl *client) next(within time.Duration) wire.Message {
	cl.t.Helper()
	m := cl.tryNext(within)
	if m == nil {
		cl.t.Fatalf("no message within %v", within)
	}
	return m
}

// tryNext is next, returning nil when nothing arrives within the time.
func (cl *client) tryNext(within time.Duration) wire.Message {
	cl.t.Helper()
	select {
	case m, ok := <-cl.msgs:
		if !ok {
			cl.t.Fatalf("connection ended: %v", <-cl.errs)
		}
		if ack, ok := m.(*wire.HelloAck); ok {
			cl.entity = ack.Entity
		}
		if err := cl.v.Apply(m); err != nil {
			cl.t.Fatalf("the server's %s breaks the protocol: %v", m.Type(), err)
		}
		return m
	case <-time.After(within):
		return nil
	}
}

// expectMsg returns the next message of T's type, skipping only what
// keeps the view (snapshot, area_info, static, presence) or what the
// character carries (inventory, container, recipes, trade).
func expectMsg[T wire.Message](cl *client, within time.Duration) T {
	cl.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := cl.next(time.Until(deadline))
		if v, ok := m.(T); ok {
			return v
		}
		switch m.(type) {
		case *wire.Snapshot, *wire.AreaInfo, *wire.Static, *wire.Presence, *wire.Inventory, *wire.Container, *wire.Recipes, *wire.Trade:
			continue
		}
		var zero T
		cl.t.Fatalf("got %s %+v; want %T", m.Type(), m, zero)
	}
}

// hello joins with tok and returns the ack.
func (cl *client) hello(tok string, joinID uint64) *wire.HelloAck {
	cl.t.Helper()
	cl.send(&wire.Hello{Grant: tok, JoinID: joinID, Versions: []uint16{wire.Version}})
	ack := expectMsg[*wire.HelloAck](cl, 5*time.Second)
	if ack.JoinID != joinID {
		cl.t.Fatalf("hello_ack join_id = %d; want %d", ack.JoinID, joinID)
	}
	return ack
}

// closed waits for the connection's end and returns the close error.
func (cl *client) closed(within time.Duration) error {
	cl.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-cl.msgs:
			if !ok {
				return <-cl.errs
			}
		case <-deadline:
			cl.t.Fatalf("connection still open after %v", within)
			return nil
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// you returns the client's own entity as its view holds it.
func (cl *client) you() wire.EntityState {
	cl.t.Helper()
	e, ok := cl.v.Entities[cl.entity]
	if !ok {
		cl.t.Fatalf("the client's view lacks its own entity %d", cl.entity)
	}
	return e
}
