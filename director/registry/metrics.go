package registry

import "github.com/prometheus/client_golang/prometheus"

// metrics are the registry's counters, counted as events happen.
type metrics struct {
	grants    *prometheus.CounterVec // result: ok, failed
	snapshots *prometheus.CounterVec // result: applied, stale, fenced, unavailable, refused, error, over_budget, backlog
	// commitSizes observes each transaction that wrote snapshots: how
	// many it wrote (more than one: a group commit, persistGroup).
	commitSizes prometheus.Histogram
	failures    prometheus.Counter // Areas failed alone after a panic, as hosts reported them
	hostExits   prometheus.Counter // spawned host processes that exited while the director ran
	// hostRefusals counts registered hosts' messages refused (type,
	// reason: see guard.go); controlRefusals control connections closed
	// before they registered (reason).
	hostRefusals    *prometheus.CounterVec
	controlRefusals *prometheus.CounterVec
	dropped         prometheus.Counter // answers to hosts dropped: the host did not read them in time
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		grants:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_grants_total", Help: "Join grants registered on hosts, by result."}, []string{"result"}),
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_snapshot_writes_total", Help: "Area snapshots received from hosts, by outcome."}, []string{"result"}),
		commitSizes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ley_snapshot_commit_snapshots",
			Help:    "Area snapshots written by each store transaction (more than one: a group commit of snapshots a host sent together).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64}}),
		failures:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ley_area_failures_total", Help: "Areas that panicked on a host and were failed alone (reported by area_closed)."}),
		hostExits: prometheus.NewCounter(prometheus.CounterOpts{Name: "ley_host_exits_total", Help: "Spawned area host processes that exited while the director was running (crashes, kills)."}),
		hostRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_host_message_refusals_total",
			Help: "Messages from registered hosts the director refused (about an Area not placed on that host, a stale incarnation, a bad snapshot...), by type and reason."}, []string{"type", "reason"}),
		controlRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ley_control_refusals_total",
			Help: "Control connections closed before they registered, by reason."}, []string{"reason"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "ley_host_answers_dropped_total",
			Help: "Heartbeat and snapshot acks the director dropped because a host did not read them in time (it asks again)."}),
	}
	if reg != nil {
		reg.MustRegister(m.grants, m.snapshots, m.commitSizes, m.failures, m.hostExits, m.hostRefusals, m.controlRefusals, m.dropped)
	}
	return m
}
