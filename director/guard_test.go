package director

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist"
)

const testHostKey = "test-host-key-4711"

// fakeHost is a control connection registered with the host key and
// driven by the test: what the director sends arrives in msgs; it beats
// every 500 ms so the director keeps it.
type fakeHost struct {
	t    testing.TB
	c    *control.Conn
	id   uint32
	msgs chan control.Message
}

func dialFakeHost(t testing.TB, r *realm, name string) *fakeHost {
	t.Helper()
	c, err := control.Dial(r.d.controlAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Send(&control.Register{HostKey: testHostKey, Name: name, WSURL: "ws://127.0.0.1:1/ws", PoolSize: 8, PID: 1, Boot: 1}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := c.Recv()
	reg, ok := m.(*control.Registered)
	if err != nil || !ok || reg.Error != "" {
		t.Fatalf("register %s: %#v, %v", name, m, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	f := &fakeHost{t: t, c: c, id: reg.HostID, msgs: make(chan control.Message, 256)}
	go func() {
		defer close(f.msgs)
		for {
			m, err := c.Recv()
			if err != nil {
				return
			}
			f.msgs <- m
		}
	}()
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if c.Send(&control.Heartbeat{UnixMS: time.Now().UnixMilli()}) != nil {
				return
			}
		}
	}()
	return f
}

func (f *fakeHost) send(m control.Message) {
	f.t.Helper()
	if err := f.c.Send(m); err != nil {
		f.t.Fatal(err)
	}
}

// await returns the first message from the director match accepts.
func (f *fakeHost) await(what string, match func(control.Message) bool) control.Message {
	f.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m, ok := <-f.msgs:
			if !ok {
				f.t.Fatalf("link closed waiting for %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			f.t.Fatalf("no %s within 15s", what)
		}
	}
}

// ackOf waits for the director's ack of (area, seq).
func (f *fakeHost) ackOf(area uint32, seq uint64) *control.SnapshotAck {
	f.t.Helper()
	return f.await("snapshot ack", func(m control.Message) bool {
		a, ok := m.(*control.SnapshotAck)
		return ok && a.Area == area && a.Seq == seq
	}).(*control.SnapshotAck)
}

// metric reads one series (name with its labels, as the text format
// writes them) from the director's metrics listener; a series not there
// yet reads 0.
func (r *realm) metric(series string) float64 {
	r.t.Helper()
	resp, err := http.Get("http://" + r.d.MetricsAddr() + "/metrics")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				r.t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f
		}
	}
	return 0
}

func refusedSeries(typ, reason string) string {
	return `ley_host_message_refusals_total{reason="` + reason + `",type="` + typ + `"}`
}

