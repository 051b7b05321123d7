package agones

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// Config configures a Lifecycle. Start from DefaultConfig.
type Config struct {
	// HealthEvery is the health ping period. It must stay well below the
	// GameServer's spec.health.periodSeconds (Agones' default is 5 s).
	HealthEvery time.Duration
	// RetryEvery is the first delay before Ready, Shutdown or Address try
	// again while the sidecar is unreachable or answers 5xx; it doubles
	// after each failure up to 16 times itself. A status that could not be
	// applied is tried again at the next health ping.
	RetryEvery time.Duration
	// ReleaseAfter is how long a host that had Areas and has none left
	// stays Allocated before it calls Ready again, so that the fleet may
	// scale it down. 0 keeps it Allocated until Shutdown.
	ReleaseAfter time.Duration
	// AreasLabel and PlayersLabel are the label keys (before Agones'
	// LabelPrefix) for the host's Area and player counts.
	AreasLabel   string
	PlayersLabel string
	// Logger receives failures and state changes; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a fresh Config: pings every 2 s, retries from
// 500 ms, release after 30 s idle, labels "ley-areas" and "ley-players".
func DefaultConfig() Config {
	return Config{
		HealthEvery:  2 * time.Second,
		RetryEvery:   500 * time.Millisecond,
		ReleaseAfter: 30 * time.Second,
		AreasLabel:   "ley-areas",
		PlayersLabel: "ley-players",
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.HealthEvery <= 0 || c.RetryEvery <= 0 || c.ReleaseAfter < 0 {
		errs = append(errs, fmt.Errorf("health every %v, retry every %v, release after %v: want positive (release: not negative)", c.HealthEvery, c.RetryEvery, c.ReleaseAfter))
	}
	if err := checkKey(c.AreasLabel); err != nil {
		errs = append(errs, err)
	}
	if err := checkKey(c.PlayersLabel); err != nil {
		errs = append(errs, err)
	}
	if c.AreasLabel == c.PlayersLabel {
		errs = append(errs, fmt.Errorf("areas and players labels are both %q", c.AreasLabel))
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agones: config: %w", err)
	}
	return nil
}

// status is what the host last reported.
type status struct{ areas, players int }

// Lifecycle drives one GameServer through Agones' lifecycle on behalf of an
// area host: health pings, Ready, Allocated while it holds Areas, labels
// with its load, Shutdown when drained. Its methods are safe for
// concurrent use; SetStatus never blocks on the sidecar.
//
// The expected use:
//
//	lc, _ := agones.NewLifecycle(client, agones.DefaultConfig())
//	go lc.Run(ctx)                      // health pings from the start
//	addr, _ := lc.Address(ctx, "client") // node:port for the ws:// URL
//	// ... register with the director ...
//	lc.Ready(ctx)
//	// ... on every change of the host's load:
//	lc.SetStatus(areas, players)
//	// ... once drained:
//	lc.Shutdown(ctx)
type Lifecycle struct {
	c   *Client
	cfg Config
	log *slog.Logger

	wake chan struct{} // capacity 1: a new status or Shutdown is waiting
	done chan struct{} // closed by Shutdown: Run returns

	mu       sync.Mutex // guards want, reported, shutting; taken inside ops, never around it
	want     status
	reported bool // SetStatus has been called
	shutting bool

	// ops serialises the state-changing calls (Ready, Allocate, labels,
	// Shutdown) so Agones sees them in the order they were decided, and
	// guards the fields below.
	ops       sync.Mutex
	shut      bool      // Shutdown succeeded
	applied   status    // labels the sidecar accepted
	labelsSet [2]bool   // whether applied.areas / applied.players was ever set
	allocated bool      // Allocate succeeded and no Ready since
	idleSince time.Time // when an allocated host was first seen empty; zero while it holds Areas
	unhealthy bool      // the last health ping failed (logged once per failure run)
}

// NewLifecycle returns a Lifecycle speaking through c. It fails if cfg is
// invalid (non-positive periods, bad or equal label keys). It does not
// contact the sidecar.
func NewLifecycle(c *Client, cfg Config) (*Lifecycle, error) {
	if c == nil {
		return nil, errors.New("agones: nil client")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Lifecycle{
		c:    c,
		cfg:  cfg,
		log:  cfg.Logger,
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}, nil
}

// Run pings Health at once and then every Config.HealthEvery, and applies
// the latest status from SetStatus as soon as it changes (failures are
// logged and retried at the next ping). It returns when ctx is done or
// after Shutdown succeeded. Call it once, on its own goroutine.
func (l *Lifecycle) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.HealthEvery)
	defer t.Stop()
	l.ping(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.done:
			return
		case <-t.C:
			l.ping(ctx)
			l.apply(ctx)
		case <-l.wake:
			l.apply(ctx)
		}
	}
}

