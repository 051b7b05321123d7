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

	"github.com/leyworks/ley/store"
)

// registerMetrics registers every metric of the director in d.metrics:
// its counters, its collector (Collect), and the Go and process
// collectors. The registry and the transfers register their own there.
func (d *Director) registerMetrics() {
	d.metrics.MustRegister(d, d.counters.refusals, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

var (
	descPlayers   = prometheus.NewDesc("ley_players", "Players bound in the realm's Areas (hosts' presence).", nil, nil)
	descAreas     = prometheus.NewDesc("ley_areas", "Areas loaded on hosts, by state: live (ticking), frozen, parked (frozen, their state kept as a blob).", []string{"state"}, nil)
	descHosts     = prometheus.NewDesc("ley_hosts", "Registered area hosts.", nil, nil)
	descTick      = prometheus.NewDesc("ley_host_tick_seconds", "Tick time of each host's worst active Area over its stats window.", []string{"host", "quantile"}, nil)
	descBytes     = prometheus.NewDesc("ley_host_bytes_out_total", "Bytes sent to clients by each host since it started.", []string{"host"}, nil)
	descFrames    = prometheus.NewDesc("ley_host_frames_out_total", "Frames sent to clients by each host since it started.", []string{"host"}, nil)
	descPeers     = prometheus.NewDesc("ley_host_peers", "Connected peers of each host.", []string{"host"}, nil)
	descHostRSS   = prometheus.NewDesc("ley_host_rss_bytes", "Resident memory of each host.", []string{"host"}, nil)
	descEntities  = prometheus.NewDesc("ley_host_entities", "Entities in each host's Areas.", []string{"host"}, nil)
	descHostFail  = prometheus.NewDesc("ley_host_area_failures_total", "Areas that panicked on each host since it started (its heartbeat's count).", []string{"host"}, nil)
	descSnapLag   = prometheus.NewDesc("ley_snapshot_lag_seconds", "Longest time since a live Area's last applied snapshot.", nil, nil)
	descSchedP99  = prometheus.NewDesc("ley_director_sched_latency_p99_seconds", "p99 of the director's Go scheduler latency (runtime/metrics /sched/latencies:seconds).", nil, nil)
	descKnobs     = prometheus.NewDesc("ley_config", "The capacity knobs, one series each.", []string{"knob"}, nil)
	descStoreDown = prometheus.NewDesc("ley_store_unavailable", "1 while the store cannot be reached (snapshots wait in memory; joins and crossings are refused UNAVAILABLE), else 0.", nil, nil)
)

// Describe implements prometheus.Collector.
func (d *Director) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{descPlayers, descAreas, descHosts, descTick, descBytes, descFrames, descPeers, descHostRSS, descEntities, descHostFail, descSnapLag, descSchedP99, descKnobs, descStoreDown} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector: the registry's figures at
// scrape time.
func (d *Director) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	players := map[store.AccountID]bool{}
	var lag time.Duration
	for _, a := range d.registry.Areas() {
		for _, acct := range a.Accounts {
			players[acct] = true
		}
		if !a.LastSnap.IsZero() && now.Sub(a.LastSnap) > lag {
			lag = now.Sub(a.LastSnap)
		}
	}
	live, frozen, parked := 0, 0, 0
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	hosts := d.registry.Hosts()
	for _, h := range hosts {
		id := strconv.Itoa(int(h.ID))
		b := h.Beat
		live += b.Active
		frozen += b.Areas - b.Active - b.Parked
		parked += b.Parked
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
	gauge(descPlayers, float64(len(players)))
	gauge(descAreas, float64(live), "live")
	gauge(descAreas, float64(frozen), "frozen")
	gauge(descAreas, float64(parked), "parked")
	gauge(descHosts, float64(len(hosts)))
	gauge(descSnapLag, lag.Seconds())
	gauge(descSchedP99, schedLatencyP99().Seconds())
	unavailable := 0.0
	if d.registry.StoreInDoubt() {
		unavailable = 1
	}
	gauge(descStoreDown, unavailable)
	sp := d.cfg.Spawn
	for k, v := range map[string]int{
		"tick_rate_hz": sp.TickRate, "snapshot_rate_hz": sp.TickRate / max(sp.SnapshotEvery, 1), "interest_radius": sp.InterestRadius,
		"cell_size": sp.CellSize, "pool_size": sp.Pool(), "process_rail": sp.MaxHosts, "max_live_areas": sp.Pool() * sp.MaxHosts,
	} {
		gauge(descKnobs, float64(v), k)
	}
}

// metricsHandler serves d.metrics: the director's own figures, the
// hosts' forwarded ones, the registry's and transfers' counters, and the
// Go and process collectors.
func (d *Director) metricsHandler() http.Handler {
	return promhttp.HandlerFor(d.metrics, promhttp.HandlerOpts{})
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
