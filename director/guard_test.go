package director

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/director/registry"
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

// fakeHostRealm starts a realm that spawns no host and registers hosts
// by the test's host key: its only hosts are the test's fakeHosts. more,
// if not nil, changes the rest of its Config.
func fakeHostRealm(t *testing.T, more func(*Config)) *realm {
	t.Helper()
	return startRealm(t, func(c *Config) {
		c.HostKey = testHostKey
		c.Spawn.MinHosts, c.Spawn.MaxHosts = 0, 0
		if more != nil {
			more(c)
		}
	})
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

// serveJoin has c join area and plays the Area's host for it: the
// director places the Area on f, which makes it live and acks the grant.
// It returns the SpawnArea f was sent.
func (f *fakeHost) serveJoin(c *dirclient.Client, area uint32) *control.SpawnArea {
	f.t.Helper()
	joined := make(chan error, 1)
	go func() { _, err := c.Join(context.Background(), area); joined <- err }()
	spawn := f.await("spawn_area", func(m control.Message) bool { _, ok := m.(*control.SpawnArea); return ok }).(*control.SpawnArea)
	f.send(&control.AreaReady{Area: area, Epoch: spawn.Epoch})
	grant := f.await("grant", func(m control.Message) bool { _, ok := m.(*control.Grant); return ok }).(*control.Grant)
	f.send(&control.GrantAck{Area: area, Token: grant.Token})
	if err := <-joined; err != nil {
		f.t.Fatal(err)
	}
	return spawn
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
	b, err := persist.Save(a, nil, nil)
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
	l := r.live(home.ID)
	realHost, epoch := l.Host, uint64(l.Epoch)

	f := dialFakeHost(t, r, "forger")
	garbage := []byte("not a blob at all")
	far := []control.Character{{Account: acct.ID, X: 777, Y: 888, Placed: true}}
	forged := []struct {
		msg          control.Message
		typ, reason  string
		answered     func(control.Message) bool // the answer the forger gets, if any
		answeredWhat string
	}{
		{&control.Snapshot{Area: home.ID, Epoch: epoch, Seq: 1 << 62, Blob: garbage, Characters: far}, "snapshot", registry.RefuseOtherHost,
			func(m control.Message) bool {
				a, ok := m.(*control.SnapshotAck)
				return ok && a.Area == home.ID && a.Error != ""
			}, "an error ack"},
		{&control.Snapshot{Area: cold.ID, Epoch: 1, Seq: 1 << 62, Blob: garbage, Characters: far}, "snapshot", registry.RefuseNotLive,
			func(m control.Message) bool {
				a, ok := m.(*control.SnapshotAck)
				return ok && a.Area == cold.ID && a.Error != ""
			}, "an error ack"},
		{&control.Presence{Area: home.ID, Peers: 0}, "presence", registry.RefuseOtherHost, nil, ""},
		{&control.Presence{Area: cold.ID, Peers: 3, Accounts: []uint64{acct.ID}}, "presence", registry.RefuseNotLive, nil, ""},
		{&control.PortalOut{Transfer: "forged-1", Area: home.ID, Epoch: epoch, Account: acct.ID, ToArea: cold.ID, DeadlineMS: time.Now().Add(time.Minute).UnixMilli()},
			"portal_out", registry.RefuseOtherHost,
			func(m control.Message) bool {
				pr, ok := m.(*control.PortalResult)
				return ok && pr.Transfer == "forged-1" && !pr.OK && pr.Grant == ""
			},
			"a refusal without a grant"},
		{&control.AreaClosed{Area: home.ID, Epoch: epoch, Failed: true, Reason: "forged"}, "area_closed", registry.RefuseOtherHost, nil, ""},
		{&control.AreaClosed{Area: home.ID}, "area_closed", registry.RefuseOtherHost, nil, ""},
		{&control.AreaReady{Area: home.ID, Epoch: epoch}, "area_ready", registry.RefuseUnsolicited, nil, ""},
		{&control.GrantAck{Area: home.ID, Token: j.Grant}, "grant_ack", registry.RefuseUnsolicited, nil, ""},
		{&control.Inspection{ID: 1, Areas: []control.AreaState{{Area: home.ID, Epoch: epoch}}}, "inspection", registry.RefuseUnsolicited, nil, ""},
		{&control.SpawnArea{Area: home.ID}, "spawn_area", registry.RefuseUnexpected, nil, ""},
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
	l = r.live(home.ID)
	if still := l != nil && l.Host == realHost && uint64(l.Epoch) == epoch; !still {
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
	r := fakeHostRealm(t, nil)
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
		return r.metric(refusedSeries("area_ready", registry.RefuseStaleEpoch)) == 1 && r.metric(refusedSeries("grant_ack", registry.RefuseUnsolicited)) == 1
	})

	good := blobOf(t, 16, 16)
	next := spawn.Seq + 1
	on := []control.Character{{Account: acct.ID, X: 3, Y: 4, Placed: true}}
	tests := []struct {
		name   string
		snap   control.Snapshot
		reason string // "" for written
	}{
		{"a seq of 2^62", control.Snapshot{Seq: 1 << 62, Blob: good}, registry.RefuseSeqJump},
		{"a seq a billion ahead", control.Snapshot{Seq: next + 1<<30, Blob: good}, registry.RefuseSeqJump},
		{"a blob that is not one", control.Snapshot{Seq: next, Blob: []byte("garbage")}, registry.RefuseBadBlob},
		{"a blob of another size", control.Snapshot{Seq: next, Blob: blobOf(t, 8, 8)}, registry.RefuseBadBlob},
		{"a character off the grid", control.Snapshot{Seq: next, Blob: good, Characters: []control.Character{{Account: acct.ID, X: 777, Y: 888}}}, registry.RefuseBadCharacter},
		{"a character at a negative square", control.Snapshot{Seq: next, Blob: good, Characters: []control.Character{{Account: acct.ID, X: -1, Y: 0}}}, registry.RefuseBadCharacter},
		{"another incarnation", control.Snapshot{Seq: next, Blob: good, Epoch: spawn.Epoch + 7}, registry.RefuseStaleEpoch},
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
	// (The director answered the stray area_ready of epoch+1 above with
	// close_area, but it never spawned that incarnation: its close is not
	// one of a spawn the director gave up on, and a host cannot mute its
	// refusals by claiming incarnations.)
	f.send(&control.AreaClosed{Area: home.ID, Epoch: spawn.Epoch + 1})
	waitFor(t, "the stale close refused", func() bool { return r.metric(refusedSeries("area_closed", registry.RefuseStaleEpoch)) == 1 })
	if r.live(home.ID) == nil {
		t.Fatal("a stale close unregistered the Area")
	}
}

// TestForgedPresenceIsNotBelieved (issue 29, N8): a host that holds the
// host key reports presence in its own Area naming accounts the director
// never let in: they are not believed (not counted against the realm's
// cap, not shown as players), the refusal is counted, and a real player
// elsewhere gets in; the account it was granted is believed.
func TestForgedPresenceIsNotBelieved(t *testing.T) {
	r := fakeHostRealm(t, nil)
	ctx := context.Background()
	f := dialFakeHost(t, r, "forger")
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	c, acct := r.player("granted")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	f.serveJoin(c, home.ID)
	if err := admin.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 3, NewPlayersWelcome: true}); err != nil {
		t.Fatal(err)
	}
	invented := []uint64{acct.ID}
	for i := range uint64(40) {
		invented = append(invented, 1000+i)
	}
	f.send(&control.Presence{Area: home.ID, Peers: len(invented), Accounts: invented})
	waitFor(t, "the invented accounts refused", func() bool { return r.metric(refusedSeries("presence", registry.RefuseUnknownAccount)) >= 1 })
	if i, err := admin.Info(ctx); err != nil || i.Players != 1 {
		t.Fatalf("players %d (%v) after a presence of %d accounts, one of them granted; want 1", i.Players, err, len(invented))
	}
	if inside, n := r.d.registry.Inside(store.AccountID(acct.ID)); !inside || n != 1 {
		t.Fatalf("the realm's head count: %d (the granted account inside: %v); want 1, true", n, inside)
	}
}

