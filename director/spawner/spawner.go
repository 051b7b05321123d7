package spawner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrRail reports that the process rail (Config.MaxHosts) is reached.
var ErrRail = errors.New("spawner: host process rail reached")

// Config describes the area host processes a Spawner starts.
type Config struct {
	// Binary is the ley executable to run ("" means this process's own).
	Binary string
	// Director is the control address the hosts register at.
	Director string
	// MinHosts are kept running (started again with backoff when they
	// die); MaxHosts is the process rail: more are never running at once.
	MinHosts, MaxHosts int
	// Args are the areahost flags every host gets (pool size, tick rate,
	// intervals...), after --director, --listen and --name.
	Args []string
	// Listen is the host for the children's client listeners (each takes a
	// free port on it).
	Listen string
	// MemLimit is each host's GOMEMLIMIT ("" for none), NoFile its file
	// descriptor limit, OOMScoreAdj its oom_score_adj (so the kernel's OOM
	// killer takes a host before the director).
	MemLimit    string
	NoFile      uint64
	OOMScoreAdj int
	// Logger receives the spawner's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Child is one area host process a Spawner started. Its Token is its
// credential (LEY_SPAWN_TOKEN in its environment): it registers with it,
// and registers again with it with whichever director leads after this
// one, as the host outlives the director that started it.
type Child struct {
	Token string
	PID   int
	Keep  bool // one of MinHosts: started again when it dies
	cmd   *exec.Cmd
	// reasonFile is where the host writes the error it exits with
	// (ley areahost --exit-reason-file); reason is what it held.
	reasonFile string
	reason     string
	exited     chan struct{}
	err        error // set before exited is closed
}

// Exited is closed once the process exited; Reason then says why.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Reason is why the process exited, in its own words (its last "ley: "
// line or its last line) with its exit status; "" while it runs.
func (c *Child) Reason() string {
	select {
	case <-c.exited:
		return exitReason(c.reason, c.err)
	default:
		return ""
	}
}

// Hooks are what a Spawner tells its owner (the registry) of its children.
type Hooks struct {
	// Started is told each child's token before the process starts, so
	// that its registration is expected.
	Started func(c *Child)
	// Exited is told when a child exited, whether or not it registered
	// (the owner knows which). stopping reports an exit the Spawner caused
	// itself (Stop).
	Exited func(c *Child, stopping bool)
}

// Spawner starts area host children of this binary, keeps MinHosts of them
// running (starting them again with backoff), and never runs more than
// MaxHosts. Its children outlive it: a director that stops (or dies) leaves
// them running, and the next one adopts them. Safe for concurrent use.
type Spawner struct {
	cfg   Config
	hooks Hooks
	log   *slog.Logger

	mu        sync.Mutex // guards kids, backoff, notBefore, ctx
	kids      map[*Child]bool
	backoff   time.Duration
	notBefore time.Time // no kept host starts again before (the backoff)
	ctx       context.Context
}

// New returns a Spawner; Run starts its minimum hosts.
func New(cfg Config, hooks Hooks) *Spawner {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Spawner{cfg: cfg, hooks: hooks, log: cfg.Logger, kids: map[*Child]bool{}, backoff: 100 * time.Millisecond, ctx: context.Background()}
}

// Run keeps MinHosts running until ctx is done: at once, and every
// second, it starts the hosts missing, counting with its own children
// the hosts others reports (the hosts of an earlier director it adopted,
// or may still adopt); a child it starts that dies is started again with
// backoff. It leaves its children running when it returns; Stop stops
// them.
func (s *Spawner) Run(ctx context.Context, others func() int) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s.topUp(others())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// topUp starts the hosts missing to MinHosts, with others counted.
func (s *Spawner) topUp(others int) {
	s.mu.Lock()
	missing := s.cfg.MinHosts - len(s.kids) - others
	if time.Now().Before(s.notBefore) {
		missing = 0
	}
	s.mu.Unlock()
	for range max(missing, 0) {
		if err := s.start(true); err != nil {
			s.log.Error("start area host", "err", err)
			return
		}
	}
}

// Stop interrupts every child this Spawner started (they close their
// Areas, with their final snapshots, and exit) and waits for them, killing
// those still running after grace.
func (s *Spawner) Stop(grace time.Duration) {
	s.mu.Lock()
	var all []*Child
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
		case <-time.After(grace):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
}

// Running is the number of children running now.
func (s *Spawner) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.kids)
}

// StartExtra starts one more host on demand (not started again when it
// dies), within the rail less others (hosts running that this Spawner did
// not start: adopted ones).
func (s *Spawner) StartExtra(others int) error { return s.startWithin(false, others) }

func (s *Spawner) start(keep bool) error { return s.startWithin(keep, 0) }

