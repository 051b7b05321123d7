//go:build linux

package director

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// The secrets a director holds in its environment, none of which may
// reach a host or a debug endpoint.
var directorSecrets = map[string]string{
	"LEY_HOST_KEY":       "host-secret-4711",
	"LEY_DEMO_PASSWORD":  "demo-secret-4711",
	"LEY_ADMIN_PASSWORD": "admin-secret-4711",
}

// procEnviron reads a process's environment (NUL-separated KEY=value).
func procEnviron(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// checkHostExposure fails t if the spawned host pid holds any of secrets
// (names or values) in its environment, or its spawn token on its
// command line, or lacks the token or the failpoint spec in its
// environment.
func checkHostExposure(t *testing.T, pid int, secrets map[string]string, failpoint string) {
	t.Helper()
	env := procEnviron(t, pid)
	all := strings.Join(func() []string {
		var out []string
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		return out
	}(), "\n")
	for k, v := range secrets {
		if _, ok := env[k]; ok || strings.Contains(all, v) {
			t.Errorf("host %d's environment holds %s", pid, k)
		}
	}
	passed := spawner.PassedEnv()
	for k := range env {
		if strings.HasPrefix(k, "LEY_") && k != "LEY_SPAWN_TOKEN" && !slices.Contains(passed, k) {
			t.Errorf("host %d inherited %s", pid, k)
		}
	}
	token := env["LEY_SPAWN_TOKEN"]
	if len(token) < 16 {
		t.Errorf("host %d's LEY_SPAWN_TOKEN = %q; want its spawn token", pid, token)
	}
	if env["LEY_FAILPOINT"] != failpoint {
		t.Errorf("host %d's LEY_FAILPOINT = %q; want %q passed through", pid, env["LEY_FAILPOINT"], failpoint)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" && bytes.Contains(cmdline, []byte(token)) || bytes.Contains(cmdline, []byte("spawn-token")) {
		t.Errorf("host %d's command line holds its spawn token: %q", pid, cmdline)
	}
}

// TestSpawnedHostsGetAMinimalEnvironment (issue 12, findings 5 and 6): a
// director whose environment holds secrets and its own listen addresses
// (LEY_PPROF on a port in use, as the director's pprof would hold it)
// spawns hosts that start, hold none of it, and take their spawn token
// from the environment, not the command line. LEY_FAILPOINT is passed
// through (the crash tests arm hosts with it).
func TestSpawnedHostsGetAMinimalEnvironment(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	secrets := map[string]string{"LEY_DATABASE_URL": "postgres://ley:db-secret-4711@127.0.0.1:1/ley"}
	for k, v := range directorSecrets {
		secrets[k] = v
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("LEY_PPROF", held.Addr().String())
	t.Setenv("LEY_LISTEN", "127.0.0.1:1") // another director-side setting a host flag would take
	t.Setenv("LEY_FAILPOINT", "no.such.failpoint@9")
	r := startRealm(t, nil)
	c, _ := r.player("env")
	area, err := c.CreateArea(context.Background(), "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(context.Background(), area.ID)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, j)
	var pids []int
	for _, h := range r.d.registry.Hosts() {
		pids = append(pids, h.PID)
	}
	for _, pid := range pids {
		checkHostExposure(t, pid, secrets, "no.such.failpoint@9")
	}
}

// readyState is GET /readyz's answer.
func readyState(t testing.TB, base string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("/readyz body: %v", err)
	}
	return resp.StatusCode, body
}

// TestHostThatCannotStartIsReported (issue 12, finding 6): when every
// host the director spawns exits before it registers (here: its client
// listener's interface is not on this machine), /readyz answers 503 with
// the host's own reason, and a join is refused at once with GRANT_FAILED
// rather than after JoinTimeout.
func TestHostThatCannotStartIsReported(t *testing.T) {
	r := launchRealm(t, func(c *Config) {
		c.Spawn.Listen = "203.0.113.7" // TEST-NET-3: no interface of this machine
		c.JoinTimeout = time.Minute
	})
	var body map[string]any
	waitFor(t, "/readyz reporting the failed host", func() bool {
		var status int
		status, body = readyState(t, r.url)
		reason, _ := body["reason"].(string)
		return status == http.StatusServiceUnavailable && body["ready"] == false && strings.HasPrefix(reason, "area hosts cannot start: ")
	})
	if reason, _ := body["reason"].(string); !strings.Contains(reason, "cannot assign requested address") {
		t.Fatalf("/readyz reason %q; want the host's own words", reason)
	}
	c, _ := r.player("early")
	area, err := c.CreateArea(context.Background(), "Home", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // well under JoinTimeout
	defer cancel()
	_, err = c.Join(ctx, area.ID)
	var e *dirclient.Error
	if !errors.As(err, &e) || e.Code != "GRANT_FAILED" || e.Message != errHostsCannotStart.Message || e.ErrorID == "" {
		t.Fatalf("join: %v; want GRANT_FAILED at once: %q, with an error id", err, errHostsCannotStart.Message)
	}
}

// TestRunExposesNoSecret (issue 12, findings 5, 6 and 9): a real `ley
// run` with its secrets and LEY_PPROF in its environment spawns hosts
// that start and hold none of it; joins work; /debug/pprof/cmdline holds
// no secret; /metrics is served on its own loopback listener, printed at
// start, and not on the API port; a secret on the command line is
// refused.
func TestRunExposesNoSecret(t *testing.T) {
	db := pgtest.NewSchema(t)
	pprofAddr, httpAddr, ctlAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	secrets := map[string]string{"LEY_DATABASE_URL": db}
	for k, v := range directorSecrets {
		secrets[k] = v
	}
	env := append(os.Environ(), "LEY_PPROF="+pprofAddr, "LEY_FAILPOINT=no.such.failpoint")
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(leyBin, "run", "--http", httpAddr, "--control", ctlAddr, "--log-level", "warn", "--host-log-level", "warn")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	banner := map[string]string{}
	lineRE := regexp.MustCompile(`^\s*(metrics|demo login):\s+(\S+)`)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "Ctrl-C stops the realm") { // the banner's last line
		for k, v := range secrets {
			if strings.Contains(sc.Text(), v) {
				t.Errorf("the start banner shows %s: %q", k, sc.Text())
			}
		}
		if m := lineRE.FindStringSubmatch(sc.Text()); m != nil {
			banner[m[1]] = m[2]
		}
		if strings.Contains(sc.Text(), "owns the village Area") {
			banner["area line"] = sc.Text()
		}
	}
	go io.Copy(io.Discard, stdout)
	base := "http://" + httpAddr
	c := dirclient.New(base)
	waitFor(t, "a host registered", func() bool { i, err := c.Info(context.Background()); return err == nil && i.Hosts >= 1 })
	if status, body := readyState(t, base); status != http.StatusOK {
		t.Fatalf("/readyz %d %v; want ready", status, body)
	}

	ctx := context.Background()
	if _, err := c.Login(ctx, banner["demo login"], directorSecrets["LEY_DEMO_PASSWORD"]); err != nil {
		t.Fatalf("demo login (banner %q): %v", banner, err)
	}
	var areaID uint32
	if _, err := fmt.Sscanf(banner["area line"][strings.Index(banner["area line"], "Area ")+5:], "%d", &areaID); err != nil {
		t.Fatalf("area from %q: %v", banner["area line"], err)
	}
	j, err := c.Join(ctx, areaID)
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	connect(t, j)
	hosts, err := c.Hosts(ctx)
	if err != nil || len(hosts) == 0 {
		t.Fatalf("hosts %+v, %v", hosts, err)
	}
	for _, h := range hosts {
		checkHostExposure(t, h.PID, secrets, "no.such.failpoint")
	}

	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	cmdline, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(cmdline, []byte("run")) {
		t.Fatalf("/debug/pprof/cmdline: %d %q", resp.StatusCode, cmdline)
	}
	for k, v := range secrets {
		if bytes.Contains(cmdline, []byte(v)) {
			t.Errorf("/debug/pprof/cmdline shows %s", k)
		}
	}

	metricsURL := banner["metrics"]
	if !strings.HasPrefix(metricsURL, "http://127.0.0.1:") {
		t.Fatalf("metrics at %q; want a loopback URL in the start banner", metricsURL)
	}
	resp, err = http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("ley_hosts ")) {
		t.Fatalf("GET %s: %d", metricsURL, resp.StatusCode)
	}
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics on the API port: %v, %v; want 404", resp, err)
	} else {
		resp.Body.Close()
	}

	// A secret on the command line is refused before anything starts.
	out, err := exec.Command(leyBin, "run", "--host-key", "argv-secret", "--http", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--host-key") || !strings.Contains(string(out), "LEY_HOST_KEY") {
		t.Fatalf("ley run --host-key: %v\n%s\nwant a refusal naming LEY_HOST_KEY", err, out)
	}
}
