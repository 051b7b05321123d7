package director

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/director/transfer"
	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/store"
)

// New returns a Director on st (which it owns from now on: Run closes it).
func New(cfg Config, st store.Store) (*Director, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	limiter, err := auth.NewLimiter(auth.LimiterConfig{Every: cfg.AuthEvery, Burst: cfg.AuthBurst, MaxKeys: 100_000})
	if err != nil {
		return nil, err
	}
	apiLimiter, err := auth.NewLimiter(auth.LimiterConfig{Every: cfg.APIEvery, Burst: cfg.APIBurst, MaxKeys: 100_000})
	if err != nil {
		return nil, err
	}
	logins, err := auth.NewBackoff(auth.BackoffConfig{Free: cfg.LoginFreeFailures, Base: cfg.LoginDelay, Max: cfg.LoginMaxDelay,
		Forget: max(time.Hour, 4*cfg.LoginMaxDelay), MaxKeys: 100_000})
	if err != nil {
		return nil, err
	}
	q, err := newQuotas(cfg)
	if err != nil {
		return nil, err
	}
	d := &Director{
		cfg:        cfg,
		log:        cfg.Logger.With("role", "director"),
		store:      st,
		hasher:     auth.NewHasher(auth.DefaultParams(), cfg.MaxConcurrentHashes),
		limiter:    limiter,
		apiLimiter: apiLimiter,
		sessions:   newSessionCache(cfg.SessionIdle, 100_000),
		logins:     logins,
		quotas:     q,
		metrics:    prometheus.NewRegistry(),
		counters:   newCounters(),
		logs:       loglimit.Limiter{Every: logEvery},
		starter:    slices.Clone(cfg.StarterAreas),
	}
	rc := registry.DefaultConfig()
	rc.HostKey, rc.ControlTLS, rc.ControlInsecure = cfg.HostKey, cfg.ControlTLS, cfg.ControlInsecure
	rc.MaxUnregistered, rc.RegisterTimeout = cfg.ControlMaxUnregistered, cfg.ControlRegisterTimeout
	rc.HeartbeatTimeout, rc.Lease = cfg.HeartbeatTimeout, cfg.HostLease
	rc.JoinTimeout, rc.GrantTTL, rc.AreaIdleGrace = cfg.JoinTimeout, cfg.GrantTTL, cfg.AreaIdleGrace
	rc.GrantHold = min(cfg.GrantHold, cfg.GrantTTL)
	rc.SpawnedTickRate = cfg.Spawn.TickRate
	rc.SnapshotRate, rc.SnapshotBurst = float64(cfg.HostSnapshotRate), float64(cfg.HostSnapshotBurst)
	rc.Leading = d.leadingForHosts
	rc.Plan = d.plan
	rc.Registerer = d.metrics
	rc.Logger = d.log
	if d.registry, err = registry.New(rc, st); err != nil {
		return nil, err
	}
	d.transfers = transfer.New(st, d.registry, d.log, d.metrics)
	d.registerMetrics()
	d.registry.SetPortalHandler(d.transfers.PortalOut)
	return d, nil
}

// Run serves until ctx is done, then drains hosts and closes the store.
// It listens first if Listen was not called. It follows (see leader.go)
// until the store lets it lead, then serves the realm; it returns
// ErrDeposed (wrapped) when another director took the leadership over.
func (d *Director) Run(ctx context.Context, httpLn, controlLn net.Listener) error {
	if httpLn == nil || controlLn == nil {
		var err error
		if httpLn, controlLn, err = d.Listen(); err != nil {
			return err
		}
	}
	if err := d.listenMetrics(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           d.front(d.routes()),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      d.cfg.JoinTimeout*3 + 5*time.Second, // a join may spawn a host
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { d.registry.Serve(ctx, controlLn) })
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(httpLn) }()
	var metricsSrv *http.Server
	if d.metricsLn != nil {
		metricsSrv = d.metricsServer()
		go func() {
			if err := metricsSrv.Serve(d.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("metrics server", "err", err)
			}
		}()
	}
	hostsDone := make(chan struct{})
	err := d.begin(ctx, &wg, hostsDone)
	if err == nil {
		d.log.Info("director up", "http", d.httpAddr, "control", d.controlAddr, "metrics", d.metricsURL(), "term", d.term)
		err = d.serveLeading(ctx, httpErr)
	} else if ctx.Err() != nil {
		err = nil // stopped while following
	}
	d.ready.Store(false)
	shutCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	_ = srv.Shutdown(shutCtx)
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutCtx)
	}
	cancel()
	<-hostsDone // stopped, if the realm stops: they sent their final snapshots while the control loop still ran
	wg.Wait()
	d.registry.DropLinks() // the hosts left running register again with whichever director leads next
	// A link's handler may still be writing what its host sent before the
	// link ended (a final snapshot): the store closes after it, so that
	// nothing is written to a closed store (database/sql's Close does not
	// wait for a query in flight to give its connection back).
	if !d.registry.WaitLinks(linkDrain) {
		d.log.Warn("host links still writing to the store at shutdown; closing it under them", "waited", linkDrain)
	}
	if cerr := d.store.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	return err
}

// begin waits for the leadership, checks the starter Areas, recalls the
// hosts an earlier director spawned, and starts the loops of a leading
// director (on wg; hostsDone is closed once the spawner is done: its
// hosts stopped if the realm stops). On an error (ctx done while
// following among them) nothing was started and hostsDone is closed.
func (d *Director) begin(ctx context.Context, wg *sync.WaitGroup, hostsDone chan struct{}) error {
	l, err := d.lead(ctx)
	if err == nil {
		d.lost = l
		d.term = l.Term()
		err = d.checkStarterAreas(ctx)
	}
	if err == nil {
		err = d.registry.Recall(ctx)
	}
	if err != nil {
		close(hostsDone)
		return err
	}
	d.leading.Store(true)
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { d.registry.Run(ctx) })
	run(func() { d.sample(ctx) })
	run(func() { d.transfers.Reconcile(ctx) })
	run(func() { d.logStats(ctx) })
	run(func() { d.watchStore(ctx) })
	d.spawner = d.newSpawner()
	d.registry.SetStarter(d.spawner)
	go func() {
		d.spawner.Run(ctx, d.registry.Adopted)
		if d.stopHosts.Load() {
			var stopping sync.WaitGroup
			stopping.Go(func() { d.spawner.Stop(stopGrace) })
			stopping.Go(func() { d.registry.StopAdopted(stopGrace) })
			stopping.Wait()
		}
		close(hostsDone)
	}()
	d.ready.Store(true)
	return nil
}

// serveLeading serves as the leader until ctx is done, the HTTP server
// fails, or the leadership is lost (ErrDeposed: requests from then on are
// forwarded to the new leader while this director stops).
func (d *Director) serveLeading(ctx context.Context, httpErr <-chan error) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-httpErr:
		return fmt.Errorf("http server: %w", err)
	case <-d.lost.Lost():
		d.leading.Store(false)
		d.ready.Store(false)
		d.log.Error("leadership lost: another director leads; stopping", "term", d.term, "err", d.lost.Err())
		return fmt.Errorf("%w: %w", ErrDeposed, d.lost.Err())
	}
}
