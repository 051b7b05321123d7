package area

import (
	"math/rand/v2"
	"testing"
)

// TestLateRoundsKeepTheirPhase drives roundAt, the snapshot rounds'
// cadence, for Areas of every phase through a clock that skips slots now
// and then, as a late host's does: each Area runs a round at least every
// cadence-and-skips ticks (none is skipped with the tick numbers), and
// keeps the phase it started with, so the rounds stay spread over the
// slots. Taking a late tick's phase instead gathers every Area into one
// phase within a few skips: one slot in every cadence then carries all
// the host's rounds.
func TestLateRoundsKeepTheirPhase(t *testing.T) {
	for _, every := range []uint64{1, 2, 3, 5} {
		rng := rand.New(rand.NewPCG(7, every))
		const areas = 60
		last := make([]uint64, areas) // the tick each Area counts its rounds from
		phase := make([]uint64, areas)
		ran := make([]uint64, areas) // the tick of each Area's last round run
		for i := range last {
			phase[i] = uint64(i) % every
			last[i], ran[i] = phase[i], phase[i]
		}
		perPhase := make([]int, every)
		tick := uint64(every) + 1
		for range 2000 {
			skipped := uint64(0)
			if rng.IntN(4) == 0 { // a late slot: the next one or two are skipped
				skipped = 1 + uint64(rng.IntN(2))
			}
			tick += 1 + skipped
			for i := range last {
				from, run := roundAt(tick, last[i], every)
				if from%every != phase[i] {
					t.Fatalf("every %d: Area %d of phase %d counts its rounds from tick %d after a round at tick %d: phase %d", every, i, phase[i], from, tick, from%every)
				}
				if from > tick || tick-from >= every {
					t.Fatalf("every %d: at tick %d Area %d counts from tick %d, not within the last cadence", every, tick, i, from)
				}
				last[i] = from
				if run {
					ran[i] = tick
					perPhase[phase[i]]++
				} else if tick-ran[i] >= every {
					t.Fatalf("every %d: Area %d ran no round at tick %d, %d ticks after its last", every, i, tick, tick-ran[i])
				}
			}
		}
		t.Logf("every %d: rounds per phase %v", every, perPhase)
	}
}

// TestAWokenAreaRoundsAtOnce: an Area ticked more than a cadence after
// its last round, off its phase (an intent woke it from a rest, or its
// host's clock skipped), runs its round in that tick and keeps its phase;
// within the cadence it runs none. A round that waited for the phase
// instead would cost a woken home a second tick for each step its player
// takes, and show the step a tick later.
func TestAWokenAreaRoundsAtOnce(t *testing.T) {
	for _, c := range []struct {
		tick, last uint64
		from       uint64
		run        bool
	}{
		{tick: 11, last: 10, from: 10, run: false}, // within the cadence
		{tick: 12, last: 10, from: 12, run: true},  // on the cadence
		{tick: 13, last: 10, from: 12, run: true},  // late, or woken off the phase: runs, keeps the phase
		{tick: 14, last: 10, from: 14, run: true},  // woken on the phase
		{tick: 37, last: 10, from: 36, run: true},  // woken after a long rest, off the phase
	} {
		from, run := roundAt(c.tick, c.last, 2)
		if from != c.from || run != c.run {
			t.Errorf("roundAt(tick %d, last %d, every 2) = from %d, run %v; want from %d, run %v", c.tick, c.last, from, run, c.from, c.run)
		}
	}
}
