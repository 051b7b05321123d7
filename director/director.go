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
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/director/transfer"
	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/store"
)

// logEvery is the most often one kind of the director's repeated log
// lines (refusals, forwarding failures) is written.
const logEvery = time.Second

// stopGrace bounds how long a realm that stops waits for each of its
// hosts to close its Areas (final snapshots included) before killing it.
const stopGrace = 15 * time.Second

// Director runs a realm: the HTTP shell over its owners. The registry
// (director/registry) holds the area hosts and live Areas and serves the
// control channel; the transfers (director/transfer) move characters
// (crossings, moves by the door) and reconcile; the spawner
// (director/spawner) starts host processes; the realm door, the
// accounts and the quotas are the shell's own (door.go, api.go,
// quota.go). All database access goes through the store.
//
// Concurrency: HTTP handlers, the control links and the loops of Run share
// the Director; each owner has its own lock, and the shell's own state is
// in atomics or under mu (the starter Areas).
type Director struct {
	cfg     Config
	log     *slog.Logger
	store   store.Store
	hasher  *auth.Hasher
	limiter *auth.Limiter // sign-ups and logins per client address
	// apiLimiter limits the authenticated requests of each session;
	// sessions believes sessions the store confirmed, for a while.
	apiLimiter *auth.Limiter
	sessions   *sessionCache
	logins     *auth.Backoff // failed logins per (client address, account)
	quotas     *quotas
	registry   *registry.Registry
	transfers  *transfer.Transfers
	spawner    *spawner.Spawner
	metrics    *prometheus.Registry
	counters   counters

	controlAddr string
	httpAddr    string
	metricsAddr string
	metricsLn   net.Listener // set by Listen (or Run) when cfg.Metrics is set
	ready       atomic.Bool
	// stopHosts is set by StopRealm: Run stops the hosts it spawned as it
	// stops (otherwise they outlive it, for the next director).
	stopHosts atomic.Bool
	// leading is set while this director leads the realm (see leader.go);
	// leader is who leads as last read while it follows; term is the
	// term it leads in (set before leading, then read-only).
	leading atomic.Bool
	leader  atomic.Pointer[store.Leader]
	term    store.Term
	lost    *store.Leadership // the leadership held; set with term
	logs    loglimit.Limiter  // refusals and forwarding failures: at most one line a key a second
	// settings caches the realm's settings a moment (see realmSettings).
	settings atomic.Pointer[cachedSettings]
	// demo is the login GET /director/info offers (OfferDemoLogin), if any.
	demo   atomic.Pointer[DemoLogin]
	warned warnOnce // content warnings: once a key

	mu sync.Mutex // guards starter
	// starter are the Areas every new account becomes a member of
	// (cfg.StarterAreas and AddStarterAreas).
	starter []store.AreaID
}

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

// StopRealm makes Run stop the hosts it spawned as it stops: the realm
// itself stops (ley run's Ctrl-C), each host closing its Areas with their
// final snapshots while the director still takes them. Without it, a
// director that stops (SIGTERM, a restart, a lost leadership) leaves its
// hosts running with their Areas, and the next director adopts them.
func (d *Director) StopRealm() { d.stopHosts.Store(true) }

// Addrs reports the HTTP and control addresses once Run is listening.
func (d *Director) Addrs() (httpAddr, controlAddr string) { return d.httpAddr, d.controlAddr }

// MetricsAddr reports the address serving GET /metrics once Listen (or
// Run) bound it: "" when cfg.Metrics is empty.
func (d *Director) MetricsAddr() string { return d.metricsAddr }

// listenMetrics binds the metrics listener, once, when cfg.Metrics is set.
func (d *Director) listenMetrics() error {
	if d.cfg.Metrics == "" || d.metricsLn != nil {
		return nil
	}
	ln, err := net.Listen("tcp", d.cfg.Metrics)
	if err != nil {
		return fmt.Errorf("listen metrics %s: %w", d.cfg.Metrics, err)
	}
	d.metricsLn, d.metricsAddr = ln, ln.Addr().String()
	return nil
}

// Listen binds the HTTP and control listeners (so callers learn the ports
// before Run) and returns them; it binds the metrics listener too (see
// MetricsAddr).
func (d *Director) Listen() (httpLn, controlLn net.Listener, err error) {
	controlLn, err = listen(d.cfg.Control)
	if err != nil {
		return nil, nil, fmt.Errorf("listen control %s: %w", d.cfg.Control, err)
	}
	httpLn, err = net.Listen("tcp", d.cfg.HTTP)
	if err != nil {
		controlLn.Close()
		return nil, nil, fmt.Errorf("listen http %s: %w", d.cfg.HTTP, err)
	}
	if err := d.listenMetrics(); err != nil {
		controlLn.Close()
		httpLn.Close()
		return nil, nil, err
	}
	d.controlAddr = controlLn.Addr().String()
	if controlLn.Addr().Network() == "unix" {
		d.controlAddr = "unix:" + d.controlAddr
	}
	d.httpAddr = httpLn.Addr().String()
	return httpLn, controlLn, nil
}

func listen(addr string) (net.Listener, error) {
	if len(addr) > 5 && addr[:5] == "unix:" {
		return net.Listen("unix", addr[5:])
	}
	return net.Listen("tcp", addr)
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
