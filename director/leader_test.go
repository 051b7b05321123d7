package director

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// running is a director running in this process until stop.
type running struct {
	d    *Director
	url  string
	ctl  string
	stop func() error // cancels Run and returns its error
}

// runDirector runs a director on the Postgres at dbURL (its own Store) in
// this process; tune may change the config. Cleanup stops it.
func runDirector(t *testing.T, dbURL string, tune func(*Config)) *running {
	t.Helper()
	cfg := testConfig()
	cfg.Spawn.MinHosts, cfg.Spawn.MaxHosts = 0, 0
	cfg.HostKey = "leadership-test-key"
	if tune != nil {
		tune(&cfg)
	}
	st, err := pg.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	httpLn, ctlLn, err := d.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, httpLn, ctlLn) }()
	var result error
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-done:
			case <-time.After(30 * time.Second):
				t.Error("director did not stop")
			}
		}
		return result
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("director Run: %v", err)
		}
	})
	return &running{d: d, url: "http://" + d.httpAddr, ctl: d.controlAddr, stop: stop}
}

// readiness is GET /readyz's answer.
type readiness struct {
	status int
	Ready  bool   `json:"ready"`
	Role   string `json:"role"`
	Reason string `json:"reason"`
	Leader string `json:"leader"` // never set: a public probe learns no internal address
	Term   uint64 `json:"term"`
	Hosts  int    `json:"hosts"`
}

func readyz(base string) (readiness, error) {
	var r readiness
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	err = json.NewDecoder(resp.Body).Decode(&r)
	return r, err
}

