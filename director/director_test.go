package director

import (
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

// TestFullStack: register, log in, create an Area, join, hello, move, see
// the move in a snapshot and in the store.
func TestFullStack(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, acct := r.player("ann")
	area, err := c.CreateArea(ctx, "Ann's home", "home", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, ack := connect(t, j)
	if ack.JoinID != j.JoinID || ack.Area != area.ID {
		t.Fatalf("hello_ack %+v for join %+v", ack, j)
	}
	p.snapshot(0)
	first := p.you()
	p.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	p.snapshot(1)
	you := p.you()
	if you.X != first.X+1 || you.Y != first.Y || you.Facing != wire.DirE {
		t.Fatalf("after a step east: %+v, from %+v", you, first)
	}
	waitFor(t, "the move persisted", func() bool {
		ch, err := r.store.Character(ctx, store.AccountID(acct.ID))
		return err == nil && ch.Placed && ch.X == you.X && ch.Y == you.Y
	})
}

func TestMembershipEnforced(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	owner, _ := r.player("owner")
	area, err := owner.CreateArea(ctx, "Private", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	stranger, _ := r.player("stranger")
	// Another's Area and a missing one answer alike (no enumeration).
	if _, err := stranger.Join(ctx, area.ID); refusal(t, err) != "NO_SUCH_AREA" {
		t.Fatalf("stranger's join: %v; want NO_SUCH_AREA", err)
	}
	if _, err := stranger.Join(ctx, 9999); refusal(t, err) != "NO_SUCH_AREA" {
		t.Fatalf("join of a missing area: %v; want NO_SUCH_AREA", err)
	}
	code, err := owner.Invite(ctx, area.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.Redeem(ctx, code); err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.Join(ctx, area.ID); err != nil {
		t.Fatalf("join after redeeming an invite: %v", err)
	}
	other, _ := r.player("other")
	if _, err := other.Redeem(ctx, code); refusal(t, err) != "INVITE_USED_UP" {
		t.Fatalf("second redeem of a one-use invite: %v", err)
	}
}

// TestRealmDoor: a full realm refuses newcomers with REALM_FULL but lets
// someone inside back in; a closed realm refuses with REALM_CLOSED and
// drains its Areas (area_closing reaches peers first).
func TestRealmDoor(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	area, err := admin.CreateArea(ctx, "Village", "village", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := admin.Invite(ctx, area.ID, 10)
	if err := admin.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 1, NewPlayersWelcome: true}); err != nil {
		t.Fatal(err)
	}
	j, err := admin.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	bob, _ := r.player("bob")
	if _, err := bob.Redeem(ctx, code); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "presence counted", func() bool { i, _ := admin.Info(ctx); return i.Players == 1 })
	if _, err := bob.Join(ctx, area.ID); refusal(t, err) != "REALM_FULL" {
		t.Fatalf("join past the cap: %v; want REALM_FULL", err)
	}
	again, err := admin.Join(ctx, area.ID)
	if err != nil {
		t.Fatalf("someone inside joining again was refused: %v", err)
	}
	// The join took the body over (its final state made durable first, as
	// for a join elsewhere): the first session ends, the new grant binds.
	p.until(func(m wire.Message) bool { _, ok := m.(*wire.TakenOver); return ok })
	p, _ = connect(t, again)
	if err := admin.SetRealm(ctx, dirclient.Realm{Open: false, Cap: 10, NewPlayersWelcome: true}); err != nil {
		t.Fatal(err)
	}
	closing := p.until(func(m wire.Message) bool { _, ok := m.(*wire.AreaClosing); return ok }).(*wire.AreaClosing)
	if closing.Reason != wire.CodeRealmClosed {
		t.Fatalf("area_closing reason %v; want REALM_CLOSED", closing.Reason)
	}
	if _, err := bob.Join(ctx, area.ID); refusal(t, err) != "REALM_CLOSED" {
		t.Fatalf("join of a closed realm: %v; want REALM_CLOSED", err)
	}
	waitFor(t, "the drained area closed", func() bool { i, _ := admin.Info(ctx); return i.LiveAreas == 0 })
	if i, _ := admin.Info(ctx); i.Hosts == 0 {
		t.Fatal("the director lost its hosts in a drain")
	}
	// Both changes are in the audit log, newest first, with who made them;
	// a page of one says more follow; a player who is not an admin is
	// refused it, and its refused change is not recorded.
	if err := bob.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 99}); refusal(t, err) != "FORBIDDEN" {
		t.Fatalf("a player changing the realm: %v; want FORBIDDEN", err)
	}
	changes, more, err := admin.Audit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"door closed (the realm drains); cap 1 -> 10", "cap 40 -> 1"}
	if len(changes) != len(want) || more {
		t.Fatalf("audit log: %+v (more %v); want %d changes", changes, more, len(want))
	}
	for i, ch := range changes {
		if ch.Detail != want[i] || ch.Action != "realm.update" || ch.Target != "realm" || ch.Actor != adminAcct.ID || ch.ActorName != adminAcct.Name || ch.At.IsZero() {
			t.Errorf("audit entry %d: %+v; want %q by %s", i, ch, want[i], adminAcct.Name)
		}
	}
	if page, more, err := admin.Audit(ctx, 0, 1); err != nil || len(page) != 1 || !more || page[0].ID != changes[0].ID {
		t.Errorf("a page of one: %+v, more %v, %v; want the newest and more", page, more, err)
	}
	if older, _, err := admin.Audit(ctx, changes[0].ID, 10); err != nil || len(older) != 1 || older[0].ID != changes[1].ID {
		t.Errorf("the page before the newest: %+v, %v; want the older change", older, err)
	}
	if _, _, err := bob.Audit(ctx, 0, 10); refusal(t, err) != "FORBIDDEN" {
		t.Errorf("a player reading the audit log: %v; want FORBIDDEN", err)
	}
}