func (s *Spawner) startWithin(keep bool, others int) error {
	cfg := s.cfg
	s.mu.Lock()
	if len(s.kids)+others >= cfg.MaxHosts {
		s.mu.Unlock()
		return fmt.Errorf("%w (%d)", ErrRail, cfg.MaxHosts)
	}
	bin := cfg.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("find own binary: %w", err)
		}
	}
	c := &Child{Token: newToken(), Keep: keep, exited: make(chan struct{})}
	if f, err := os.CreateTemp("", "ley-host-exit-*"); err == nil {
		c.reasonFile = f.Name()
		f.Close()
	}
	// Nothing secret on the command line (every local user reads it): the
	// spawn token travels in the environment, which Env builds from
	// scratch.
	args := append([]string{"areahost",
		"--director", cfg.Director,
		"--listen", net.JoinHostPort(cfg.Listen, "0"), // an IPv6 address needs its brackets
		"--name", fmt.Sprintf("host-%d", time.Now().UnixNano()%100000)}, cfg.Args...)
	if c.reasonFile != "" {
		args = append(args, "--exit-reason-file", c.reasonFile)
	}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = Env(cfg.MemLimit, c.Token)
	// The host writes to the director's own stderr, not to a pipe the
	// director reads: a host outlives its director (the next one adopts
	// it), and a pipe whose reader died would kill it at its next line.
	c.cmd.Stdout, c.cmd.Stderr = os.Stderr, os.Stderr
	setChildAttrs(c.cmd)
	if s.hooks.Started != nil {
		s.hooks.Started(c)
	}
	if err := c.cmd.Start(); err != nil {
		s.mu.Unlock()
		c.readReason()
		close(c.exited)
		if s.hooks.Exited != nil {
			c.err = err
			s.hooks.Exited(c, false)
		}
		return fmt.Errorf("start area host: %w", err)
	}
	c.PID = c.cmd.Process.Pid
	s.kids[c] = true
	s.mu.Unlock()
	limitChild(c.PID, cfg.NoFile, cfg.OOMScoreAdj, s.log)
	s.log.Info("area host started", "pid", c.PID, "kept", keep)
	go s.watch(c)
	return nil
}

// watch waits for a child to exit; a kept one is started again by Run,
// no sooner than the backoff (which doubles while kept children die
// within a minute of their start).
func (s *Spawner) watch(c *Child) {
	started := time.Now()
	err := c.cmd.Wait()
	c.err = err
	c.readReason()
	close(c.exited)
	s.mu.Lock()
	delete(s.kids, c)
	ctx := s.ctx
	if c.Keep {
		if time.Since(started) > time.Minute {
			s.backoff = 100 * time.Millisecond
		}
		s.notBefore = time.Now().Add(s.backoff)
		s.backoff = min(s.backoff*2, 30*time.Second)
	}
	s.mu.Unlock()
	if s.hooks.Exited != nil {
		s.hooks.Exited(c, ctx.Err() != nil)
	}
}

// envPass are the variables a spawned host takes from the director's
// environment, when set: the system's basics, the Go runtime's knobs, the
// fault-injection spec the crash tests arm (internal/failpoint; only
// leytest builds read it) and the continuous profiling target. Nothing
// else reaches a host: not the database URL, not the host key, not the
// director's own LEY_* settings (its listen addresses among them).
var envPass = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "LC_ALL",
	"GOMAXPROCS", "GOGC", "GODEBUG", "GOTRACEBACK", "GORACE", "GOCOVERDIR",
	"LEY_FAILPOINT", "LEY_PYROSCOPE_URL", "LEY_PYROSCOPE_UPLOAD_RATE",
}

// PassedEnv names the variables a spawned host takes from the director's
// environment (when set), besides its own LEY_SPAWN_TOKEN and GOMEMLIMIT.
func PassedEnv() []string { return slices.Clone(envPass) }

// Env is a spawned host's whole environment: the variables of envPass
// that are set, GOMEMLIMIT, and its spawn token in LEY_SPAWN_TOKEN (a
// process's environment is readable by its own user only; its command
// line by everyone).
func Env(memLimit, token string) []string {
	env := make([]string, 0, len(envPass)+2)
	for _, k := range envPass {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if memLimit != "" {
		env = append(env, "GOMEMLIMIT="+memLimit)
	}
	return append(env, "LEY_SPAWN_TOKEN="+token)
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readReason reads (and removes) the file the host wrote its exit's
// error to, before exited is closed.
func (c *Child) readReason() {
	if c.reasonFile == "" {
		return
	}
	b, _ := os.ReadFile(c.reasonFile)
	_ = os.Remove(c.reasonFile)
	c.reason = string(b)
}

// exitReason is why a host exited, in its own words (the error it wrote
// to its exit reason file), with the exit status; at most 300 bytes of
// printable text.
func exitReason(reason string, waitErr error) string {
	why := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.TrimSpace(reason))
	if len(why) > 300 {
		why = strings.ToValidUTF8(why[:300], "") + "..."
	}
	if why == "" {
		why = "no reason given"
	}
	return fmt.Sprintf("%s (%v)", why, waitErr)
}
