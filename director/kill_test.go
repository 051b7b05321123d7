package director

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
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

// TestDirectorSIGKILLKeepsState: a player moves, the move is persisted,
// the director is SIGKILLed (its hosts die with it) and started again on
// the same Postgres: the player comes back where the last acked snapshot
// left them, or further along (never older).
func TestDirectorSIGKILLKeepsState(t *testing.T) {
	dbURL := pgtest.NewSchema(t)
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
	// More steps in flight, then SIGKILL: at most they are lost.
	for seq := uint32(4); seq <= 6; seq++ {
		p.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirE})
	}
	if err := d1.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	d1.Wait()
	if err := <-p.done; err == nil {
		t.Fatal("the host outlived its director")
	}

	startDirectorProcess(t, dbURL, httpAddr, ctlAddr)
	var j2 dirclient.Join
	waitFor(t, "a join after the restart", func() bool { j2, err = c.Join(ctx, area.ID); return err == nil })
	p2, _ := connect(t, j2)
	p2.snapshot(0)
	if s2 := p2.you(); s2.Y != s.Y || s2.X < s.X || s2.X > s.X+3 {
		t.Fatalf("after the restart you = (%d,%d); want (%d..%d, %d): the last acked snapshot or later", s2.X, s2.Y, s.X, s.X+3, s.Y)
	}
}

// TestHostsRunContained: spawned hosts run with GOMEMLIMIT and a raised
// oom_score_adj, so the kernel's OOM killer takes a host before the
// director; a host killed as the OOM killer would (SIGKILL) leaves the
// director serving joins.
func TestHostsRunContained(t *testing.T) {
	r := startRealm(t, nil)
	r.d.mu.Lock()
	var h *host
	for _, x := range r.d.hosts {
		h = x
	}
	r.d.mu.Unlock()
	pid := h.child.cmd.Process.Pid
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
	h.child.cmd.Process.Kill()
	ctx := context.Background()
	c, _ := r.player("after")
	area, _ := c.CreateArea(ctx, "Home", "home", 16, 16)
	var j dirclient.Join
	waitFor(t, "a join served after the host was killed", func() bool { j, err = c.Join(ctx, area.ID); return err == nil })
	connect(t, j)
}
