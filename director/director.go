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

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/store"
)

// Director runs a realm: the HTTP API, the control channel, the host
// registry and spawner, Area lifecycle, and all persistence.
//
// Concurrency: HTTP handlers, one goroutine per host link, and the
// housekeeping loops share the registries below under mu; the store is
// safe for concurrent use.
type Director struct {
	cfg     Config
	log     *slog.Logger
	store   store.Store
	hasher  *auth.Hasher
	limiter *auth.Limiter // sign-ups and logins per client address
	logins  *auth.Backoff // failed logins per (client address, account)
	quotas  *quotas
	spawner *spawner
	joinSeq atomic.Uint64

	controlAddr string
	httpAddr    string
	metricsAddr string
	metricsLn   net.Listener // set by Listen (or Run) when cfg.Metrics is set
	ready       atomic.Bool
	// leading is set while this director leads the realm (see leader.go);
	// leader is who leads as last read while it follows; term is the
	// term it leads in (set before leading, then read-only).
	leading atomic.Bool
	leader  atomic.Pointer[store.Leader]
	term    store.Term
	lost    *store.Leadership // the leadership held; set with term
	// unregistered counts control connections that have not registered
	// yet (capped by cfg.ControlMaxUnregistered).
	unregistered atomic.Int64
	logs         logLimiter // refusals: at most one line a reason a second
	warned       warnOnce   // content warnings: once a key

	mu           sync.Mutex // guards everything below
	hosts        map[uint32]*host
	nextHost     uint32
	inspectSeq   uint64 // the last admin inspection's id
	areas        map[store.AreaID]*live
	spawnTokens  map[string]*child
	hostsChanged chan struct{}   // closed and replaced when hosts come or go
	crossing     map[string]bool // transfer ids being answered
	// hostFailure is set while spawned hosts exit before registering:
	// cleared when any host registers.
	hostFailure *hostFailure
	// starter are the Areas every new account becomes a member of
	// (cfg.StarterAreas and AddStarterAreas).
	starter []store.AreaID

	transfers transferCache
	counters  counters
	accounts  accountLocks
}

// accountLocks serialises what moves one account's character: joins and
// portal crossings of the same account never interleave, so a join's
// grant always reflects where the character is.
type accountLocks struct {
	mu    sync.Mutex
	locks map[store.AccountID]*accountLock
}

// accountLock is one account's lock: a token in held while it is taken.
// A channel rather than a sync.Mutex: the lock is held across a grant's
// round trip to a host, and a wait on a channel is one testing/synctest
// sees as durable, so the transfer model test can run the director in a
// bubble (a goroutine waiting on a mutex keeps a bubble from settling).
type accountLock struct {
	held  chan struct{}
	users int
}

// lock takes acct's lock and returns its release.
func (l *accountLocks) lock(acct store.AccountID) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[store.AccountID]*accountLock{}
	}
	al := l.locks[acct]
	if al == nil {
		al = &accountLock{held: make(chan struct{}, 1)}
		l.locks[acct] = al
	}
	al.users++
	l.mu.Unlock()
	al.held <- struct{}{}
	return func() {
		<-al.held
		l.mu.Lock()
		if al.users--; al.users == 0 {
			delete(l.locks, acct)
		}
		l.mu.Unlock()
	}
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
		cfg:          cfg,
		log:          cfg.Logger.With("role", "director"),
		store:        st,
		hasher:       auth.NewHasher(auth.DefaultParams(), cfg.MaxConcurrentHashes),
		limiter:      limiter,
		logins:       logins,
		quotas:       q,
		hosts:        map[uint32]*host{},
		areas:        map[store.AreaID]*live{},
		spawnTokens:  map[string]*child{},
		hostsChanged: make(chan struct{}),
		crossing:     map[string]bool{},
		counters:     newCounters(),
		logs:         logLimiter{every: logEvery},
		starter:      slices.Clone(cfg.StarterAreas),
	}
	d.joinSeq.Store(uint64(time.Now().UnixNano()))
	d.spawner = newSpawner(d)
	return d, nil
}

// notifyHosts wakes everyone waiting for the host registry. d.mu held.
func (d *Director) notifyHosts() {
	close(d.hostsChanged)
	d.hostsChanged = make(chan struct{})
}

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
	run(func() { d.serveControl(ctx, controlLn) })
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
	spawnerDone := make(chan struct{})
	err := d.begin(ctx, &wg, spawnerDone)
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
	<-spawnerDone // hosts stopped: they sent their final snapshots while the control loop still ran
	wg.Wait()
	d.dropLinks()
	if cerr := d.store.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	return err
}

// dropLinks closes the link of every host still registered (hosts started
// elsewhere): they reconnect, to whichever director leads next.
func (d *Director) dropLinks() {
	d.mu.Lock()
	hosts := make([]*host, 0, len(d.hosts))
	for _, h := range d.hosts {
		hosts = append(hosts, h)
	}
	d.mu.Unlock()
	for _, h := range hosts {
		h.conn.Close()
	}
}

// begin waits for the leadership, checks the starter Areas, and starts the
// loops of a leading director (on wg, the spawner closing spawnerDone when
// it stops). On an error (ctx done while following among them) nothing
// was started and spawnerDone is closed.
func (d *Director) begin(ctx context.Context, wg *sync.WaitGroup, spawnerDone chan struct{}) error {
	l, err := d.lead(ctx)
	if err == nil {
		d.lost = l
		d.term = l.Term()
		err = d.checkStarterAreas(ctx)
	}
	if err != nil {
		close(spawnerDone)
		return err
	}
	d.leading.Store(true)
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { d.watchHeartbeats(ctx) })
	run(func() { d.lifecycle(ctx) })
	run(func() { d.sample(ctx) })
	run(func() { d.reconcile(ctx) })
	run(func() { d.logStats(ctx) })
	go func() { d.spawner.run(ctx); close(spawnerDone) }()
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