// TestAreaLifecycle: an Area stays live while a peer is connected, however
// long past the idle grace, and closes once the last peer left.
func TestAreaLifecycle(t *testing.T) {
	// No idle grace: were the director's own count to rule, the Area
	// would close at once; the host's presence (a peer) rules.
	r := startRealm(t, func(c *Config) { c.AreaIdleGrace = 0 })
	ctx := context.Background()
	c, _ := r.player("ann")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	for i := 0; i < 30; i++ { // well past the idle grace, snapshots still flow
		p.snapshot(0)
	}
	if i, _ := c.Info(ctx); i.LiveAreas != 1 {
		t.Fatalf("live areas = %d with a peer connected; want 1", i.LiveAreas)
	}
	p.c.Close(1000, "bye")
	waitFor(t, "the area closed after its last peer left", func() bool { i, _ := c.Info(ctx); return i.LiveAreas == 0 })
}

// TestDeadHostRehomes: a join to an Area whose host died is answered at
// once: the Area comes back on a live host from its last snapshot.
func TestDeadHostRehomes(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, acct := r.player("ann")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	j, _ := c.Join(ctx, area.ID)
	p, _ := connect(t, j)
	p.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirS})
	p.snapshot(1)
	s := p.you()
	waitFor(t, "the move persisted", func() bool {
		ch, err := r.store.Character(ctx, store.AccountID(acct.ID))
		return err == nil && ch.Placed && ch.Y == s.Y
	})
	h := r.live(area.ID).Host
	if err := syscall.Kill(h.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead host unregistered", func() bool { _, ok := r.host(h.ID); return !ok })
	start := time.Now()
	j2, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatalf("join after the host died: %v", err)
	}
	t.Logf("re-homed join answered in %v", time.Since(start))
	p2, _ := connect(t, j2)
	p2.snapshot(0)
	if s2 := p2.you(); s2.X != s.X || s2.Y != s.Y {
		t.Fatalf("after re-homing you = (%d,%d); want the persisted (%d,%d)", s2.X, s2.Y, s.X, s.Y)
	}
}