// ping sends one health ping and logs the first failure of a run of them
// and the recovery.
func (l *Lifecycle) ping(ctx context.Context) {
	err := l.c.Health(ctx)
	if ctx.Err() != nil {
		return
	}
	l.ops.Lock()
	defer l.ops.Unlock()
	switch {
	case l.shut:
	case err != nil && !l.unhealthy:
		l.unhealthy = true
		l.log.Warn("agones: health ping failed; will keep trying", "err", err)
	case err == nil && l.unhealthy:
		l.unhealthy = false
		l.log.Info("agones: health pings go through again")
	}
}

// SetStatus records the host's load: how many Areas it runs and how many
// players are bound in them. Run applies it without delay: Allocate when
// the host goes from no Areas to some, the labels whose figure changed,
// and Ready again once the host has been empty for Config.ReleaseAfter.
// It never blocks; after Shutdown it does nothing. Negative counts are
// taken as 0.
func (l *Lifecycle) SetStatus(areas, players int) {
	l.mu.Lock()
	if l.shutting {
		l.mu.Unlock()
		return
	}
	l.want = status{areas: max(areas, 0), players: max(players, 0)}
	l.reported = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // a wake-up is already pending; it will read the latest status
	}
}

// apply brings the GameServer in line with the latest reported status.
// It reads the status once it holds ops, so that what it applies is the
// latest when it gets to act (a status changed and changed back while
// another call held ops is no change).
func (l *Lifecycle) apply(ctx context.Context) {
	l.ops.Lock()
	defer l.ops.Unlock()
	l.mu.Lock()
	want, reported := l.want, l.reported
	l.mu.Unlock()
	if !reported || l.shut {
		return
	}
	switch {
	case want.areas > 0:
		l.idleSince = time.Time{}
		if !l.allocated {
			if err := l.c.Allocate(ctx); err != nil {
				l.logFailure(ctx, "allocate", err)
			} else {
				l.allocated = true
				l.log.Info("agones: allocated", "areas", want.areas)
			}
		}
	case l.allocated && l.cfg.ReleaseAfter > 0:
		now := time.Now()
		if l.idleSince.IsZero() {
			l.idleSince = now
		} else if now.Sub(l.idleSince) >= l.cfg.ReleaseAfter {
			if err := l.c.Ready(ctx); err != nil {
				l.logFailure(ctx, "ready (release)", err)
			} else {
				l.log.Info("agones: released: Ready again after an idle spell", "idle", now.Sub(l.idleSince))
				l.allocated = false
				l.idleSince = time.Time{}
			}
		}
	}
	l.setLabel(ctx, 0, l.cfg.AreasLabel, want.areas, &l.applied.areas)
	l.setLabel(ctx, 1, l.cfg.PlayersLabel, want.players, &l.applied.players)
}

