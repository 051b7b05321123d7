package ecs

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTickP99MatchesStats checks the sort-free p99 against the sorted one
// over windows of every fill level, with ties and with durations in any order.
func TestTickP99MatchesStats(t *testing.T) {
	a, err := NewArea(Config{ID: 1, W: 8, H: 8})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if got := a.TickP99(); got != 0 {
		t.Fatalf("empty window: TickP99 = %v, want 0", got)
	}
	for round := 0; round < 3*StatsWindow; round++ {
		d := time.Duration(rng.IntN(50)) * time.Microsecond // few values: many ties
		if round%7 == 0 {
			d = time.Duration(rng.IntN(5000)) * time.Microsecond
		}
		a.stats.record(d, 0, 0, a, true)
		if got, want := a.TickP99(), a.Stats().P99; got != want {
			t.Fatalf("after %d ticks: TickP99 = %v, Stats().P99 = %v", round+1, got, want)
		}
	}
}

// TestLatenessIsCounted: a tick that began a whole slot or more after its
// slot counts as late, and the worst delay is kept; an Area stepped
// outside a Clock (no period) is never late.
func TestLatenessIsCounted(t *testing.T) {
	a, err := NewArea(Config{ID: 1, W: 8, H: 8})
	if err != nil {
		t.Fatal(err)
	}
	const period = 50 * time.Millisecond
	now := time.Now()
	for _, late := range []time.Duration{time.Millisecond, period, 3 * period, 2 * time.Millisecond} {
		a.step(now, now, 0, late, period)
	}
	a.step(now, now, 0, 10*period, 0)
	if st := a.Stats(); st.Late != 2 || st.WorstLate != 10*period {
		t.Fatalf("late %d, worst %v; want 2 and %v", st.Late, st.WorstLate, 10*period)
	}
}
