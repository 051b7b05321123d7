package director

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// failoverKey is the host key of the failover realm's hosts.
const failoverKey = "failover-test-host-key"

// haRealm is a realm of several `ley director` processes on one Postgres
// schema (one leads, the others follow) and `ley areahost` processes
// started apart from them, which register with whichever director leads.
type haRealm struct {
	t      testing.TB
	db     string
	logDir string
	slots  []*directorSlot
}

// directorSlot is one director's addresses and its current process.
type directorSlot struct {
	httpAddr, ctlAddr string
	mu                sync.Mutex
	cmd               *exec.Cmd
	exited            chan struct{}
}

func (s *directorSlot) url() string { return "http://" + s.httpAddr }

func newHARealm(t testing.TB, directors int) *haRealm {
	r := &haRealm{t: t, db: pgtest.NewSchema(t), logDir: t.TempDir()}
	for range directors {
		r.slots = append(r.slots, &directorSlot{httpAddr: freeAddr(t), ctlAddr: freeAddr(t)})
	}
	t.Cleanup(func() {
		for _, s := range r.slots {
			r.kill(s)
		}
		if t.Failed() {
			r.dumpLog(200)
		}
	})
	return r
}

// logFile opens the realm's shared log for appending.
func (r *haRealm) logFile() *os.File {
	f, err := os.OpenFile(filepath.Join(r.logDir, "realm.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	return f
}

// dumpLog logs the realm log's last n lines.
func (r *haRealm) dumpLog(n int) {
	f, err := os.Open(filepath.Join(r.logDir, "realm.log"))
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	r.t.Logf("the realm's last %d log lines:\n%s", n, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}

// start runs slot's director (as a follower, if another leads).
func (r *haRealm) start(s *directorSlot) {
	r.t.Helper()
	cmd := exec.Command(leyBin, "director", "--http", s.httpAddr, "--control", s.ctlAddr,
		"--min-hosts", "0", "--max-hosts", "0", "--area-idle-grace", "1h", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "LEY_DATABASE_URL="+r.db, "LEY_HOST_KEY="+failoverKey) // secrets never on a command line
	logf := r.logFile()
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
}

// kill SIGKILLs slot's director, if it runs, and waits for it.
func (r *haRealm) kill(s *directorSlot) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// controls is the hosts' --director list.
func (r *haRealm) controls() string {
	var a []string
	for _, s := range r.slots {
		a = append(a, s.ctlAddr)
	}
	return strings.Join(a, ",")
}

// startHost runs an area host registered by the host key with the realm's
// directors.
func (r *haRealm) startHost(name string) *exec.Cmd {
	r.t.Helper()
	cmd := exec.Command(leyBin, "areahost", "--director", r.controls(), "--listen", "127.0.0.1:0", "--name", name,
		"--persist-every", "300ms", "--resume-grace", "1s", "--transfer-timeout", "4s", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "LEY_HOST_KEY="+failoverKey)
	logf := r.logFile()
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// leader returns the slot whose director leads (/readyz 200 as the
// leader) with at least hosts hosts registered, or nil.
func (r *haRealm) leader(hosts int) (*directorSlot, readiness) {
	for _, s := range r.slots {
		if rd, err := readyz(s.url()); err == nil && rd.Role == "leader" && rd.Hosts >= hosts {
			return s, rd
		}
	}
	return nil, readiness{}
}

// following reports whether slot's director runs and follows the leader
// of term.
func (r *haRealm) following(s *directorSlot, term uint64) bool {
	rd, err := readyz(s.url())
	return err == nil && rd.Role == "follower" && rd.Term == term
}

// client returns an API client that reaches any director of the realm, as
// a load balancer in front of them would: a director that refuses the
// connection (dead) is skipped.
func (r *haRealm) client() *dirclient.Client {
	var bases []string
	for _, s := range r.slots {
		bases = append(bases, s.httpAddr)
	}
	c := dirclient.New("http://director.invalid")
	c.HTTP = &http.Client{Timeout: 60 * time.Second, Transport: &anyDirector{hosts: bases}}
	return c
}

// anyDirector is an http.RoundTripper that sends each request to the
// first of hosts that takes the connection (starting with the last one
// that did).
type anyDirector struct {
	hosts []string
	last  atomic.Int64
}

func (a *anyDirector) RoundTrip(req *http.Request) (*http.Response, error) {
	var lastErr error
	first := int(a.last.Load())
	for i := range a.hosts {
		n := (first + i) % len(a.hosts)
		out := req.Clone(req.Context())
		out.URL.Host, out.Host = a.hosts[n], a.hosts[n]
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			out.Body = body
		}
		resp, err := http.DefaultTransport.RoundTrip(out)
		var op *net.OpError
		if err != nil && errors.As(err, &op) && op.Op == "dial" {
			lastErr = err
			continue
		}
		a.last.Store(int64(n))
		return resp, err
	}
	return nil, lastErr
}

// failoverStats are the measured failovers.
type failoverStats struct {
	lead  []time.Duration // from the SIGKILL to a follower's /readyz as the leader
	hosts []time.Duration // from the SIGKILL to every host registered with it
}

// quantile returns the q-quantile (nearest rank) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// TestFailover SIGKILLs the leading director while players join and cross
// portals between two hosts, LEY_FAILOVER_KILLS times (default 3), each
// time starting the killed one again as a follower: a follower leads,
// the hosts register with it, and in the end every character is in
// exactly one of its two Areas, as its player was told, none missing and
// none bound twice, and the hosts' own count of bodies (GET
// /v1/admin/inspect) holds each player once. The failover times are
// measured and logged (p50, p99), never asserted. The long form:
//
//	LEY_FAILOVER_KILLS=25 go test -run TestFailover -v -timeout 30m ./director/
func TestFailover(t *testing.T) {
	kills := 3
	if s := os.Getenv("LEY_FAILOVER_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil || kills < 1 {
			t.Fatalf("LEY_FAILOVER_KILLS=%q: want a positive number", s)
		}
	}
	const players, hosts = 4, 2
	ctx := context.Background()
	r := newHARealm(t, 2)
	r.start(r.slots[0])
	waitFor(t, "the first director leading", func() bool { s, _ := r.leader(0); return s != nil })
	r.start(r.slots[1])
	for i := range hosts {
		r.startHost(fmt.Sprintf("failover-%d", i))
	}
	waitFor(t, "both hosts registered", func() bool { s, _ := r.leader(hosts); return s != nil })

	owner := r.client()
	if _, err := owner.Register(ctx, "owner@failover.ley", "correct horse battery", "owner"); err != nil {
		t.Fatal(err)
	}
	acct, err := owner.Login(ctx, "owner@failover.ley", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	st, err := pg.Open(ctx, r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetAdmin(ctx, store.AccountID(acct.ID), true); err != nil {
		t.Fatal(err)
	}
	areaA, areaB := twoAreas(t, owner)
	var ps []*crashPlayer
	for i := range players {
		c := r.client()
		name := fmt.Sprintf("fo%d", i)
		if _, err := c.Register(ctx, name+"@failover.ley", "correct horse battery", name); err != nil {
			t.Fatal(err)
		}
		pa, err := c.Login(ctx, name+"@failover.ley", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		for _, area := range []uint32{areaA.ID, areaB.ID} {
			code, err := owner.Invite(ctx, area, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Redeem(ctx, code); err != nil {
				t.Fatal(err)
			}
		}
		ps = append(ps, &crashPlayer{c: c, acct: pa.ID, a: areaA.ID, b: areaB.ID, belief: areaA.ID})
	}

	playCtx, stopPlay := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var vmu sync.Mutex
	var violations []error
	var crossings, joins atomic.Int64
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint32(1); playCtx.Err() == nil; seq++ {
				conn, err := p.enter(playCtx)
				if err != nil {
					if isInvariant(err) {
						vmu.Lock()
						violations = append(violations, err)
						vmu.Unlock()
						return
					}
					time.Sleep(50 * time.Millisecond) // no leader right now
					continue
				}
				joins.Add(1)
				if done, _ := p.cross(conn, seq); done {
					crossings.Add(1)
				}
			}
		}()
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var stats failoverStats
	for k := range kills {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		var leader *directorSlot
		var rd readiness
		waitFor(t, "a leader with every host", func() bool { leader, rd = r.leader(hosts); return leader != nil })
		var follower *directorSlot
		for _, s := range r.slots {
			if s != leader {
				follower = s
			}
		}
		waitFor(t, "the other director following", func() bool { return r.following(follower, rd.Term) })
		killed := time.Now()
		r.kill(leader)
		var lead, back time.Duration
		for lead == 0 || back == 0 {
			if time.Since(killed) > 60*time.Second {
				t.Fatalf("kill %d: no leader with every host 60 s after the kill (lead %v)", k+1, lead)
			}
			if nrd, err := readyz(follower.url()); err == nil && nrd.Role == "leader" {
				if nrd.Term <= rd.Term {
					t.Fatalf("kill %d: the new leader's term %d is not past the old %d", k+1, nrd.Term, rd.Term)
				}
				if lead == 0 {
					lead = time.Since(killed)
				}
				if nrd.Hosts >= hosts {
					back = time.Since(killed)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		stats.lead, stats.hosts = append(stats.lead, lead), append(stats.hosts, back)
		t.Logf("kill %d: a follower led %v after the SIGKILL; every host was back with it after %v", k+1, lead.Round(time.Millisecond), back.Round(time.Millisecond))
		r.start(leader) // the killed one comes back as a follower
	}
	stopPlay()
	wg.Wait()
	for _, v := range violations {
		t.Error(v)
	}

	// Settle: every player comes back where the store says, as it was
	// told; each is bound once, and each host's world holds each player's
	// body once.
	admin := r.client()
	admin.Token = owner.Token
	var conns []*gate.ClientConn
	for _, p := range ps {
		var conn *gate.ClientConn
		waitFor(t, "the player back in", func() bool {
			var err error
			conn, err = p.enter(ctx)
			if isInvariant(err) {
				t.Fatal(err)
			}
			return err == nil
		})
		conns = append(conns, conn)
	}
	defer func() {
		for _, c := range conns {
			c.Close(1000, "")
		}
	}()
	waitFor(t, "presence of every player", func() bool {
		areas, err := admin.LiveAreas(ctx)
		if err != nil {
			return false
		}
		n := 0
		for _, l := range areas {
			n += len(l.Accounts)
		}
		return n == players
	})
	checkPresence(t, admin)
	var truth string
	waitFor(t, "the hosts' ground truth: each player's body once", func() bool {
		ins, err := admin.Inspect(ctx)
		if err != nil {
			return false
		}
		bodies, bound, overdue := 0, 0, 0
		for _, h := range ins {
			for _, a := range h.Areas {
				bodies += a.Players
				bound += a.Bound
				overdue += a.Overdue
			}
		}
		truth = fmt.Sprintf("%d player bodies, %d bound, %d overdue", bodies, bound, overdue)
		return bodies == players && bound == players && overdue == 0
	})
	for _, p := range ps {
		ch, err := st.Character(ctx, store.AccountID(p.acct))
		if err != nil || (ch.Area != store.AreaID(p.a) && ch.Area != store.AreaID(p.b)) || uint32(ch.Area) != p.belief {
			t.Errorf("LOST: account %d's character = %+v, %v; the player was told area %d", p.acct, ch, err, p.belief)
		}
	}
	t.Logf("failover: %d kills of the leader, %d players, %d joins, %d crossings completed, 0 lost, 0 doubled (%s)",
		kills, players, joins.Load(), crossings.Load(), truth)
	t.Logf("failover time (SIGKILL to a follower leading): p50 %v, p99 %v, max %v; to every host registered with it: p50 %v, p99 %v, max %v",
		quantile(stats.lead, 0.5).Round(time.Millisecond), quantile(stats.lead, 0.99).Round(time.Millisecond), slices.Max(stats.lead).Round(time.Millisecond),
		quantile(stats.hosts, 0.5).Round(time.Millisecond), quantile(stats.hosts, 0.99).Round(time.Millisecond), slices.Max(stats.hosts).Round(time.Millisecond))
}