// setLabel sets label key to v unless the sidecar already accepted v.
// Called with ops held.
func (l *Lifecycle) setLabel(ctx context.Context, i int, key string, v int, applied *int) {
	if l.labelsSet[i] && *applied == v {
		return
	}
	if err := l.c.SetLabel(ctx, key, strconv.Itoa(v)); err != nil {
		l.logFailure(ctx, "set label "+key, err)
		return
	}
	*applied = v
	l.labelsSet[i] = true
}

func (l *Lifecycle) logFailure(ctx context.Context, what string, err error) {
	if ctx.Err() == nil {
		l.log.Warn("agones: "+what+" failed; will retry", "err", err)
	}
}

// Ready tells Agones the host takes players; call it once the host has
// registered with its director. It retries while the sidecar is
// unreachable or answers 5xx, and returns nil once it accepted, ctx's
// error once ctx is done, a *StatusError on a 4xx, or ErrShutdown after
// Shutdown.
func (l *Lifecycle) Ready(ctx context.Context) error {
	return l.retry(ctx, "ready", func() error {
		l.ops.Lock()
		defer l.ops.Unlock()
		if l.shut {
			return ErrShutdown
		}
		if err := l.c.Ready(ctx); err != nil {
			return err
		}
		l.allocated = false
		l.idleSince = time.Time{}
		return nil
	})
}

// Shutdown tells Agones the host is done, once it has drained (its Areas
// closed and their final snapshots acknowledged): the GameServer moves to
// Shutdown and the Pod is terminated. It retries like Ready. From the
// call on SetStatus is ignored; once it succeeded Run returns, and Ready
// and Shutdown return ErrShutdown.
func (l *Lifecycle) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	l.shutting = true
	l.mu.Unlock()
	return l.retry(ctx, "shutdown", func() error {
		l.ops.Lock()
		defer l.ops.Unlock()
		if l.shut {
			return ErrShutdown
		}
		if err := l.c.Shutdown(ctx); err != nil {
			return err
		}
		l.shut = true
		close(l.done)
		l.log.Info("agones: shutdown requested")
		return nil
	})
}

// Address returns "host:port" at which players reach the container port
// Agones exposes under portName (the name in the Fleet's spec.ports; ""
// takes the first port): the GameServer's status address and the host
// port Agones picked. It asks the sidecar until both are known, retrying
// like Ready; when ctx is done first the error wraps ctx's error, and
// ErrNoAddress if the GameServer was seen without that port.
func (l *Lifecycle) Address(ctx context.Context, portName string) (string, error) {
	var addr string
	err := l.retry(ctx, "address", func() error {
		gs, err := l.c.GameServer(ctx)
		if err != nil {
			return err
		}
		for _, p := range gs.Status.Ports {
			if (portName == "" || p.Name == portName) && p.Port > 0 && gs.Status.Address != "" {
				addr = net.JoinHostPort(gs.Status.Address, strconv.Itoa(int(p.Port)))
				return nil
			}
		}
		return fmt.Errorf("%w: port %q (state %q, address %q)", ErrNoAddress, portName, gs.Status.State, gs.Status.Address)
	})
	return addr, err
}

// retry runs call until it succeeds, fails with an error that repeating
// will not cure, or ctx is done. Unreachable, 5xx and ErrNoAddress are
// retried after RetryEvery, doubling up to 16 times RetryEvery.
func (l *Lifecycle) retry(ctx context.Context, what string, call func() error) error {
	delay := l.cfg.RetryEvery
	var last error
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s after %d attempts: %w", what, attempt, errors.Join(last, ctx.Err()))
		}
		if !retryable(err) && !errors.Is(err, ErrNoAddress) {
			return fmt.Errorf("%s: %w", what, err)
		}
		last = err
		if attempt == 1 {
			l.log.Info("agones: sidecar not ready yet; retrying", "call", what, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s after %d attempts: %w", what, attempt, errors.Join(last, ctx.Err()))
		case <-time.After(delay):
		}
		delay = min(2*delay, 16*l.cfg.RetryEvery)
	}
}
