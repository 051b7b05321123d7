package director

import (
	"context"
	"io"
	"net/http"
	"strings"
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
	if _, err := admin.Join(ctx, area.ID); err != nil {
		t.Fatalf("someone inside joining again was refused: %v", err)
	}
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
}

// TestAreaLifecycle: an Area stays live while a peer is connected, however
// long past the idle grace, and closes once the last peer left.
func TestAreaLifecycle(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, _ := r.player("ann")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	// Pretend the director's count says nobody: the host's presence rules.
	r.d.mu.Lock()
	r.d.areas[store.AreaID(area.ID)].zeroSince = time.Now().Add(-time.Hour)
	r.d.mu.Unlock()
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
	r.d.mu.Lock()
	h := r.d.areas[store.AreaID(area.ID)].host
	r.d.mu.Unlock()
	if err := h.child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead host unregistered", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		return r.d.hosts[h.id] == nil
	})
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
		"ley_players 1", `ley_areas{state="live"}`, `ley_areas{state="frozen"}`, "ley_hosts ",
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
