package director

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/internal/machine"
	"github.com/leyworks/ley/internal/testport"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// freeAddr returns a loopback address no one listens on, for a process
// the test may kill and start again on it.
func freeAddr(t testing.TB) string {
	t.Helper()
	addr, err := testport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// startDirectorProcess runs `ley director` on Postgres as its own process.
func startDirectorProcess(t *testing.T, dbURL, httpAddr, ctlAddr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(leyBin, "director", "--http", httpAddr, "--control", ctlAddr,
		"--persist-every", "300ms", "--min-hosts", "1", "--log-level", "warn", "--host-log-level", "warn")
	cmd.Env = append(os.Environ(), "LEY_DATABASE_URL="+dbURL) // a database URL is never on a command line
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDirectorProcess(t, cmd) })
	waitFor(t, "the director ready", func() bool {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return cmd
}

// stopDirectorProcess stops a director process the way Ctrl-C does
// (SIGINT: the realm stops, hosts included), or kills it when it does
// not stop in time. A process that already exited is left alone.
func stopDirectorProcess(t testing.TB, cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Errorf("director pid %d did not stop on SIGINT; killed", cmd.Process.Pid)
		_ = cmd.Process.Kill()
		<-done
	}
}

// reapHosts kills the area host processes the realm of st still records
// (spawned by a director that was killed: they outlive it), once the
// test ends. Only a process that is a ley area host is killed (a pid may
// have been reused).
func reapHosts(t testing.TB, dbURL string) {
	t.Cleanup(func() {
		st, err := pg.Open(context.Background(), dbURL)
		if err != nil {
			t.Logf("reap hosts: %v", err)
			return
		}
		defer st.Close()
		hs, err := st.Hosts(context.Background())
		if err != nil {
			t.Logf("reap hosts: %v", err)
			return
		}
		for _, h := range hs {
			if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(h.PID) + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte("areahost")) {
				_ = syscall.Kill(h.PID, syscall.SIGKILL)
			}
		}
	})
}

// TestDirectorSIGKILLKeepsPlay: a director is SIGKILLed while a player
// plays: its spawned host outlives it, the player's session goes on (its
// steps are applied and answered), and the director started again on the
// same Postgres adopts the host and its Area as they are (the same host
// process, the same incarnation): the player is never disconnected, a
// newcomer joins the same Area on the same host, and the play of the
// whole time is persisted through the new director.
func TestDirectorSIGKILLKeepsPlay(t *testing.T) {
	dbURL := pgtest.NewSchema(t)
	reapHosts(t, dbURL)
	httpAddr, ctlAddr := freeAddr(t), freeAddr(t)
	d1 := startDirectorProcess(t, dbURL, httpAddr, ctlAddr)
	ctx := context.Background()
	c := dirclient.New("http://" + httpAddr)
	if _, err := c.Register(ctx, "kill@test.ley", "correct horse battery", "kill"); err != nil {
		t.Fatal(err)
	}
	acct, err := c.Login(ctx, "kill@test.ley", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	area, err := c.CreateArea(ctx, "Home", "home", 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	var j dirclient.Join
	waitFor(t, "a host to join on", func() bool { j, err = c.Join(ctx, area.ID); return err == nil })
	p, _ := connect(t, j)
	for seq := uint32(1); seq <= 3; seq++ {
		p.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirE})
	}
	p.snapshot(3)
	s := p.you()
	st, err := pg.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, "the move persisted", func() bool {
		ch, err := st.Character(ctx, store.AccountID(acct.ID))
		return err == nil && ch.Placed && ch.X == s.X && ch.Y == s.Y
	})
	rec, err := st.Area(ctx, store.AreaID(area.ID))
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := st.Hosts(ctx)
	if err != nil || len(hosts) != 1 {
		t.Fatalf("host records %+v, %v; want the one spawned host", hosts, err)
	}
	hostPID := hosts[0].PID
	if err := d1.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d1.Wait()

	// No director: the player plays on, within the host's lease.
	for seq := uint32(4); seq <= 6; seq++ {
		p.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirE})
	}
	p.snapshot(6)
	moved := p.you()
	if moved.X != s.X+3 {
		t.Fatalf("with no director the player is at x=%d; want %d (its steps applied)", moved.X, s.X+3)
	}

	startDirectorProcess(t, dbURL, httpAddr, ctlAddr)
	c2 := dirclient.New("http://" + httpAddr)
	if _, err := c2.Register(ctx, "kill2@test.ley", "correct horse battery", "kill2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Login(ctx, "kill2@test.ley", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	code, err := c.Invite(ctx, area.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Redeem(ctx, code); err != nil {
		t.Fatal(err)
	}
	var j2 dirclient.Join
	waitFor(t, "a newcomer's join after the restart", func() bool { j2, err = c2.Join(ctx, area.ID); return err == nil })
	if j2.WSURL != j.WSURL {
		t.Errorf("after the restart the area is served at %s; want %s (the same host, adopted)", j2.WSURL, j.WSURL)
	}
	p2, _ := connect(t, j2)
	p2.snapshot(0)
	if after, err := st.Area(ctx, store.AreaID(area.ID)); err != nil || after.Epoch != rec.Epoch {
		t.Errorf("area epoch %d after the restart (%v); want %d: adopted, not made live again", after.Epoch, err, rec.Epoch)
	}
	if !machine.Alive(hostPID) {
		t.Error("the spawned host died with its director")
	}
	// The first player never left: it steps on, and the new director
	// persists where it is.
	p.send(&wire.Intent{Seq: 7, Kind: wire.IntentStep, Dir: wire.DirE})
	p.snapshot(7)
	last := p.you()
	waitFor(t, "the play of the whole time persisted through the new director", func() bool {
		ch, err := st.Character(ctx, store.AccountID(acct.ID))
		return err == nil && ch.Placed && ch.X == last.X && ch.Y == last.Y
	})
}

// TestHostsRunContained: spawned hosts run with GOMEMLIMIT and a raised
// oom_score_adj, so the kernel's OOM killer takes a host before the
// director; a host killed as the OOM killer would (SIGKILL) leaves the
// director serving joins.
func TestHostsRunContained(t *testing.T) {
	r := startRealm(t, nil)
	pid := r.d.registry.Hosts()[0].PID
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "GOMEMLIMIT=512MiB") {
		t.Fatal("the host runs without GOMEMLIMIT")
	}
	adj, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(adj); got != "500\n" {
		t.Fatalf("host oom_score_adj = %q; want 500", got)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	ctx := context.Background()
	c, _ := r.player("after")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	var j dirclient.Join
	waitFor(t, "a join served after the host was killed", func() bool { j, err = c.Join(ctx, area.ID); return err == nil })
	connect(t, j)
}
