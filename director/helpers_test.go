package director

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
)

// leyBin is the ley binary built once for the tests: the director spawns
// it as real area host processes.
var leyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ley-director-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leyBin = filepath.Join(dir, "ley")
	// The binary carries the test machinery (failpoints) when these tests
	// do: see leyBuildTags.
	build := exec.Command("go", "build", "-tags", leyBuildTags, "-o", leyBin, "../cmd/ley")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ley:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testConfig is a director config for tests: ports on 127.0.0.1:0, real
// host processes, short intervals.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.HTTP, cfg.Control = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Spawn.Binary = leyBin
	cfg.Spawn.MinHosts, cfg.Spawn.MaxHosts = 1, 2
	cfg.Spawn.PersistEvery = 300 * time.Millisecond
	cfg.Spawn.ResumeGrace = 200 * time.Millisecond
	// Areas park soon after they freeze, well before the idle grace
	// unloads them: every realm under test builds its parked Areas
	// again as players come back, cross and are closed.
	cfg.Spawn.ParkAfter = 100 * time.Millisecond
	cfg.Spawn.LogLevel = "warn"
	cfg.Spawn.MemLimit = "512MiB"
	cfg.Spawn.ShutdownGrace = 100 * time.Millisecond // each realm's cleanup waits it out with its hosts
	cfg.AreaIdleGrace = 500 * time.Millisecond
	cfg.CloseGrace = 300 * time.Millisecond
	cfg.AuthBurst = 1000
	cfg.LoadProvisioning = true
	cfg.Logger = slog.New(slog.DiscardHandler)
	if os.Getenv("LEY_TEST_LOG") != "" { // the director's log on stderr, to see what a failing test did
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// realm is a director under test with its store.
type realm struct {
	t     testing.TB
	d     *Director
	store store.Store
	url   string
}

// startRealm runs a director on a fresh SQLite store (tune may change the
// config) until the test ends, and waits for its minimum hosts.
func startRealm(t testing.TB, tune func(*Config)) *realm {
	t.Helper()
	r := launchRealm(t, tune)
	r.waitHosts(r.d.cfg.Spawn.MinHosts)
	return r
}

// launchRealm is startRealm without waiting for any host.
func launchRealm(t testing.TB, tune func(*Config)) *realm {
	t.Helper()
	return launchRealmWith(t, tune, nil)
}

// launchRealmWith is launchRealm that calls prepare (if not nil) on the
// director between Listen and Run, where ley run seeds its demo.
func launchRealmWith(t testing.TB, tune func(*Config), prepare func(*Director)) *realm {
	t.Helper()
	cfg := testConfig()
	if tune != nil {
		tune(&cfg)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ley.db"))
	if err != nil {
		t.Fatal(err)
	}
	return runRealm(t, cfg, st, prepare)
}

// runRealm runs a director of cfg on st until the test ends (prepare, if
// not nil, is called between Listen and Run).
func runRealm(t testing.TB, cfg Config, st store.Store, prepare func(*Director)) *realm {
	t.Helper()
	d, err := New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	httpLn, ctlLn, err := d.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, httpLn, ctlLn) }()
	t.Cleanup(func() {
		d.StopRealm() // its hosts stop with it (they would outlive a director that stops alone)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("director Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("director did not stop")
		}
	})
	return &realm{t: t, d: d, store: st, url: "http://" + d.httpAddr}
}

func (r *realm) waitHosts(n int) {
	r.t.Helper()
	waitFor(r.t, fmt.Sprintf("%d hosts registered", n), func() bool { return len(r.d.registry.Hosts()) >= n })
}

// live returns area's live record in the registry (nil when not live).
func (r *realm) live(area uint32) *registry.Live { return r.d.registry.Area(store.AreaID(area)) }

// host returns the registered host id's figures, if it is registered.
func (r *realm) host(id uint32) (registry.HostStats, bool) {
	for _, h := range r.d.registry.Hosts() {
		if h.ID == id {
			return h, true
		}
	}
	return registry.HostStats{}, false
}

var accounts atomic.Int64

// client returns an API client of the realm whose requests and answers
// are held to openapi.yaml (see specCheck): a mismatch fails the test.
func (r *realm) client() *dirclient.Client {
	c := dirclient.New(r.url)
	c.HTTP = r.checked(c.HTTP, true)
	return c
}

// player registers and logs in a fresh account.
func (r *realm) player(name string) (*dirclient.Client, dirclient.Account) {
	r.t.Helper()
	c := r.client()
	email := fmt.Sprintf("%s-%d@test.ley", name, accounts.Add(1))
	ctx := context.Background()
	if _, err := c.Register(ctx, email, "correct horse battery", name); err != nil {
		r.t.Fatal(err)
	}
	a, err := c.Login(ctx, email, "correct horse battery")
	if err != nil {
		r.t.Fatal(err)
	}
	return c, a
}

// admin makes the client's account an admin.
func (r *realm) admin(a dirclient.Account) {
	r.t.Helper()
	if err := r.store.SetAdmin(context.Background(), store.AccountID(a.ID), true); err != nil {
		r.t.Fatal(err)
	}
}

func refusal(t testing.TB, err error) string {
	t.Helper()
	var e *dirclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v; want an API refusal", err)
	}
	return e.Code
}

// peer is a game client connection with its view of the Area (kept from
// the messages the test consumes).
type peer struct {
	t      testing.TB
	c      *gate.ClientConn
	msgs   chan wire.Message
	done   chan error
	v      *view.View
	entity uint32
	// inv is the last inventory the host sent (until keeps it).
	inv *wire.Inventory
}

