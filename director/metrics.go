package director

import (
	"log/slog"
	"math"
	"net/http"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics counted as events happen; the rest is read from the registries
// at scrape time (see collect).
type counters struct {
	grants    *prometheus.CounterVec // result: ok, failed
	refusals  *prometheus.CounterVec // reason: a join refusal's code
	transfers *prometheus.CounterVec // result: moved, refused
	snapshots *prometheus.CounterVec // result: applied, stale, fenced, error
	failures  prometheus.Counter     // Areas failed alone after a panic, as hosts reported them
	hostExits prometheus.Counter     // spawned host processes that exited while the director ran
	// hostRefusals counts registered hosts' messages refused (type, reason:
	// see guard.go); controlRefusals control connections closed before
	// they registered (reason).
	hostRefusals    *prometheus.CounterVec
	controlRefusals *prometheus.CounterVec
}

func newCounters() counters {
	return counters{
		grants:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_grants_total", Help: "Join grants registered on hosts, by result."}, []string{"result"}),
		refusals:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_join_refusals_total", Help: "Refused joins, by reason."}, []string{"reason"}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_transfers_total", Help: "Portal crossings answered, by result."}, []string{"result"}),
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_snapshot_writes_total", Help: "Area snapshots received from hosts, by outcome."}, []string{"result"}),
		failures:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ley_area_failures_total", Help: "Areas that panicked on a host and were failed alone (reported by area_closed)."}),
		hostExits: prometheus.NewCounter(prometheus.CounterOpts{Name: "ley_host_exits_total", Help: "Spawned area host processes that exited while the director was running (crashes, kills)."}),
		hostRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_host_message_refusals_total",
			Help: "Messages from registered hosts the director refused (about an Area not placed on that host, a stale incarnation, a bad snapshot...), by type and reason."}, []string{"type", "reason"}),
		controlRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_control_refusals_total",
			Help: "Control connections closed before they registered, by reason."}, []string{"reason"}),
	}
}

var (
	descPlayers  = prometheus.NewDesc("ley_players", "Players bound in the realm's Areas (hosts' presence).", nil, nil)
	descAreas    = prometheus.NewDesc("ley_areas", "Areas loaded on hosts, by state.", []string{"state"}, nil)
	descHosts    = prometheus.NewDesc("ley_hosts", "Registered area hosts.", nil, nil)
	descTick     = prometheus.NewDesc("ley_host_tick_seconds", "Tick time of each host's worst active Area over its stats window.", []string{"host", "quantile"}, nil)
	descBytes    = prometheus.NewDesc("ley_host_bytes_out_total", "Bytes sent to clients by each host since it started.", []string{"host"}, nil)
	descFrames   = prometheus.NewDesc("ley_host_frames_out_total", "Frames sent to clients by each host since it started.", []string{"host"}, nil)
	descPeers    = prometheus.NewDesc("ley_host_peers", "Connected peers of each host.", []string{"host"}, nil)
	descHostRSS  = prometheus.NewDesc("ley_host_rss_bytes", "Resident memory of each host.", []string{"host"}, nil)
	descEntities = prometheus.NewDesc("ley_host_entities", "Entities in each host's Areas.", []string{"host"}, nil)
	descHostFail = prometheus.NewDesc("ley_host_area_failures_total", "Areas that panicked on each host since it started (its heartbeat's count).", []string{"host"}, nil)
	descSnapLag  = prometheus.NewDesc("ley_snapshot_lag_seconds", "Longest time since a live Area's last applied snapshot.", nil, nil)
	descSchedP99 = prometheus.NewDesc("ley_director_sched_latency_p99_seconds", "p99 of the director's Go scheduler latency (runtime/metrics /sched/latencies:seconds).", nil, nil)
	descKnobs    = prometheus.NewDesc("ley_config", "The capacity knobs, one series each.", []string{"knob"}, nil)
)

// Describe implements prometheus.Collector.
func (d *Director) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{descPlayers, descAreas, descHosts, descTick, descBytes, descFrames, descPeers, descHostRSS, descEntities, descHostFail, descSnapLag, descSchedP99, descKnobs} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector: the registries' figures at
// scrape time.
func (d *Director) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	d.mu.Lock()
	players := map[uint64]bool{}
	var lag time.Duration
	for _, l := range d.areas {
		for _, a := range l.accounts {
			players[uint64(a)] = true
		}
		if !l.lastSnap.IsZero() && now.Sub(l.lastSnap) > lag {
			lag = now.Sub(l.lastSnap)
		}
	}
	live, frozen := 0, 0
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	for _, h := range d.hosts {
		id := strconv.Itoa(int(h.id))
		b := h.beat
		live += b.Active
		frozen += b.Areas - b.Active
		gauge(descTick, float64(b.TickP50)/1e6, id, "0.5")
		gauge(descTick, float64(b.TickP95)/1e6, id, "0.95")
		gauge(descTick, float64(b.TickP99)/1e6, id, "0.99")
		gauge(descTick, float64(b.TickMax)/1e6, id, "1")
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(b.BytesOut), id)
		ch <- prometheus.MustNewConstMetric(descFrames, prometheus.CounterValue, float64(b.FramesOut), id)
		gauge(descPeers, float64(b.Peers), id)
		gauge(descHostRSS, float64(b.RSSKiB)*1024, id)
		gauge(descEntities, float64(b.Entities), id)
		ch <- prometheus.MustNewConstMetric(descHostFail, prometheus.CounterValue, float64(b.AreaFailures), id)
	}
	hosts := len(d.hosts)
	d.mu.Unlock()
	gauge(descPlayers, float64(len(players)))
	gauge(descAreas, float64(live), "live")
	gauge(descAreas, float64(frozen), "frozen")
	gauge(descHosts, float64(hosts))
	gauge(descSnapLag, lag.Seconds())
	gauge(descSchedP99, schedLatencyP99().Seconds())
	sp := d.cfg.Spawn
	for k, v := range map[string]int{
		"tick_rate_hz": sp.TickRate, "snapshot_rate_hz": sp.TickRate / max(sp.SnapshotEvery, 1), "interest_radius": sp.InterestRadius,
		"cell_size": sp.CellSize, "pool_size": sp.Pool(), "process_rail": sp.MaxHosts, "max_live_areas": sp.Pool() * sp.MaxHosts,
	} {
		gauge(descKnobs, float64(v), k)
	}
}

// metricsHandler serves the director's registry: its own figures, the
// hosts' forwarded ones, and the Go and process collectors.
func (d *Director) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(d, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		d.counters.grants, d.counters.refusals, d.counters.transfers, d.counters.snapshots, d.counters.failures, d.counters.hostExits,
		d.counters.hostRefusals, d.counters.controlRefusals)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// metricsServer serves GET /metrics alone, on the metrics listener: never
// on the public API's port, which anyone may reach without logging in.
func (d *Director) metricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.metricsHandler())
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
}

// metricsURL is where /metrics is served ("" when it is not).
func (d *Director) metricsURL() string {
	if d.metricsAddr == "" {
		return ""
	}
	return "http://" + d.metricsAddr + "/metrics"
}

// schedLatencyP99 reads the p99 of the Go scheduler's latency histogram
// (time goroutines spend runnable before running: the counterpart of an
// event loop's delay).
func schedLatencyP99() time.Duration {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s[0].Value.Float64Histogram()
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want, seen := total*99/100, uint64(0)
	for i, c := range h.Counts {
		seen += c
		if seen > want {
			upper := h.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = h.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}
