package director

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// child is an area host process the director started.
type child struct {
	token      string
	cmd        *exec.Cmd
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
	c := &child{token: randomHex(16), registered: make(chan struct{}), exited: make(chan struct{}), keep: keep}
	c.cmd = exec.Command(bin, "areahost",
		"--director", s.d.controlAddr,
		"--spawn-token", c.token,
		"--listen", cfg.Listen+":0",
		"--name", fmt.Sprintf("host-%d", time.Now().UnixNano()%100000),
		"--pool-size", strconv.Itoa(cfg.PoolSize),
		"--tick-rate", strconv.Itoa(cfg.TickRate),
		"--interest-radius", strconv.Itoa(cfg.InterestRadius),
		"--cell-size", strconv.Itoa(cfg.CellSize),
		"--snapshot-every", strconv.Itoa(cfg.SnapshotEvery),
		"--persist-every", cfg.PersistEvery.String(),
		"--resume-grace", cfg.ResumeGrace.String(),
		"--transfer-timeout", cfg.TransferTimeout.String(),
		"--log-level", cfg.LogLevel,
	)
	c.cmd.Env = os.Environ()
	if cfg.MemLimit != "" {
		c.cmd.Env = append(c.cmd.Env, "GOMEMLIMIT="+cfg.MemLimit)
	}
	c.cmd.Stdout, c.cmd.Stderr = os.Stderr, os.Stderr
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
	s.d.mu.Lock()
	delete(s.d.spawnTokens, c.token)
	h := c.host
	s.d.mu.Unlock()
	if h != nil {
		s.d.unregister(h, fmt.Errorf("process exited: %v", err))
	}
	if s.ctx.Err() != nil {
		return
	}
	s.d.counters.hostExits.Inc()
	s.d.log.Warn("area host exited", "pid", c.cmd.Process.Pid, "err", err, "ran", time.Since(started).Round(time.Millisecond))
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
