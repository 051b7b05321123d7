package director

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// child is an area host process the director started.
type child struct {
	token      string
	cmd        *exec.Cmd
	stderr     *tailWriter   // its stderr, passed on; the tail says why it exited
	registered chan struct{} // closed when it registered
	host       *host         // set at registration (under Director.mu)
	exited     chan struct{}
	keep       bool // one of the MinHosts: restarted when it dies
}

// spawner starts area host children of this binary, keeps MinHosts of them
// running (restarting with backoff), and never runs more than MaxHosts.
type spawner struct {
	d       *Director
	ctx     context.Context
	mu      sync.Mutex // guards kids
	kids    map[*child]bool
	backoff time.Duration
}

var errRail = errors.New("director: host process rail reached")

// hostFailure says why spawned hosts exit before they register: the last
// one's reason, when, and how many did in a row. Immutable: a new failure
// replaces the Director's pointer (under Director.mu).
type hostFailure struct {
	reason string
	at     time.Time
	count  int
}

// hostRetryAfter is how long after a host failed to start a join refuses
// at once rather than start another host to try again: at most one spawn
// attempt per join burst and period, however many joins arrive.
const hostRetryAfter = 5 * time.Second

// hostEnvPass are the variables a spawned host takes from the director's
// environment, when set: the system's basics, the Go runtime's knobs, the
// fault-injection spec the crash tests arm (net/control/failpoint) and
// the continuous profiling target. Nothing else reaches a host: not the
// database URL, not the host key, not the director's own LEY_* settings
// (its listen addresses among them).
var hostEnvPass = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "LC_ALL",
	"GOMAXPROCS", "GOGC", "GODEBUG", "GOTRACEBACK", "GORACE", "GOCOVERDIR",
	"LEY_FAILPOINT", "LEY_PYROSCOPE_URL", "LEY_PYROSCOPE_UPLOAD_RATE",
}

// hostEnv is a spawned host's whole environment: the variables of
// hostEnvPass that are set, GOMEMLIMIT from cfg, and its spawn token in
// LEY_SPAWN_TOKEN (a process's environment is readable by its own user
// only; its command line by everyone).
func hostEnv(cfg SpawnConfig, token string) []string {
	env := make([]string, 0, len(hostEnvPass)+2)
	for _, k := range hostEnvPass {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if cfg.MemLimit != "" {
		env = append(env, "GOMEMLIMIT="+cfg.MemLimit)
	}
	return append(env, "LEY_SPAWN_TOKEN="+token)
}

// tailWriter passes what it is written to w and keeps the last tailSize
// bytes, from which exitReason picks why a host exited.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex // guards tail
	tail []byte
}

const tailSize = 4 << 10

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailSize {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailSize:]...)
	}
	t.mu.Unlock()
	_, _ = t.w.Write(p) // the director's own stderr failing is no reason to stop the host
	return len(p), nil
}

// exitReason is why a host exited, in its own words: its last "ley: "
// line (how the binary reports the error it exits with), or else its last
// line, with the exit status; at most 300 bytes of printable text.
func (t *tailWriter) exitReason(waitErr error) string {
	t.mu.Lock()
	lines := strings.Split(strings.TrimSpace(string(t.tail)), "\n")
	t.mu.Unlock()
	why := strings.TrimSpace(lines[len(lines)-1])
	for i := len(lines) - 1; i >= 0; i-- {
		if r, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "ley: "); ok {
			why = r
			break
		}
	}
	why = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, why)
	if len(why) > 300 {
		why = strings.ToValidUTF8(why[:300], "") + "..."
	}
	if why == "" {
		why = "no output"
	}
	return fmt.Sprintf("%s (%v)", why, waitErr)
}

func newSpawner(d *Director) *spawner {
	return &spawner{d: d, kids: map[*child]bool{}, backoff: 100 * time.Millisecond}
}

