package ecs

import (
	"slices"
	"sync"
	"time"
)

// StatsWindow is the number of recent ticks tick statistics cover
// (ten seconds at 20 Hz).
const StatsWindow = 200

type systemStat struct {
	name  string
	total time.Duration
	last  time.Duration
	ticks uint64
}

func (s *systemStat) add(d time.Duration) {
	s.last = d
	s.total += d
	s.ticks++
}

// tickStats keeps the durations of the last StatsWindow ticks. Written by
// the ticking goroutine; read under mu by Stats from any goroutine.
//
// The fields a host's heartbeat reads of every Area each beat (TickP99)
// come first, beside mu: the window's few largest durations are kept as
// ticks are recorded, so that the beat finds an Area's p99 there instead
// of walking its 1.6 KB ring (25 cold cache lines per Area per beat: some
// 5 of the 188 last-level misses a home's intent cost its host in
// bench/hostcost.sh; bench/RESULTS.md).
type tickStats struct {
	mu sync.Mutex
	n  int // ticks recorded, saturating at StatsWindow
	// top holds the topKeep largest durations of ring[:n], descending
	// (the first min(n, topKeep) set), unless stale: a duration that may
	// have been one of them left the window, and the next TickP99 finds
	// them again in the ring.
	top   [topKeep]int64
	stale bool
	next  int
	late  uint64
	worst time.Duration      // worst lateness seen
	ring  [StatsWindow]int64 // tick durations in ns
	// copied from the Area at the end of each tick, for readers elsewhere
	tick     uint64
	entities int
	players  int
	systems  []systemStat
}

// topKeep is how many of the window's largest durations tickStats keeps:
// the p99 of n <= StatsWindow ticks is at most the topKeep-th largest.
const topKeep = StatsWindow/100 + 2

func (s *tickStats) record(d, late, period time.Duration, a *Area, systems bool) {
	s.mu.Lock()
	if systems {
		for i, d := range a.sysLast {
			s.systems[i].add(d)
		}
	}
	s.tick, s.entities, s.players = a.Tick, a.entities, a.players
	if s.n == StatsWindow && s.ring[s.next] >= s.top[topKeep-1] {
		s.stale = true // the duration leaving may be one of the top
	}
	s.ring[s.next] = int64(d)
	s.next = (s.next + 1) % StatsWindow
	if s.n < StatsWindow {
		s.n++
	}
	if !s.stale {
		s.keep(int64(d), min(s.n-1, topKeep))
	}
	if late > s.worst {
		s.worst = late
	}
	if period > 0 && late >= period {
		s.late++
	}
	s.mu.Unlock()
}

// keep puts d among the top durations, filled of them set before it.
func (s *tickStats) keep(d int64, filled int) {
	if filled == topKeep && d <= s.top[topKeep-1] {
		return
	}
	i := min(filled, topKeep-1)
	for i > 0 && s.top[i-1] < d {
		s.top[i] = s.top[i-1]
		i--
	}
	s.top[i] = d
}

// SystemStats is one system's share of an Area's ticks, taken on one
// tick in systemSampleEvery (8).
type SystemStats struct {
	Name  string
	Last  time.Duration // the last sampled tick's time
	Mean  time.Duration // mean over the sampled ticks so far
	Total time.Duration // sum over the sampled ticks
}

// TickStats summarises an Area's recent ticks.
type TickStats struct {
	Area     AreaID
	Mode     Mode
	Tick     uint64
	Window   int // ticks the percentiles cover
	P50, P95 time.Duration
	P99, Max time.Duration
	// Late counts ticks that started a whole period or more after their
	// slot; WorstLate is the largest delay seen between a slot's start and
	// the Area's tick.
	Late      uint64
	WorstLate time.Duration
	// Rested counts the ticks the Area rested through (Area.Rest) since
	// it was made: they are in no percentile.
	Rested   uint64
	Entities int
	Players  int
	Systems  []SystemStats
}

// Counts returns the Area's entity and player counts as of the end of its
// last tick: cheap, for callers that poll many Areas. Safe from any
// goroutine.
func (a *Area) Counts() (entities, players int) {
	a.stats.mu.Lock()
	defer a.stats.mu.Unlock()
	return a.stats.entities, a.stats.players
}

// TickP99 returns the p99 of the Area's recent tick durations, the same
// figure Stats gives, without sorting the window: the few largest
// durations are kept as ticks are recorded (found again in the window
// when one of them has left it). A host polling hundreds of Areas finds
// its slowest this way and asks Stats of that one alone. Safe from any
// goroutine.
func (a *Area) TickP99() time.Duration {
	s := &a.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	if n == 0 {
		return 0
	}
	if s.stale {
		s.top = [topKeep]int64{}
		for filled, d := range s.ring[:n] {
			s.keep(d, min(filled, topKeep))
		}
		s.stale = false
	}
	k := n - percentileIndex(0.99, n) // the p99 is the k-th largest; k <= topKeep
	return time.Duration(s.top[k-1])
}

// percentileIndex is the index of the p-th percentile in n sorted values.
func percentileIndex(p float64, n int) int { return int(p*float64(n-1) + 0.5) }

// Stats returns the Area's tick statistics. It sorts a copy of the window,
// so call it every few seconds, not every tick. Safe from any goroutine:
// Tick, Entities and Players are as of the end of the last tick.
func (a *Area) Stats() TickStats {
	s := &a.stats
	var buf [StatsWindow]int64
	s.mu.Lock()
	n := s.n
	copy(buf[:], s.ring[:n])
	st := TickStats{Area: a.ID, Mode: a.Mode(), Tick: s.tick, Window: n, Late: s.late, WorstLate: s.worst, Entities: s.entities, Players: s.players, Rested: a.rested.Load()}
	for _, sy := range s.systems {
		mean := time.Duration(0)
		if sy.ticks > 0 {
			mean = sy.total / time.Duration(sy.ticks)
		}
		st.Systems = append(st.Systems, SystemStats{Name: sy.name, Last: sy.last, Mean: mean, Total: sy.total})
	}
	s.mu.Unlock()
	if n > 0 {
		w := buf[:n]
		slices.Sort(w)
		pct := func(p float64) time.Duration { return time.Duration(w[percentileIndex(p, n)]) }
		st.P50, st.P95, st.P99, st.Max = pct(0.50), pct(0.95), pct(0.99), time.Duration(w[n-1])
	}
	return st
}