// startHost runs `ley areahost` as its own process, with prefix before it
// (e.g. ip netns exec NS), env added to this process's environment, and
// args. Its log goes to the test's stderr. Cleanup kills it.
func startHost(t *testing.T, prefix, env []string, args ...string) *exec.Cmd {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), leyBin, "areahost"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestFollowerForwardsAndTakesOver: two directors on one Postgres; the
// second follows (503 at /readyz naming the leader), forwards the API to
// the leader, and sends a host that dials it first to the leader. When
// the leader stops, the follower leads in the next term, the host
// registers with it, and the player joins again through it.
func TestFollowerForwardsAndTakesOver(t *testing.T) {
	db := pgtest.NewSchema(t)
	ctx := context.Background()
	a := runDirector(t, db, nil)
	var ra readiness
	waitFor(t, "the first director leading", func() bool {
		var err error
		ra, err = readyz(a.url)
		return err == nil && ra.status == http.StatusOK && ra.Role == "leader"
	})
	b := runDirector(t, db, nil)
	waitFor(t, "the second director following the first", func() bool {
		r, err := readyz(b.url)
		return err == nil && r.status == http.StatusOK && r.Role == "follower" && r.Leader == "" && r.Term == ra.Term
	})

	startHost(t, nil, []string{"LEY_HOST_KEY=leadership-test-key"},
		"--director", b.ctl+","+a.ctl, "--listen", "127.0.0.1:0", "--name", "follower-test", "--log-level", "warn")
	waitFor(t, "the host registered with the leader", func() bool {
		r, err := readyz(a.url)
		return err == nil && r.Hosts == 1
	})
	if n := counter(t, b.d, "ley_control_refusals_total", "reason", registry.ControlNotLeader); n < 1 {
		t.Errorf("the follower refused %v registrations as not the leader; want >= 1", n)
	}

	// A request a director forwarded already is not forwarded again.
	req, _ := http.NewRequest("GET", b.url+"/director/info", nil)
	req.Header.Set(forwardedBy, "http://elsewhere")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code := apiCode(t, resp); resp.StatusCode != http.StatusServiceUnavailable || code != "NOT_LEADER" {
		t.Errorf("a request forwarded twice = %d %q; want 503 NOT_LEADER", resp.StatusCode, code)
	}

	// The whole way in through the follower: it forwards to the leader.
	c := dirclient.New(b.url)
	if _, err := c.Register(ctx, "follow@test.ley", "correct horse battery", "follow"); err != nil {
		t.Fatal(err)
	}
	acct, err := c.Login(ctx, "follow@test.ley", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	area, err := c.CreateArea(ctx, "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.snapshot(0)

	if err := a.stop(); err != nil {
		t.Fatalf("the first director's Run: %v", err)
	}
	waitFor(t, "the follower leading in the next term", func() bool {
		r, err := readyz(b.url)
		return err == nil && r.Role == "leader" && r.Term == ra.Term+1
	})
	waitFor(t, "the host registered with the new leader", func() bool {
		r, err := readyz(b.url)
		return err == nil && r.Role == "leader" && r.Hosts == 1
	})
	var j2 dirclient.Join
	waitFor(t, "a join through the new leader", func() bool { j2, err = c.Join(ctx, area.ID); return err == nil })
	p2, _ := connect(t, j2)
	p2.snapshot(0)
	ch, err := b.d.store.Character(ctx, store.AccountID(acct.ID))
	if err != nil || ch.Area != store.AreaID(area.ID) {
		t.Errorf("character = %+v, %v; want in area %d", ch, err, area.ID)
	}
	if !strings.HasPrefix(j2.WSURL, "ws://127.0.0.1:") {
		t.Errorf("ws_url = %q; want the host's", j2.WSURL)
	}
}

// TestFollowerOfASilentLeader: while the leader holds the leadership but
// does not answer, a follower answers API requests 503 NOT_LEADER with
// Retry-After instead of hanging, and sends hosts to the leader's control
// address.
func TestFollowerOfASilentLeader(t *testing.T) {
	db := pgtest.NewSchema(t)
	ctx := context.Background()
	st, err := pg.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dead := freeAddr(t)
	if _, err := st.Lead(ctx, store.Leader{HTTP: "http://" + dead, Control: dead}); err != nil {
		t.Fatal(err)
	}
	b := runDirector(t, db, nil)
	waitFor(t, "the director following the silent leader", func() bool {
		r, err := readyz(b.url)
		return err == nil && r.Role == "follower" && r.Leader == ""
	})
	resp, err := http.Get(b.url + "/director/info")
	if err != nil {
		t.Fatal(err)
	}
	code := apiCode(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || code != "NOT_LEADER" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("GET /director/info = %d %q Retry-After %q; want 503 NOT_LEADER, 1", resp.StatusCode, code, resp.Header.Get("Retry-After"))
	}
	register := func(key string) *control.Registered {
		t.Helper()
		c, err := control.Dial(b.ctl, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Send(&control.Register{HostKey: key, Name: "h", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 1}); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		ack, ok := m.(*control.Registered)
		if !ok {
			t.Fatalf("registration answered %s", m.Type())
		}
		return ack
	}
	if ack := register("leadership-test-key"); !ack.NotLeader || ack.Leader != dead || !strings.Contains(ack.Error, "not the leader, try "+dead) {
		t.Errorf("registration with a follower answered %+v; want not the leader, try %s", ack, dead)
	}
	if ack := register("a wrong key"); ack.NotLeader || ack.Leader != "" || ack.Error == "" {
		t.Errorf("a registration without credentials answered %+v; want a refusal that names no leader", ack)
	}
}

// apiCode reads an API answer's error code and closes its body.
func apiCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var body struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("answer %d: %v", resp.StatusCode, err)
	}
	return body.Code
}

// TestLimitsKeyOnTheClientBehindAFollower (issue 29, N6): a follower
// forwards every client's request to the leader from its own address.
// With the follower among the leader's trusted proxies, the leader's
// login limits key on the client behind it: one client's wrong passwords
// make that client wait, and another client, through the same follower,
// logs in.
func TestLimitsKeyOnTheClientBehindAFollower(t *testing.T) {
	db := pgtest.NewSchema(t)
	a := runDirector(t, db, func(c *Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} // the follower's address
		c.AuthBurst, c.AuthEvery = 100, time.Hour
		c.LoginFreeFailures, c.LoginDelay, c.LoginMaxDelay = 3, time.Minute, time.Hour
	})
	waitFor(t, "the first director leading", func() bool { r, err := readyz(a.url); return err == nil && r.Role == "leader" })
	b := runDirector(t, db, nil)
	waitFor(t, "the second director following", func() bool { r, err := readyz(b.url); return err == nil && r.Role == "follower" })
	via := &realm{t: t, d: b.d, url: b.url} // requests through the follower
	const pw = "correct horse battery"
	if got := via.call(from("127.0.9.1"), "POST", "/v1/accounts", "", credentialsJSON("owner@t.local", pw)); got.Status != http.StatusCreated {
		t.Fatalf("sign-up through the follower: %d %s", got.Status, got.Raw)
	}
	guesser := from("127.0.9.2")
	var last answer
	for range 5 {
		last = via.call(guesser, "POST", "/v1/session", "", credentialsJSON("owner@t.local", "wrong password"))
	}
	wantRetryAfter(t, "the guesser's 5th try through the follower", last, 3600)
	if got := via.call(from("127.0.9.3"), "POST", "/v1/session", "", credentialsJSON("owner@t.local", pw)); got.Status != http.StatusOK {
		t.Fatalf("the owner's login from another address, through the same follower: %d %s; want 200 (the guesser's wait is the guesser's)", got.Status, got.Raw)
	}
}