// TestAGrantOutlivesTheAwayBodyItFound: a player joins an Area where an
// earlier body of its character waits away (a dropped connection); the
// host's presence reports that body (the grant counts as used), its grace
// runs out before the player's hello comes (a presence without it), then
// the hello binds a new body with the grant. That body is believed: the
// account the director let in stays known for as long as its grant could
// bind. (Forgotten at the presence without it, the player was bound on
// its host and unknown to the director for good: TestCrashPoints saw it
// under load.)
func TestAGrantOutlivesTheAwayBodyItFound(t *testing.T) {
	r := fakeHostRealm(t, nil)
	ctx := context.Background()
	f := dialFakeHost(t, r, "slow-hello")
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	c, acct := r.player("late")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	f.serveJoin(c, home.ID)
	f.send(&control.Presence{Area: home.ID, Away: []uint64{acct.ID}})
	f.send(&control.Presence{Area: home.ID})
	f.send(&control.Presence{Area: home.ID, Peers: 1, Accounts: []uint64{acct.ID}})
	bound := func() bool {
		areas, err := admin.LiveAreas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range areas {
			if l.Area == home.ID && slices.Contains(l.Accounts, acct.ID) {
				return true
			}
		}
		return false
	}
	refused := func() bool { return r.metric(refusedSeries("presence", registry.RefuseUnknownAccount)) > 0 }
	waitFor(t, "the new body believed or refused", func() bool { return bound() || refused() })
	if refused() || !bound() {
		t.Fatalf("the body the grant bound is not believed (bound %v, refused %v)", bound(), refused())
	}
}

