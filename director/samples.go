package director

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leyworks/ley/store"
)

// sample writes a director_samples row every SampleEvery: players, live
// and frozen Areas, hosts, the director's RSS and CPU, and the worst tick
// p99 the hosts report.
func (d *Director) sample(ctx context.Context) {
	t := time.NewTicker(d.cfg.SampleEvery)
	defer t.Stop()
	lastCPU, lastAt := cpuSelf(), time.Now()
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
	s := store.Sample{At: now, RSSBytes: rssSelf()}
	d.mu.Lock()
	defer d.mu.Unlock()
	players := map[store.AccountID]bool{}
	for _, l := range d.areas {
		for _, a := range l.accounts {
			players[a] = true
		}
	}
	s.Players = len(players)
	s.Hosts = len(d.hosts)
	for _, h := range d.hosts {
		s.LiveAreas += h.beat.Active
		s.FrozenAreas += h.beat.Areas - h.beat.Active
		if p99 := time.Duration(h.beat.TickP99) * time.Microsecond; p99 > s.WorstTickP99 {
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

// rssSelf reads this process's resident set from /proc (0 where there is none).
func rssSelf() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
