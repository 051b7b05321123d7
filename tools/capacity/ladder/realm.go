package ladder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/leyworks/ley/internal/testport"
)

// Realm is a `ley run` subprocess on free loopback ports with its own
// temporary data directory, as the ladder starts it (tests use it too).
type Realm = realm

// StartRealm starts a realm the way [Run] does, with cfg's Binary,
// MaxHosts, PoolSize and admin account. Stop it with Stop.
func StartRealm(ctx context.Context, cfg Config) (*Realm, error) { return startRealm(ctx, cfg) }

// URL is the realm director's base URL.
func (r *realm) URL() string { return r.url }

// MetricsURL is where the realm's director serves GET /metrics (its own
// loopback listener, not the API's port).
func (r *realm) MetricsURL() string { return r.metricsURL }

// PID is the realm director's process id.
func (r *realm) PID() int { return r.pid }

// Stop stops the realm and removes its data directory.
func (r *realm) Stop() { r.stop() }

// Log returns what the realm (director and hosts) logged so far.
func (r *realm) Log() ([]byte, error) { return os.ReadFile(filepath.Join(r.dir, "realm.log")) }

// realm is a `ley run` subprocess the ladder started.
type realm struct {
	cmd        *exec.Cmd
	dir        string
	url        string
	metricsURL string
	pid        int
	done       chan struct{}
}

// freePort returns a loopback port that was free a moment ago. `ley run`
// does not print the ports it bound, so the ladder picks them, below the
// kernel's ephemeral range (testport): a port handed out for ":0" is an
// ephemeral one, which any outgoing connection on the machine may take as
// its own end before `ley run` binds it ("address already in use", seen
// under load).
func freePort() (int, error) {
	addr, err := testport.Loopback()
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// startRealm runs `ley run` on free loopback ports with a temporary data
// directory and waits until its director answers /readyz.
func startRealm(ctx context.Context, cfg Config) (*realm, error) {
	bin, err := executable(cfg)
	if err != nil {
		return nil, fmt.Errorf("ladder: ley binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "ley-ladder-")
	if err != nil {
		return nil, err
	}
	httpPort, err1 := freePort()
	ctlPort, err2 := freePort()
	metricsPort, err3 := freePort()
	if err := errors.Join(err1, err2, err3); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("ladder: free ports: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "realm.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(bin, "run",
		"--data-dir", dir,
		"--http", "127.0.0.1:"+strconv.Itoa(httpPort),
		"--control", "127.0.0.1:"+strconv.Itoa(ctlPort),
		"--metrics", "127.0.0.1:"+strconv.Itoa(metricsPort),
		"--max-hosts", strconv.Itoa(cfg.MaxHosts),
		"--pool-size", strconv.Itoa(cfg.PoolSize),
		"--log-level", "warn", "--host-log-level", "warn",
		"--load-provisioning",
		"--demo-email", cfg.AdminEmail)
	if cfg.Content != "" {
		abs, err := filepath.Abs(cfg.Content)
		if err != nil {
			logf.Close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("ladder: content folder: %w", err)
		}
		cmd.Args = append(cmd.Args, "--content", abs)
	}
	cmd.Args = append(cmd.Args, cfg.RealmArgs...)
	if cfg.Pin != nil {
		// taskset sets the mask before ley starts, so that every host the
		// director spawns inherits it: none can start before it is set.
		ts, err := exec.LookPath("taskset")
		if err != nil {
			logf.Close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("ladder: pinning the realm needs taskset (util-linux): %w", err)
		}
		cmd.Args = append([]string{ts, "-c", cpuList(cfg.Pin.Realm)}, cmd.Args...)
		cmd.Path = ts
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// A password never on a command line (ley refuses it there).
	cmd.Env = append(cleanEnv(), "LEY_DEMO_PASSWORD="+cfg.AdminPassword)
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("ladder: start realm: %w", err)
	}
	r := &realm{cmd: cmd, dir: dir, url: fmt.Sprintf("http://127.0.0.1:%d", httpPort), metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(r.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		select {
		case <-r.done:
			log, _ := os.ReadFile(filepath.Join(dir, "realm.log"))
			r.stop()
			return nil, fmt.Errorf("ladder: realm exited at start: %s", log)
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, errors.New("ladder: realm not ready after 30 s")
		}
	}
}

// cleanEnv is this process's environment without LEY_ variables, so the
// ladder's own settings (LEY_DIRECTOR...) do not leak into the realm's
// flags.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if len(kv) >= 4 && kv[:4] == "LEY_" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stop interrupts the realm (it drains its hosts), kills it after 20 s
// and removes its data directory.
func (r *realm) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	os.RemoveAll(r.dir)
}