// TestLateAreaReadyIsClosed: a host answers area_ready after the director
// gave up on that incarnation (the join timed out): the director tells it
// to close that incarnation, by its epoch, rather than leave it holding a
// place on the host that no one counts.
func TestLateAreaReadyIsClosed(t *testing.T) {
	r := fakeHostRealm(t, func(c *Config) { c.JoinTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	f := dialFakeHost(t, r, "slow-spawner")
	c, _ := r.player("patient")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan error, 1)
	go func() { _, err := c.Join(ctx, home.ID); joined <- err }()
	spawn := f.await("spawn_area", func(m control.Message) bool { _, ok := m.(*control.SpawnArea); return ok }).(*control.SpawnArea)
	if err := <-joined; err == nil {
		t.Fatal("the join succeeded with no area_ready")
	}
	f.send(&control.AreaReady{Area: home.ID, Epoch: spawn.Epoch})
	cl := f.await("close_area", func(m control.Message) bool { _, ok := m.(*control.CloseArea); return ok }).(*control.CloseArea)
	if cl.Area != home.ID || cl.Epoch != spawn.Epoch {
		t.Fatalf("close_area %+v; want area %d at epoch %d", cl, home.ID, spawn.Epoch)
	}
	// The closed incarnation's last words are the answer asked for, not
	// refused messages; an area_closed for an incarnation the director
	// never asked to close still is one.
	f.send(&control.Presence{Area: home.ID})
	f.send(&control.AreaClosed{Area: home.ID, Epoch: spawn.Epoch})
	f.send(&control.AreaClosed{Area: home.ID, Epoch: spawn.Epoch}) // said twice: the second is not asked for
	// A snapshot of an Area live nowhere is answered refused by the link's
	// handler, after the messages above (a heartbeat is answered as it is
	// read, before them: no barrier).
	const nowhere = 1 << 30
	f.send(&control.Snapshot{Area: nowhere, Epoch: 1, Seq: 1})
	f.ackOf(nowhere, 1)
	if n := r.metric(refusedSeries("area_closed", registry.RefuseNotLive)); n != 1 {
		t.Errorf("%v area_closed refused; want 1, the one not asked for", n)
	}
	if n := r.metric(refusedSeries("presence", registry.RefuseNotLive)); n != 0 {
		t.Errorf("the late incarnation's presence counted as %v refusals; want none", n)
	}
}

// TestSnapshotBudget (issue 29, N15): a host's snapshots past its byte
// budget are neither decoded nor written nor acked (the host keeps them),
// and counted; the ones within it are written. The budget here: 8 MiB at
// once, then a byte a second.
func TestSnapshotBudget(t *testing.T) {
	r := fakeHostRealm(t, func(c *Config) { c.HostSnapshotRate, c.HostSnapshotBurst = 1, 8<<20 })
	ctx := context.Background()
	f := dialFakeHost(t, r, "flooder")
	c, acct := r.player("budget")
	home, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	spawn := f.serveJoin(c, home.ID)
	good := blobOf(t, 16, 16)
	state := bytes.Repeat([]byte{7}, 1<<20) // a character's state of 1 MiB: each snapshot costs a little over 1 MiB
	const sent = 10
	for i := range sent {
		f.send(&control.Snapshot{Area: home.ID, Epoch: spawn.Epoch, Seq: spawn.Seq + 1 + uint64(i), Blob: good,
			Characters: []control.Character{{Account: acct.ID, X: 1, Y: 1, Placed: true, State: state}}})
	}
	within := uint64(7) // 7 of a little over 1 MiB fit in 8 MiB
	f.ackOf(home.ID, spawn.Seq+within)
	waitFor(t, "the snapshots past the budget counted", func() bool {
		return r.metric(`ley_snapshot_writes_total{result="over_budget"}`) == sent-float64(within)
	})
	if _, seq, _, err := r.store.AreaSnapshot(ctx, store.AreaID(home.ID)); err != nil || seq != store.Seq(spawn.Seq+within) {
		t.Fatalf("stored seq %d, %v; want %d, the last snapshot within the budget", seq, err, spawn.Seq+within)
	}
}

// TestGuessedAreasAreNotAdopted (issue 29, N1): a process holding the
// host key registers claiming every (Area, epoch) pair it can guess, with
// no placement credential or a made-up one: the director adopts none of
// them (it tells the host to close each), counts the refusals, and the
// Areas stay cold, made live later only where the director places them.
func TestGuessedAreasAreNotAdopted(t *testing.T) {
	r := fakeHostRealm(t, nil)
	ctx := context.Background()
	c, _ := r.player("victim")
	var areas []uint32
	for i := range 3 {
		a, err := c.CreateArea(ctx, fmt.Sprintf("Guessed %d", i), "home", 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		areas = append(areas, a.ID)
		if _, err := r.store.BeginIncarnation(ctx, store.AreaID(a.ID), store.HashToken("the real placement")); err != nil { // played once, now cold
			t.Fatal(err)
		}
	}
	var refs []control.AreaRef
	for _, a := range areas {
		for epoch := range uint64(4) {
			refs = append(refs, control.AreaRef{Area: a, Epoch: epoch}, control.AreaRef{Area: a, Epoch: epoch, Placement: "a guess"})
		}
	}
	if reg := registerRaw(t, r, &control.Register{HostKey: testHostKey, Name: "guesser", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 64, PID: 1, Boot: 1, Areas: refs}); reg.Error != "" {
		t.Fatalf("register: %q", reg.Error)
	}
	waitFor(t, "the guesses with the right epoch refused", func() bool {
		return r.metric(refusedSeries("register", registry.RefuseBadPlacement)) == float64(2*len(areas))
	})
	for _, a := range areas {
		if l := r.live(a); l != nil {
			t.Errorf("area %d adopted from a host that guessed it (epoch %d)", a, l.Epoch)
		}
	}
}

// registerRaw registers reg on a control connection of its own, sent as
// a host sends it (control.Conn.SendRegister), and returns the
// director's answer; a connection closed unanswered fails the test. The
// connection stays open until the test ends.
func registerRaw(t *testing.T, r *realm, reg *control.Register) *control.Registered {
	t.Helper()
	c, err := control.Dial(r.d.controlAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SendRegister(reg); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	m, err := c.Recv()
	ans, ok := m.(*control.Registered)
	if err != nil || !ok {
		t.Fatalf("register %s (pool %d): %#v, %v; want an answer", reg.Name, reg.PoolSize, m, err)
	}
	return ans
}

// TestAHostWithHundredsOfAreasRegistersAgain: a host that registers
// again (a director restarted, a link cut) lists every Area it runs, and
// with hundreds of them the list is past what a connection may send
// before its credentials are checked (control.MaxRegisterFrameSize). The
// list follows the register (control.SendRegister), read once the host
// key checks out, and every Area is adopted. A director restarted beside
// two hosts of 750 homes each refused both ("frame too large") until
// their leases ended their players' sessions. A register whose
// credentials do not check out is refused without its list being read.
//
// The adoption of so many Areas takes longer than a host may be silent
// (HeartbeatTimeout, made short here): its silence while the director
// adopts and answers is not the host's, and does not unregister it (under
// two test suites at once the adoption outlasted the default 5 s, and the
// director dropped the host before its answer).
func TestAHostWithHundredsOfAreasRegistersAgain(t *testing.T) {
	r := fakeHostRealm(t, func(c *Config) { c.HeartbeatTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	owner, err := r.store.CreateAccount(ctx, store.NewAccount{Email: "many@x", Name: "many", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	refs := make([]control.AreaRef, n)
	for i := range refs {
		a, err := r.store.CreateArea(ctx, store.NewArea{Owner: owner.ID, Kind: "home", Name: "home", W: 16, H: 16, Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		placement := fmt.Sprintf("placement-%06d-of-the-busy-host", i)
		e, err := r.store.BeginIncarnation(ctx, a.ID, store.HashToken(placement))
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = control.AreaRef{Area: uint32(a.ID), Epoch: uint64(e), Acked: 1, Placement: placement}
	}
	reg := &control.Register{HostKey: testHostKey, Name: "busy", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 4096, PID: 1, Boot: 1, Areas: refs}
	if frame, err := control.Encode(reg); err != nil || len(frame) <= control.MaxRegisterFrameSize {
		t.Fatalf("the register inline takes %d bytes, %v; the test needs it past %d", len(frame), err, control.MaxRegisterFrameSize)
	}
	// A wrong key: refused, the list unread (the head alone is sent: a
	// director that waited for the list would close the connection at its
	// registration deadline, unanswered).
	if ans := registerRaw(t, r, &control.Register{HostKey: "wrong", Name: "stranger", WSURL: "ws://127.0.0.1:1/ws",
		PoolSize: 4096, PID: 2, Boot: 2, AreasFollow: n}); ans.Error == "" {
		t.Fatal("a register with a wrong key and its list to follow was accepted; want a refusal")
	}

	if ans := registerRaw(t, r, reg); ans.Error != "" || len(ans.Close) != 0 {
		t.Fatalf("the busy host's register: error %q, %d of its Areas to close; want none", ans.Error, len(ans.Close))
	}
	for _, ref := range refs {
		if l := r.live(ref.Area); l == nil || l.Epoch != store.Epoch(ref.Epoch) {
			t.Fatalf("area %d not adopted from the host that runs it", ref.Area)
		}
	}
}

// TestAHostsPoolIsBounded: a host registers with at most
// control.MaxPoolSize Area slots (the director keeps room per host by
// its pool): one past it is refused, one at it registers.
func TestAHostsPoolIsBounded(t *testing.T) {
	r := fakeHostRealm(t, nil)
	for _, tt := range []struct {
		pool int
		ok   bool
	}{{control.MaxPoolSize + 1, false}, {1 << 40, false}, {control.MaxPoolSize, true}} {
		reg := registerRaw(t, r, &control.Register{HostKey: testHostKey, Name: "pool", WSURL: "ws://127.0.0.1:1/ws", PoolSize: tt.pool, PID: 1, Boot: uint64(tt.pool)})
		if got := reg.Error == ""; got != tt.ok {
			t.Errorf("register with a pool of %d: error %q; want registered %t", tt.pool, reg.Error, tt.ok)
		}
	}
}