func TestSessionsAndGrantsExpire(t *testing.T) {
	r := startRealm(t, func(c *Config) {
		c.SessionIdle, c.SessionAbsolute = 300*time.Millisecond, time.Hour
		c.GrantTTL = 150 * time.Millisecond
	})
	ctx := context.Background()
	c, _ := r.player("ann")
	area, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // past the grant's TTL and the session's idle timeout
	if _, err := c.Join(ctx, area.ID); refusal(t, err) != "SESSION_EXPIRED" {
		t.Fatalf("call with an idle-expired session: %v; want SESSION_EXPIRED", err)
	}
	pc, err := gateDial(j.WSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(1000, "")
	b, _ := wire.Encode(&wire.Hello{Grant: j.Grant, JoinID: j.JoinID, Versions: []uint16{wire.Version}})
	pc.WriteMessage(b)
	msg, err := pc.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := wire.Decode(msg)
	e, ok := m.(*wire.Error)
	if !ok || (e.Code != wire.CodeGrantExpired && e.Code != wire.CodeBadGrant) || e.JoinID != j.JoinID {
		t.Fatalf("hello with an expired grant: %+v; want GRANT_EXPIRED", m)
	}
}

// TestProvisionOffByDefault: a director not started for load tests
// (LoadProvisioning off, the default) does not serve the bulk path, to an
// admin either: it answers as for a route that does not exist.
func TestProvisionOffByDefault(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.LoadProvisioning = false })
	admin, acct := r.player("admin")
	r.admin(acct)
	req := dirclient.ProvisionRequest{Prefix: "load", Count: 2, Areas: 1, Kind: "village", Template: dirclient.EmptyTemplate, W: 32, H: 32, Password: "load-password"}
	if _, _, err := admin.Provision(context.Background(), req); refusal(t, err) != "NOT_FOUND" {
		t.Fatalf("provision on a director without --load-provisioning: %v; want NOT_FOUND", err)
	}
}

// TestProvisionBulk: the admins' bulk path makes accounts that can log in
// and join their Area, and refuses non-admins.
func TestProvisionBulk(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	admin, acct := r.player("admin")
	req := dirclient.ProvisionRequest{Prefix: "load", Count: 6, Areas: 2, Kind: "village", Template: dirclient.EmptyTemplate, W: 32, H: 32, Password: "load-password"}
	if _, _, err := admin.Provision(ctx, req); refusal(t, err) != "FORBIDDEN" {
		t.Fatalf("provision by a non-admin: %v; want FORBIDDEN", err)
	}
	r.admin(acct)
	got, areas, err := admin.Provision(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || len(areas) != 2 || got[1].Area != areas[1] || got[2].Area != areas[0] {
		t.Fatalf("provisioned %+v over %v", got, areas)
	}
	again, areas2, err := admin.Provision(ctx, req) // idempotent
	if err != nil || again[5].Account != got[5].Account || areas2[1] != areas[1] {
		t.Fatalf("second provision: %+v %v %v", again, areas2, err)
	}
	c := r.client()
	if _, err := c.Login(ctx, got[3].Email, "load-password"); err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, got[3].Area)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, j)
	hosts, err := admin.Hosts(ctx)
	if err != nil || len(hosts) == 0 || hosts[0].WSURL == "" {
		t.Fatalf("hosts %+v, %v", hosts, err)
	}
}

// TestMetricsExposeTheNamedSeries: /metrics, on its own listener (never
// the public API's port), carries the director's own figures and the ones
// hosts forward in their heartbeats.
func TestMetricsExposeTheNamedSeries(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, _ := r.player("ann")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.snapshot(0)
	stranger, _ := r.player("stranger")
	stranger.Join(ctx, area.ID) // a refusal, counted
	resp, err := http.Get(r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics on the public API port: %d; want 404 (metrics have a listener of their own)", resp.StatusCode)
	}
	var body string
	waitFor(t, "host figures forwarded", func() bool {
		resp, err := http.Get("http://" + r.d.MetricsAddr() + "/metrics")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return strings.Contains(body, `ley_host_frames_out_total{host=`) && !strings.Contains(body, "ley_players 0")
	})
	for _, series := range []string{
		"ley_players 1", `ley_areas{state="live"}`, `ley_areas{state="frozen"}`, `ley_areas{state="parked"}`, "ley_hosts ",
		`ley_host_tick_seconds{host="`, "ley_host_bytes_out_total{", "ley_host_peers{",
		`ley_grants_total{result="ok"}`, `ley_join_refusals_total{reason="NO_SUCH_AREA"} 1`,
		"ley_snapshot_lag_seconds", "ley_director_sched_latency_p99_seconds", `ley_config{knob="interest_radius"} 24`,
		"go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics lacks %q", series)
		}
	}
}