// you returns the player's own entity as the peer's view holds it.
func (p *peer) you() wire.EntityState {
	p.t.Helper()
	e, ok := p.v.Entities[p.entity]
	if !ok {
		p.t.Fatalf("the view lacks the player's entity %d", p.entity)
	}
	return e
}

// snapshotWhere returns the first snapshot after which ok(you) holds.
func (p *peer) snapshotWhere(ok func(you wire.EntityState) bool) *wire.Snapshot {
	p.t.Helper()
	return p.until(func(m wire.Message) bool {
		if _, is := m.(*wire.Snapshot); !is {
			return false
		}
		e, in := p.v.Entities[p.entity]
		return in && ok(e)
	}).(*wire.Snapshot)
}

// connect opens the join's WebSocket and says hello; it returns the peer
// and its hello_ack.
func connect(t testing.TB, j dirclient.Join) (*peer, *wire.HelloAck) {
	t.Helper()
	p, ack, err := dialPeer(j)
	if err != nil {
		t.Fatal(err)
	}
	p.t = t
	t.Cleanup(func() { p.c.Close(1000, "") })
	return p, ack
}

// dialPeer is connect for goroutines other than the test's: it reports
// failures as errors, and the caller closes the peer's connection.
func dialPeer(j dirclient.Join) (*peer, *wire.HelloAck, error) {
	c, err := dialWS(j.WSURL)
	if err != nil {
		return nil, nil, err
	}
	p := &peer{c: c, msgs: make(chan wire.Message, 4096), done: make(chan error, 1), v: view.New()}
	go func() {
		var st wire.Stream // this connection's
		for {
			b, err := c.ReadMessage()
			if err != nil {
				p.done <- err
				close(p.msgs)
				return
			}
			m, err := st.Decode(b)
			if err != nil {
				p.done <- err
				close(p.msgs)
				return
			}
			p.msgs <- m
		}
	}()
	if err := p.write(&wire.Hello{Grant: j.Grant, JoinID: j.JoinID, Versions: []uint16{wire.Version}}); err != nil {
		c.Close(1000, "")
		return nil, nil, err
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				return nil, nil, fmt.Errorf("connection ended before hello_ack: %v", <-p.done)
			}
			switch m := m.(type) {
			case *wire.HelloAck:
				p.entity = m.Entity
				return p, m, nil
			case *wire.Error:
				c.Close(1000, "")
				return nil, nil, fmt.Errorf("hello refused: %v %s", m.Code, m.Detail)
			}
		case <-deadline:
			c.Close(1000, "")
			return nil, nil, fmt.Errorf("no hello_ack within 15s")
		}
	}
}

// write encodes and sends m.
func (p *peer) write(m wire.Message) error {
	b, err := wire.Encode(m)
	if err != nil {
		return err
	}
	return p.c.WriteMessage(b)
}

func (p *peer) send(m wire.Message) {
	p.t.Helper()
	if err := p.write(m); err != nil {
		p.t.Fatal(err)
	}
}

// until returns the first message for which match is true; an error
// message fails the test unless matched.
func (p *peer) until(match func(wire.Message) bool) wire.Message {
	p.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("connection ended: %v", <-p.done)
			}
			if err := p.v.Apply(m); err != nil {
				p.t.Fatalf("the host's %s breaks the protocol: %v", m.Type(), err)
			}
			if inv, ok := m.(*wire.Inventory); ok {
				p.inv = inv
			}
			if match(m) {
				return m
			}
			if e, ok := m.(*wire.Error); ok {
				p.t.Fatalf("error from the host: %v %s", e.Code, e.Detail)
			}
		case <-deadline:
			p.t.Fatal("no matching message within 15s")
		}
	}
}

// snapshot returns the next snapshot acknowledging at least seq.
func (p *peer) snapshot(ackAtLeast uint32) *wire.Snapshot {
	p.t.Helper()
	return p.until(func(m wire.Message) bool {
		s, ok := m.(*wire.Snapshot)
		return ok && s.AckSeq >= ackAtLeast
	}).(*wire.Snapshot)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func gateDial(url string) (*gate.ClientConn, error) { return gate.Dial(context.Background(), url) }

// wssConfig verifies the servers of the wss:// URLs the tests dial (the
// TLS-terminating proxy of the network namespace test); nil: the system's
// roots.
var wssConfig atomic.Pointer[tls.Config]

// dialWS opens a game connection to url, ws:// or wss://.
func dialWS(url string) (*gate.ClientConn, error) {
	if strings.HasPrefix(url, "wss://") {
		return gate.DialTLS(context.Background(), url, wssConfig.Load())
	}
	return gate.Dial(context.Background(), url)
}

// waitFrozen waits until the host of area reports no active Area in a
// heartbeat sent after the call began (the area froze).
func (r *realm) waitFrozen(t testing.TB, area store.AreaID) {
	t.Helper()
	since := time.Now()
	waitFor(t, "the area frozen", func() bool {
		l := r.live(uint32(area))
		if l == nil {
			return false
		}
		h, ok := r.host(l.Host.ID)
		return ok && time.Now().Add(-h.BeatAge).After(since.Add(700*time.Millisecond)) && h.Beat.Active == 0
	})
}

// counter reads one series of d's metrics by name and label pairs
// (name, value, ...); a series not there yet reads 0.
func counter(t testing.TB, d *Director, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := d.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
