package movement

import (
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
)

// TestLateClockKeepsTheStepRate: a host that falls behind skips slots
// (its Clock runs every other one here), and a player allowed 5 steps a
// second, sending them as fast as allowed, still walks 5 steps a second
// of the clock's time: its budget is kept in tick numbers, and skipped
// slots count in them. (Counted in ticks run, it walked half as fast, and
// the steps it was allowed to send filled its queue: issue 27's input
// latency under load.)
func TestLateClockKeepsTheStepRate(t *testing.T) {
	c, err := ecs.NewClock(ecs.ClockConfig{TickRate: 20, FrozenPollRate: 4, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := newWorld(t, ecs.RulesFor(ecs.KindVillage), 64, 4)
	e := w.player(0, 0, 4) // a step every 4 ticks: 5 a second at 20 Hz
	c.Add(w.a)
	w.a.Wake()
	now := time.Unix(1000, 0)
	seq := uint32(0)
	const seconds = 4
	for range seconds * 10 { // every other slot of 20 Hz: 10 a second
		for range 2 { // more than the budget: the queue stays full (the rest are TOO_FAST)
			seq++
			w.a.Post(e, step(seq, ecs.East))
		}
		c.Step(now)
		now = now.Add(2 * c.Period()) // the next slot on time is skipped
	}
	x, _ := w.pos(e)
	if lo, hi := int32(5*seconds-2), int32(5*seconds+2); x < lo || x > hi {
		t.Fatalf("in %d s of the clock's time the player took %d steps; want about %d (5 a second)", seconds, x, 5*seconds)
	}
}