// run starts the minimum hosts and keeps them up until ctx is done; then
// it stops every child.
func (s *spawner) run(ctx context.Context) {
	s.ctx = ctx
	for i := 0; i < s.d.cfg.Spawn.MinHosts; i++ {
		if err := s.start(true); err != nil {
			s.d.log.Error("start area host", "err", err)
		}
	}
	<-ctx.Done()
	s.mu.Lock()
	var all []*child
	for c := range s.kids {
		all = append(all, c)
	}
	s.mu.Unlock()
	for _, c := range all {
		_ = c.cmd.Process.Signal(os.Interrupt)
	}
	for _, c := range all {
		select {
		case <-c.exited:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
}

// startExtra starts one more host on demand (not restarted when it dies).
func (s *spawner) startExtra() error { return s.start(false) }

// pending lists children that have not registered yet.
func (s *spawner) pending() []*child {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*child
	for c := range s.kids {
		select {
		case <-c.registered:
		default:
			out = append(out, c)
		}
	}
	return out
}

func (s *spawner) start(keep bool) error {
	cfg := s.d.cfg.Spawn
	s.mu.Lock()
	if len(s.kids) >= cfg.MaxHosts {
		s.mu.Unlock()
		return fmt.Errorf("%w (%d)", errRail, cfg.MaxHosts)
	}
	bin := cfg.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("find own binary: %w", err)
		}
	}
	c := &child{token: randomHex(16), registered: make(chan struct{}), exited: make(chan struct{}), keep: keep,
		stderr: &tailWriter{w: os.Stderr}}
	// Nothing secret on the command line (every local user reads it): the
	// spawn token travels in the environment, which hostEnv builds from
	// scratch.
	c.cmd = exec.Command(bin, "areahost",
		"--director", s.d.controlAddr,
		"--listen", cfg.Listen+":0",
		"--name", fmt.Sprintf("host-%d", time.Now().UnixNano()%100000),
		"--pool-size", strconv.Itoa(cfg.Pool()),
		"--tick-rate", strconv.Itoa(cfg.TickRate),
		"--interest-radius", strconv.Itoa(cfg.InterestRadius),
		"--cell-size", strconv.Itoa(cfg.CellSize),
		"--snapshot-every", strconv.Itoa(cfg.SnapshotEvery),
		"--persist-every", cfg.PersistEvery.String(),
		"--resume-grace", cfg.ResumeGrace.String(),
		"--transfer-timeout", cfg.TransferTimeout.String(),
		"--log-level", cfg.LogLevel,
	)
	if cfg.Content != "" { // the director's own content folder: the hosts build Areas from the same
		c.cmd.Args = append(c.cmd.Args, "--content", cfg.Content)
	}
	if origins := s.d.webOrigins(); len(origins) > 0 { // the pages that may open players' connections
		c.cmd.Args = append(c.cmd.Args, "--allowed-origins", strings.Join(origins, ","))
	}
	c.cmd.Env = hostEnv(cfg, c.token)
	c.cmd.Stdout, c.cmd.Stderr = os.Stderr, c.stderr
	setChildAttrs(c.cmd)
	s.d.mu.Lock()
	s.d.spawnTokens[c.token] = c
	s.d.mu.Unlock()
	if err := c.cmd.Start(); err != nil {
		s.mu.Unlock()
		s.d.mu.Lock()
		delete(s.d.spawnTokens, c.token)
		s.d.mu.Unlock()
		return fmt.Errorf("start area host: %w", err)
	}
	s.kids[c] = true
	s.mu.Unlock()
	limitChild(c.cmd.Process.Pid, cfg.NoFile, cfg.OOMScoreAdj, s.d.log)
	s.d.log.Info("area host started", "pid", c.cmd.Process.Pid, "kept", keep)
	go s.watch(c)
	return nil
}

// watch waits for a child to exit and restarts a kept one with backoff.
func (s *spawner) watch(c *child) {
	started := time.Now()
	err := c.cmd.Wait()
	close(c.exited)
	s.mu.Lock()
	delete(s.kids, c)
	s.mu.Unlock()
	stopping := s.ctx.Err() != nil
	var failed *hostFailure
	s.d.mu.Lock()
	delete(s.d.spawnTokens, c.token)
	h := c.host
	if h == nil && !stopping {
		// It never registered: it could not start. Say why, so /readyz
		// shows it and joins are refused at once rather than wait for it.
		failed = &hostFailure{reason: c.stderr.exitReason(err), at: time.Now(), count: 1}
		if prev := s.d.hostFailure; prev != nil {
			failed.count = prev.count + 1
		}
		s.d.hostFailure = failed
		s.d.notifyHosts()
	}
	s.d.mu.Unlock()
	if h != nil {
		s.d.unregister(h, fmt.Errorf("process exited: %v", err))
	}
	if stopping {
		return
	}
	s.d.counters.hostExits.Inc()
	if failed != nil {
		s.d.log.Error("area host exited before it registered", "pid", c.cmd.Process.Pid, "reason", failed.reason, "in_a_row", failed.count)
	} else {
		s.d.log.Warn("area host exited", "pid", c.cmd.Process.Pid, "err", err, "ran", time.Since(started).Round(time.Millisecond))
	}
	if !c.keep {
		return
	}
	s.mu.Lock()
	if time.Since(started) > time.Minute {
		s.backoff = 100 * time.Millisecond
	}
	wait := s.backoff
	s.backoff = min(s.backoff*2, 30*time.Second)
	s.mu.Unlock()
	select {
	case <-s.ctx.Done():
		return
	case <-time.After(wait):
	}
	if err := s.start(true); err != nil {
		s.d.log.Error("restart area host", "err", err)
	}
}

// webOrigins are the origins of the pages whose players' connections the
// realm's hosts accept (Config.WebOrigins, or this director's own).
func (d *Director) webOrigins() []string {
	if len(d.cfg.WebOrigins) > 0 {
		return d.cfg.WebOrigins
	}
	var out []string
	add := func(o string) {
		if o != "" && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	if u, err := url.Parse(d.cfg.AdvertiseHTTP); err == nil && u.Host != "" {
		add(u.Scheme + "://" + u.Host)
	}
	host, port, err := net.SplitHostPort(d.httpAddr)
	if err != nil {
		return out
	}
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())):
		// A browser on this machine names it either way.
		add("http://127.0.0.1:" + port)
		add("http://localhost:" + port)
		add("http://[::1]:" + port)
	default:
		add("http://" + net.JoinHostPort(host, port))
	}
	return out
}
