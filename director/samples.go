package director

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/internal/procself"
	"github.com/leyworks/ley/store"
)

// sample writes a director_samples row every SampleEvery: players, live
// and frozen Areas, hosts, the director's RSS and CPU, and the worst tick
// p99 the hosts report; once an hour it deletes those over a week old.
func (d *Director) sample(ctx context.Context) {
	t := time.NewTicker(d.cfg.SampleEvery)
	defer t.Stop()
	lastCPU, lastAt := cpuSelf(), time.Now()
	var lastPrune time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cpu, now := cpuSelf(), time.Now()
		s := d.snapshotSample(now)
		s.CPU = (cpu - lastCPU).Seconds() / now.Sub(lastAt).Seconds()
		lastCPU, lastAt = cpu, now
		if err := d.store.AddSample(ctx, s); err != nil && ctx.Err() == nil {
			d.log.Warn("write director sample", "err", err)
		}
		if now.Sub(lastPrune) >= time.Hour {
			// Kept a week (the console's longest chart), no longer.
			if _, err := d.store.PruneSamples(ctx, now.Add(-maxSampleWindow)); err != nil && ctx.Err() == nil {
				d.log.Warn("prune director samples", "err", err)
			}
			lastPrune = now
		}
	}
}

// logStats logs the director's own line every StatsEvery: players, hosts,
// Areas, memory, goroutines and the Go scheduler's latency p99.
func (d *Director) logStats(ctx context.Context) {
	if d.cfg.StatsEvery <= 0 {
		return
	}
	t := time.NewTicker(d.cfg.StatsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s := d.snapshotSample(time.Now())
		d.log.Info("director stats", "players", s.Players, "hosts", s.Hosts, "live_areas", s.LiveAreas, "frozen_areas", s.FrozenAreas,
			"worst_tick_p99", s.WorstTickP99, "rss_bytes", s.RSSBytes, "goroutines", runtime.NumGoroutine(), "sched_latency_p99", schedLatencyP99())
	}
}

// snapshotSample gathers a sample's figures (CPU excepted).
func (d *Director) snapshotSample(now time.Time) store.Sample {
	s := store.Sample{At: now, RSSBytes: procself.RSSBytes()}
	players := map[store.AccountID]bool{}
	for _, a := range d.registry.Areas() {
		for _, acct := range a.Accounts {
			players[acct] = true
		}
	}
	s.Players = len(players)
	hosts := d.registry.Hosts()
	s.Hosts = len(hosts)
	for _, h := range hosts {
		s.LiveAreas += h.Beat.Active
		s.FrozenAreas += h.Beat.Areas - h.Beat.Active
		if p99 := time.Duration(h.Beat.TickP99) * time.Microsecond; p99 > s.WorstTickP99 {
			s.WorstTickP99 = p99
		}
	}
	return s
}

func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxSampleWindow bounds how far back GET /v1/admin/samples reaches (the
// console's week chart); samples are kept that long.
const maxSampleWindow = 7 * 24 * time.Hour

// samples: GET /v1/admin/samples?since=<seconds> (admins): the director's
// samples of the last since seconds (default an hour, at most a week),
// oldest first: the capacity charts' data.
func (d *Director) samples(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	window := time.Hour
	if s := r.URL.Query().Get("since"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || time.Duration(n)*time.Second > maxSampleWindow {
			return 0, nil, errBadRequest(fmt.Sprintf("since must be 1..%d seconds", int64(maxSampleWindow/time.Second)))
		}
		window = time.Duration(n) * time.Second
	}
	ss, err := d.store.Samples(r.Context(), time.Now().Add(-window))
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := make([]apijson.Sample, len(ss))
	for i, s := range ss {
		out[i] = apijson.Sample{At: s.At.UTC(), Players: s.Players, LiveAreas: s.LiveAreas, FrozenAreas: s.FrozenAreas, Hosts: s.Hosts,
			RSSBytes: s.RSSBytes, CPU: s.CPU, WorstTickP99us: s.WorstTickP99.Microseconds()}
	}
	return http.StatusOK, map[string]any{"samples": out, "every_s": int64(d.cfg.SampleEvery / time.Second)}, nil
}
