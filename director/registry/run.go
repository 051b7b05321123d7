package registry

import (
	"context"
	"time"

	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/store"
	"github.com/prometheus/client_golang/prometheus"
)

// New returns a Registry on st; Serve takes its control connections and
// Run its loops.
func New(cfg Config, st Store) (*Registry, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Registry{
		cfg: cfg, log: cfg.Logger, store: st, metrics: newMetrics(cfg.Registerer), logs: loglimit.Limiter{Every: logEvery},
		hosts: map[uint32]*Host{}, areas: map[store.AreaID]*Live{}, lost: map[store.AreaID]time.Time{},
		ending: map[store.AreaID]int{}, ended: map[store.AreaID]store.Epoch{},
		spawned: map[store.TokenHash]*child{}, recorded: map[store.TokenHash]store.HostRecord{},
		changed: make(chan struct{}), recalled: make(chan struct{}), started: time.Now(),
	}
	r.waiting.init()
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ley_snapshots_waiting",
			Help: "Area snapshots the store could not take, held in the director's memory until it can (a director that stops loses them)."},
			func() float64 { return float64(r.pendingW.len()) }))
	}
	return r, nil
}

// Run runs the registry's loops until ctx is done: hosts that stopped
// beating are dropped, leases of cut-off hosts run out, idle Areas close,
// snapshots the store refused for a while are written again, and
// recorded hosts that did not come back are forgotten.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		r.watchHeartbeats(now)
		r.expireLost(now)
		r.forgetRecorded(ctx, now)
		r.closeIdle(now)
		r.retryWrites(ctx)
	}
}
