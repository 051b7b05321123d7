package director

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leyworks/ley/director/auth"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/director/transfer"
	"github.com/leyworks/ley/internal/keylock"
	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/store"
)

// logEvery is the most often one kind of the director's repeated log
// lines (refusals, forwarding failures) is written.
const logEvery = time.Second

// stopGrace bounds how long a realm that stops waits for each of its
// hosts to close its Areas (final snapshots included) before killing it.
const stopGrace = 15 * time.Second

// linkDrain bounds how long a stopping director waits for its host links'
// handlers to finish writing what was queued before it closes the store.
const linkDrain = 10 * time.Second

// Director runs a realm: the HTTP shell over its owners. The registry
// (director/registry) holds the area hosts and live Areas and serves the
// control channel; the transfers (director/transfer) move characters
// (crossings, moves by the door) and reconcile; the spawner
// (director/spawner) starts host processes; the realm door, the
// accounts and the quotas are the shell's own (realm.go, api.go,
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

// counters are the shell's own metrics, counted as events happen (the
// registry's and the transfers' own are theirs); the rest is read from
// the owners at scrape time (see Collect).
type counters struct {
	refusals *prometheus.CounterVec // reason: a join refusal's code
}

func newCounters() counters {
	return counters{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_join_refusals_total", Help: "Refused joins, by reason."}, []string{"reason"}),
	}
}

// quotas holds the state of the per-account quotas (Config.MaxOwnedAreas,
// MaxPendingGrants, JoinsPerMinute) beyond the director's registries.
type quotas struct {
	// joins limits each account's joins; nil when JoinsPerMinute is 0.
	// Keyed by account id: a Limiter of its own, apart from the address
	// limiter.
	joins *auth.Limiter
	// creating serialises one account's Area creations, so that the
	// owned count checked is the count the creation adds to.
	creating keylock.Map[store.AccountID]
}

func newQuotas(cfg Config) (*quotas, error) {
	q := &quotas{}
	if n := cfg.JoinsPerMinute; n > 0 {
		l, err := auth.NewLimiter(auth.LimiterConfig{Every: time.Minute / time.Duration(n), Burst: n, MaxKeys: 100_000})
		if err != nil {
			return nil, fmt.Errorf("director: joins per minute: %w", err)
		}
		q.joins = l
	}
	return q, nil
}

// cachedSettings is the realm's settings as read at.
type cachedSettings struct {
	s  store.RealmSettings
	at time.Time
}

// warnOnce logs each of its warnings once per key, for the life of the
// director (at most maxWarnKeys keys; past them, every time). The zero
// value is ready. Safe for concurrent use.
type warnOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

const maxWarnKeys = 1024

// DemoLogin is a login a realm offers to anyone who opens its web client:
// the demo account `ley run` seeds, while its password is the documented
// default (printed by `ley run` and written in the README, so no secret).
type DemoLogin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// once logs msg with args on log at warning level, unless a warning of
// key was logged before.
func (w *warnOnce) once(log *slog.Logger, key, msg string, args ...any) {
	w.mu.Lock()
	if w.seen[key] {
		w.mu.Unlock()
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if len(w.seen) < maxWarnKeys {
		w.seen[key] = true
	}
	w.mu.Unlock()
	log.Warn(msg, args...)
}
