package load

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: microseconds from 1 µs to 10 min, 3 significant
// digits (about 150 KiB a histogram, so they are shared by shards of
// clients rather than kept per client).
const (
	histMin    = 1
	histMax    = int64(10 * time.Minute / time.Microsecond)
	histDigits = 3
	numShards  = 16
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// shard holds the histograms and counters of the clients assigned to it.
// Everything is guarded by mu, held for O(1) work per frame.
type shard struct {
	mu             sync.Mutex
	gap            *hdrhistogram.Histogram // steady-phase gaps, µs
	gapSec         *hdrhistogram.Histogram // every gap of the current second, µs
	rtt            *hdrhistogram.Histogram // steady-phase intent round trips, µs
	frames         int64                   // all frames received
	bytes          int64                   // all payload bytes received
	stutters       int64                   // all gaps over StutterGap
	steadyStutters int64                   // gaps over StutterGap in the steady phase
}

func newShard() *shard {
	return &shard{gap: newHist(), gapSec: newHist(), rtt: newHist()}
}

// stats is the run's shared measurement state.
type stats struct {
	shards    [numShards]*shard
	measuring atomic.Bool  // the steady phase is on
	connected atomic.Int64 // players bound right now
	errCount  atomic.Int64
	// portalRefused counts portal_blocked and portal_transfer_rejected
	// told to players that walk at random (not errors: see the Summary).
	portalRefused atomic.Int64
	// tradesDone counts the trades players of the build pattern were told
	// were done (each trade by both of its players).
	tradesDone atomic.Int64
	// closings counts area_closing{AREA_CLOSING} told to players, and
	// rejoins the players that joined their Area again after it closed
	// under them (not errors: see the Summary).
	closings, rejoins atomic.Int64

	emu    sync.Mutex
	errors map[string]int64 // guarded by emu

	// steadyFrom and steadyTo are the cumulative counters as the steady
	// phase starts and ends (written by the run's own goroutine only).
	steadyFrom, steadyTo totals
}

// startSteady opens the steady phase: gaps and round trips are measured
// from here, and the counters are read as it starts.
func (s *stats) startSteady() {
	s.steadyFrom = s.counts()
	s.measuring.Store(true)
}

// endSteady closes the steady phase.
func (s *stats) endSteady() {
	s.measuring.Store(false)
	s.steadyTo = s.counts()
}

// counts sums the cumulative counters without touching the histograms.
func (s *stats) counts() totals {
	var t totals
	for _, sh := range s.shards {
		sh.mu.Lock()
		t.frames += sh.frames
		t.bytes += sh.bytes
		t.stutters += sh.stutters
		sh.mu.Unlock()
	}
	return t
}

func newStats() *stats {
	s := &stats{errors: map[string]int64{}}
	for i := range s.shards {
		s.shards[i] = newShard()
	}
	return s
}

// fail counts one error of kind.
func (s *stats) fail(kind string) {
	s.errCount.Add(1)
	s.emu.Lock()
	s.errors[kind]++
	s.emu.Unlock()
}

func (s *stats) errorMap() map[string]int64 {
	s.emu.Lock()
	defer s.emu.Unlock()
	out := make(map[string]int64, len(s.errors))
	for k, v := range s.errors {
		out[k] = v
	}
	return out
}

// totals are the cumulative counters summed over the shards.
type totals struct {
	frames, bytes, stutters int64
}

// second merges and resets every shard's per-second gap histogram into
// into (reset first) and returns the cumulative counters.
func (s *stats) second(into *hdrhistogram.Histogram) totals {
	into.Reset()
	for _, sh := range s.shards {
		sh.mu.Lock()
		into.Merge(sh.gapSec)
		sh.gapSec.Reset()
		sh.mu.Unlock()
	}
	return s.counts()
}

// steady merges the steady-phase histograms.
func (s *stats) steady() (gap, rtt *hdrhistogram.Histogram, stutters int64) {
	gap, rtt = newHist(), newHist()
	for _, sh := range s.shards {
		sh.mu.Lock()
		gap.Merge(sh.gap)
		rtt.Merge(sh.rtt)
		stutters += sh.steadyStutters
		sh.mu.Unlock()
	}
	return gap, rtt, stutters
}

// Dist summarises a distribution in milliseconds.
type Dist struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// distOf summarises a histogram of microseconds.
func distOf(h *hdrhistogram.Histogram) Dist {
	if h.TotalCount() == 0 {
		return Dist{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Dist{
		Count: h.TotalCount(),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		Max:   ms(h.Max()),
		Mean:  h.Mean() / 1000,
	}
}

// distOfDurations summarises a few durations (logins, joins) exactly.
func distOfDurations(d []time.Duration) Dist {
	if len(d) == 0 {
		return Dist{}
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) float64 { return ms(s[int(p*float64(len(s)-1)+0.5)]) }
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	return Dist{Count: int64(len(s)), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: ms(s[len(s)-1]), Mean: ms(sum) / float64(len(s))}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Point is one second of the time series.
type Point struct {
	T         float64 `json:"t_s"`       // seconds since the run started
	Phase     string  `json:"phase"`     // login, ramp, steady or drain
	Connected int64   `json:"connected"` // players bound
	Frames    int64   `json:"frames"`    // frames received in the second
	Bytes     int64   `json:"bytes"`     // bytes received in the second
	GapP50    float64 `json:"gap_p50_ms"`
	GapP99    float64 `json:"gap_p99_ms"`
	Stutters  int64   `json:"stutters"` // gaps over StutterGap in the second
	Errors    int64   `json:"errors"`   // errors in the second
}