// TestUnusedGrantsFreeTheirSeat (issue 29, N7): joins answered and never
// used hold a seat against the realm's cap only for GrantHold: after it a
// newcomer gets in (not REALM_FULL), and the unused grant still binds if
// its player comes late.
func TestUnusedGrantsFreeTheirSeat(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.GrantHold = 300 * time.Millisecond })
	ctx := context.Background()
	admin, adminAcct := r.player("admin")
	r.admin(adminAcct)
	area, err := admin.CreateArea(ctx, "Village", "village", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := admin.Invite(ctx, area.ID, 10)
	if err := admin.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 1, NewPlayersWelcome: true}); err != nil {
		t.Fatal(err)
	}
	idle, _ := r.player("idle")
	late, _ := r.player("late")
	for _, c := range []*dirclient.Client{idle, late} {
		if _, err := c.Redeem(ctx, code); err != nil {
			t.Fatal(err)
		}
	}
	unused, err := idle.Join(ctx, area.ID) // answered, never used (for now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.Join(ctx, area.ID); err == nil || refusal(t, err) != "REALM_FULL" {
		t.Fatalf("a join while a fresh grant holds the only seat: %v; want REALM_FULL", err)
	}
	var j dirclient.Join
	waitFor(t, "the unused grant's seat freed", func() bool { j, err = late.Join(ctx, area.ID); return err == nil })
	connect(t, j)
	p, _ := connect(t, unused) // the idle player comes after all: its grant binds
	p.snapshot(0)
}

// TestSamplesServed: the director's samples reach an admin through
// GET /v1/admin/samples (the console's capacity charts), oldest first,
// with the players it counted; a non-admin is refused, and a window out
// of bounds is a BAD_REQUEST.
func TestSamplesServed(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.SampleEvery = 50 * time.Millisecond })
	r.waitHosts(1)
	ctx := context.Background()
	admin, acct := r.player("sampler")
	r.admin(acct)
	area, err := admin.CreateArea(ctx, "sampled", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	j, err := admin.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, j)
	type sample struct {
		At      time.Time `json:"at"`
		Players int       `json:"players"`
		Hosts   int       `json:"hosts"`
	}
	var out struct {
		Samples []sample `json:"samples"`
		Every   int64    `json:"every_s"`
	}
	waitFor(t, "a sample counting the player", func() bool {
		if err := admin.Do(ctx, "GET", "/v1/admin/samples?since=60", nil, &out); err != nil {
			t.Fatal(err)
		}
		n := len(out.Samples)
		return n >= 2 && out.Samples[n-1].Players == 1 && out.Samples[n-1].Hosts >= 1
	})
	for i := 1; i < len(out.Samples); i++ {
		if out.Samples[i].At.Before(out.Samples[i-1].At) {
			t.Fatalf("samples out of order at %d: %v after %v", i, out.Samples[i].At, out.Samples[i-1].At)
		}
	}
	player, _ := r.player("not-admin")
	if err := player.Do(ctx, "GET", "/v1/admin/samples", nil, nil); refusal(t, err) != "FORBIDDEN" {
		t.Errorf("a non-admin's samples: %v; want FORBIDDEN", err)
	}
	if a := r.call(http.DefaultClient, "GET", "/v1/admin/samples?since=0", admin.Token, ""); a.Code != "BAD_REQUEST" {
		t.Errorf("since=0: %d %s; want BAD_REQUEST", a.Status, a.Raw)
	}
}