func blobOf(t testing.TB, w, h int) []byte {
	t.Helper()
	a, err := ecs.NewArea(ecs.Config{ID: 1, W: w, H: h})
	if err != nil {
		t.Fatal(err)
	}
	b, err := persist.Save(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedHostMessagesAreRefused (issue 12, finding 1): a second
// process registering with the host key sends forged messages about an
// Area live on another host and about one live nowhere. None is taken:
// the store is unchanged by them, the Area keeps its host and keeps
// working (its real host's later snapshots are written), and a counter
// counts each refusal by type and reason.
func TestForgedHostMessagesAreRefused(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.HostKey = testHostKey })
	ctx := context.Background()
	c, acct := r.player("ann")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := c.CreateArea(ctx, "Cold", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, home.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.snapshot(0)
	waitFor(t, "a first snapshot stored", func() bool {
		_, seq, _, err := r.store.AreaSnapshot(ctx, store.AreaID(home.ID))
		return err == nil && seq > 0
	})
	r.d.mu.Lock()
	l := r.d.areas[store.AreaID(home.ID)]
	realHost, epoch := l.host, uint64(l.epoch)
	r.d.mu.Unlock()

	f := dialFakeHost(t, r, "forger")
	garbage := []byte("not a blob at all")
	far := []control.Character{{Account: acct.ID, X: 777, Y: 888, Placed: true}}
	forged := []struct {
		msg          control.Message
		typ, reason  string
		answered     func(control.Message) bool // the answer the forger gets, if any
		answeredWhat string
	}{
		{&control.Snapshot{Area: home.ID, Epoch: epoch, Seq: 1 << 62, Blob: garbage, Characters: far}, "snapshot", refuseOtherHost,
			func(m control.Message) bool {
				a, ok := m.(*control.SnapshotAck)
				return ok && a.Area == home.ID && a.Error != ""
			}, "an error ack"},
		{&control.Snapshot{Area: cold.ID, Epoch: 1, Seq: 1 << 62, Blob: garbage, Characters: far}, "snapshot", refuseNotLive,
			func(m control.Message) bool {
				a, ok := m.(*control.SnapshotAck)
				return ok && a.Area == cold.ID && a.Error != ""
			}, "an error ack"},
		{&control.Presence{Area: home.ID, Peers: 0}, "presence", refuseOtherHost, nil, ""},
		{&control.Presence{Area: cold.ID, Peers: 3, Accounts: []uint64{acct.ID}}, "presence", refuseNotLive, nil, ""},
		{&control.PortalOut{Transfer: "forged-1", Area: home.ID, Epoch: epoch, Account: acct.ID, ToArea: cold.ID, DeadlineMS: time.Now().Add(time.Minute).UnixMilli()},
			"portal_out", refuseOtherHost,
			func(m control.Message) bool {
				pr, ok := m.(*control.PortalResult)
				return ok && pr.Transfer == "forged-1" && !pr.OK && pr.Grant == ""
			},
			"a refusal without a grant"},
		{&control.AreaClosed{Area: home.ID, Epoch: epoch, Failed: true, Reason: "forged"}, "area_closed", refuseOtherHost, nil, ""},
		{&control.AreaClosed{Area: home.ID}, "area_closed", refuseOtherHost, nil, ""},
		{&control.AreaReady{Area: home.ID, Epoch: epoch}, "area_ready", refuseUnsolicited, nil, ""},
		{&control.GrantAck{Area: home.ID, Token: j.Grant}, "grant_ack", refuseUnsolicited, nil, ""},
		{&control.Inspection{ID: 1, Areas: []control.AreaState{{Area: home.ID, Epoch: epoch}}}, "inspection", refuseUnsolicited, nil, ""},
		{&control.SpawnArea{Area: home.ID}, "spawn_area", refuseUnexpected, nil, ""},
	}
	want := map[string]float64{}
	for _, fm := range forged {
		f.send(fm.msg)
		want[refusedSeries(fm.typ, fm.reason)]++
		if fm.answered != nil {
			f.await(fm.answeredWhat, fm.answered)
		}
	}
	for series, n := range want {
		waitFor(t, series, func() bool { return r.metric(series) == n })
	}

	// Nothing forged reached the store or the registry.
	blob, seq, _, err := r.store.AreaSnapshot(ctx, store.AreaID(home.ID))
	if err != nil || seq >= 1<<62 || persist.Check(blob, 16, 16) != nil {
		t.Fatalf("home's stored snapshot: seq %d, blob check %v, %v; want the real host's", seq, persist.Check(blob, 16, 16), err)
	}
	if ch, err := r.store.Character(ctx, store.AccountID(acct.ID)); err != nil || ch.X == 777 || ch.Y == 888 {
		t.Fatalf("character %+v, %v; want it where the real host put it", ch, err)
	}
	if blob, seq, _, err := r.store.AreaSnapshot(ctx, store.AreaID(cold.ID)); err != nil || seq != 0 || len(blob) != 0 {
		t.Fatalf("cold area's snapshot: %q, seq %d, %v; want none", blob, seq, err)
	}
	if _, err := r.store.Transfer(ctx, "forged-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("forged transfer recorded: %v", err)
	}
	r.d.mu.Lock()
	l = r.d.areas[store.AreaID(home.ID)]
	still := l != nil && l.host == realHost && uint64(l.epoch) == epoch
	r.d.mu.Unlock()
	if !still {
		t.Fatal("home is no longer live on its real host at its epoch")
	}

	// The real host goes on: the player moves, and its later snapshots
	// are written.
	p.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	p.snapshot(1)
	waitFor(t, "the real host's next snapshot stored", func() bool {
		_, after, _, err := r.store.AreaSnapshot(ctx, store.AreaID(home.ID))
		return err == nil && after > seq
	})
	if got := r.metric(`ley_snapshot_writes_total{result="refused"}`); got != 2 {
		t.Errorf("snapshots refused = %v; want 2", got)
	}
}

// TestOwnHostSnapshotChecks (issue 12, finding 1): even from the Area's
// own host, a snapshot is written only within the seq bound, with its
// characters on the grid and a blob a host could load; answers and
// closes must name the Area's current epoch. Each refusal is answered
// and counted; the good snapshot after them is written.
func TestOwnHostSnapshotChecks(t *testing.T) {
	r := startRealm(t, func(c *Config) {
		c.HostKey = testHostKey
		c.Spawn.MinHosts, c.Spawn.MaxHosts = 0, 0
	})
	ctx := context.Background()
	f := dialFakeHost(t, r, "owner")
	c, acct := r.player("bo")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan error, 1)
	go func() { _, err := c.Join(ctx, home.ID); joined <- err }()
	spawn := f.await("spawn_area", func(m control.Message) bool { _, ok := m.(*control.SpawnArea); return ok }).(*control.SpawnArea)
	f.send(&control.AreaReady{Area: home.ID, Epoch: spawn.Epoch + 1}) // not this incarnation's
	f.send(&control.AreaReady{Area: home.ID, Epoch: spawn.Epoch})
	grant := f.await("grant", func(m control.Message) bool { _, ok := m.(*control.Grant); return ok }).(*control.Grant)
	f.send(&control.GrantAck{Area: home.ID + 1, Token: grant.Token}) // another Area's
	f.send(&control.GrantAck{Area: home.ID, Token: grant.Token})
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the early answers refused", func() bool {
		return r.metric(refusedSeries("area_ready", refuseStaleEpoch)) == 1 && r.metric(refusedSeries("grant_ack", refuseUnsolicited)) == 1
	})

	good := blobOf(t, 16, 16)
	next := spawn.Seq + 1
	on := []control.Character{{Account: acct.ID, X: 3, Y: 4, Placed: true}}
	tests := []struct {
		name   string
		snap   control.Snapshot
		reason string // "" for written
	}{
		{"a seq of 2^62", control.Snapshot{Seq: 1 << 62, Blob: good}, refuseSeqJump},
		{"a seq a billion ahead", control.Snapshot{Seq: next + 1<<30, Blob: good}, refuseSeqJump},
		{"a blob that is not one", control.Snapshot{Seq: next, Blob: []byte("garbage")}, refuseBadBlob},
		{"a blob of another size", control.Snapshot{Seq: next, Blob: blobOf(t, 8, 8)}, refuseBadBlob},
		{"a character off the grid", control.Snapshot{Seq: next, Blob: good, Characters: []control.Character{{Account: acct.ID, X: 777, Y: 888}}}, refuseBadCharacter},
		{"a character at a negative square", control.Snapshot{Seq: next, Blob: good, Characters: []control.Character{{Account: acct.ID, X: -1, Y: 0}}}, refuseBadCharacter},
		{"another incarnation", control.Snapshot{Seq: next, Blob: good, Epoch: spawn.Epoch + 7}, refuseStaleEpoch},
		{"the next snapshot", control.Snapshot{Seq: next, Blob: good, Characters: on}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.snap
			m.Area = home.ID
			if m.Epoch == 0 {
				m.Epoch = spawn.Epoch
			}
			before := r.metric(refusedSeries("snapshot", tt.reason))
			f.send(&m)
			ack := f.ackOf(home.ID, m.Seq)
			_, seq, _, err := r.store.AreaSnapshot(ctx, store.AreaID(home.ID))
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if ack.Error != "" || seq != store.Seq(next) {
					t.Fatalf("ack %+v, stored seq %d; want written at %d", ack, seq, next)
				}
				if ch, _ := r.store.Character(ctx, store.AccountID(acct.ID)); ch.X != 3 || ch.Y != 4 {
					t.Fatalf("character at (%d,%d); want (3,4)", ch.X, ch.Y)
				}
				return
			}
			if !strings.Contains(ack.Error, tt.reason) || seq != store.Seq(spawn.Seq) {
				t.Fatalf("ack %+v, stored seq %d; want refused (%s), seq still %d", ack, seq, tt.reason, spawn.Seq)
			}
			if got := r.metric(refusedSeries("snapshot", tt.reason)); got != before+1 {
				t.Fatalf("%s counted %v; want %v", tt.reason, got, before+1)
			}
		})
	}

	// A close of another incarnation is refused; the Area stays live.
	f.send(&control.AreaClosed{Area: home.ID, Epoch: spawn.Epoch + 1})
	waitFor(t, "the stale close refused", func() bool { return r.metric(refusedSeries("area_closed", refuseStaleEpoch)) == 1 })
	r.d.mu.Lock()
	live := r.d.areas[store.AreaID(home.ID)] != nil
	r.d.mu.Unlock()
	if !live {
		t.Fatal("a stale close unregistered the Area")
	}
}

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
		l := &live{seqFrom: tt.from, seqSince: t0, tickRate: tt.rate}
		got := seqLimit(l, t0.Add(tt.elapsed))
		if got < tt.allowed || got >= tt.forbidden {
			t.Errorf("%s: seqLimit = %d; want in [%d, %d)", tt.name, got, tt.allowed, tt.forbidden)
		}
	}
}

func TestLogLimiter(t *testing.T) {
	l := logLimiter{every: time.Hour}
	steps := []struct {
		key      string
		ok       bool
		wantHeld int
	}{
		{"a", true, 0},
		{"a", false, 0},
		{"a", false, 0},
		{"b", true, 0},
		{"b", false, 0},
	}
	for i, s := range steps {
		held, ok := l.allow(s.key)
		if ok != s.ok || held != s.wantHeld {
			t.Errorf("step %d (%s): allow = %d, %v; want %d, %v", i, s.key, held, ok, s.wantHeld, s.ok)
		}
	}
	l.slots["a"].last = time.Now().Add(-2 * time.Hour) // the period passed
	if held, ok := l.allow("a"); !ok || held != 2 {
		t.Errorf("after the period: allow = %d, %v; want 2 held, allowed", held, ok)
	}
}
