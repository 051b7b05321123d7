package ecs

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func newTestClock(t testing.TB, workers int) *Clock {
	t.Helper()
	c, err := NewClock(ClockConfig{TickRate: 20, FrozenPollRate: 4, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type countingSystem struct{ n atomic.Int64 }

func (s *countingSystem) Name() string     { return "count" }
func (s *countingSystem) Init(*Area) error { return nil }
func (s *countingSystem) Update(*Area)     { s.n.Add(1) }

func TestFrozenAreaRunsNoSystemAndWakesNextSlot(t *testing.T) {
	c := newTestClock(t, 2)
	a := newTestArea(t, 8, 8)
	sys := &countingSystem{}
	if err := a.Use(sys); err != nil {
		t.Fatal(err)
	}
	c.Add(a)
	now := time.Unix(1000, 0)
	for i := 0; i < 40; i++ { // two simulated seconds frozen
		c.Step(now)
		now = now.Add(c.Period())
	}
	if n := sys.n.Load(); n != 0 {
		t.Fatalf("frozen Area ran its system %d times; want 0", n)
	}
	if a.Tick != 0 {
		t.Fatalf("frozen Area's tick = %d; want 0 (no time passes)", a.Tick)
	}
	a.Wake()
	rep := c.Step(now)
	if n := sys.n.Load(); n != 1 || rep.Ticked != 1 {
		t.Fatalf("after Wake one slot ran the system %d times (report %+v); want 1", n, rep)
	}
	a.Freeze()
	c.Step(now.Add(c.Period()))
	if n := sys.n.Load(); n != 1 {
		t.Fatalf("after Freeze the system ran again (%d)", n)
	}
}

func TestFrozenPollDrainsControlAndTimers(t *testing.T) {
	c := newTestClock(t, 1)
	a := newTestArea(t, 8, 8)
	c.Add(a)
	var ran atomic.Int32
	a.PostControl(func(a *Area) { ran.Add(1) })
	var fired []time.Time
	now := time.Unix(1000, 0)
	a.OnTimer = func(a *Area, t time.Time) { fired = append(fired, t) }
	a.PostControl(func(a *Area) { a.SetTimer(now.Add(600 * time.Millisecond)) })
	polls := 0
	for i := 0; i < 5; i++ { // one poll period: every frozen Area is polled once
		polls += c.Step(now).Polled
		now = now.Add(c.Period())
	}
	if ran.Load() != 1 || polls != 1 {
		t.Fatalf("control ran %d times in %d polls; want 1 in 1", ran.Load(), polls)
	}
	for i := 0; i < 20; i++ {
		c.Step(now)
		now = now.Add(c.Period())
	}
	if len(fired) != 1 {
		t.Fatalf("timer fired %d times; want 1", len(fired))
	}
	// Due at +600 ms of simulated time; frozen polls come every 250 ms.
	due := time.Unix(1000, 0).Add(600 * time.Millisecond)
	if fired[0].Before(due) || fired[0].Sub(due) >= 250*time.Millisecond {
		t.Fatalf("timer fired at %v; want within one poll period after %v", fired[0], due)
	}
	if a.Tick != 0 {
		t.Fatalf("polls ticked the frozen Area (%d)", a.Tick)
	}
}

func TestFrozenAreaAnswersStrayIntents(t *testing.T) {
	c := newTestClock(t, 1)
	a := newTestArea(t, 8, 8)
	e, _ := a.SpawnPlayer(1, 0, 0)
	var got []Answer
	a.AfterTick = func(a *Area) { got = append(got, a.Outbox...) }
	c.Add(a)
	a.Post(e, Intent{Seq: 5, Kind: IntentStep, Dir: East})
	now := time.Unix(0, 0)
	for i := 0; i < 5; i++ {
		c.Step(now)
		now = now.Add(c.Period())
	}
	if len(got) != 1 || got[0].Seq != 5 || got[0].Outcome != OutcomeEntityGone {
		t.Fatalf("answers %+v; want seq 5 ENTITY_GONE", got)
	}
}

func TestClockTicksEveryActiveAreaOncePerSlot(t *testing.T) {
	c := newTestClock(t, 2)
	var areas []*Area
	for i := 0; i < 50; i++ {
		a := newTestArea(t, 4, 4)
		a.ID = AreaID(i)
		if i%2 == 0 {
			a.Wake()
		}
		c.Add(a)
		areas = append(areas, a)
	}
	now := time.Unix(0, 0)
	for i := 0; i < 10; i++ {
		rep := c.Step(now)
		if rep.Ticked != 25 {
			t.Fatalf("slot %d ticked %d; want 25", i, rep.Ticked)
		}
		now = now.Add(c.Period())
	}
	for i, a := range areas {
		want := uint64(0)
		if i%2 == 0 {
			want = 10
		}
		if a.Tick != want {
			t.Fatalf("area %d ticked %d times; want %d", i, a.Tick, want)
		}
	}
	c.Remove(areas[0])
	c.Step(now)
	if areas[0].Tick != 10 || c.Len() != 49 {
		t.Fatalf("removed Area ticked (%d) or still driven (len %d)", areas[0].Tick, c.Len())
	}
}

func TestClockRunRealTime(t *testing.T) {
	c := newTestClock(t, 2)
	a := newTestArea(t, 4, 4)
	sys := &countingSystem{}
	a.Use(sys)
	a.Wake()
	c.Add(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for sys.n.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run = %v; want context.Canceled", err)
	}
	if sys.n.Load() < 5 {
		t.Fatalf("Run ticked %d times in 10 s", sys.n.Load())
	}
	st := a.Stats()
	if st.Window == 0 || st.Mode != Active || len(st.Systems) != 1 || st.Systems[0].Name != "count" {
		t.Fatalf("stats %+v", st)
	}
	if st.P50 > st.P95 || st.P95 > st.P99 || st.P99 > st.Max {
		t.Fatalf("percentiles out of order: %+v", st)
	}
}

func TestClockConfigValidation(t *testing.T) {
	for _, cfg := range []ClockConfig{
		{TickRate: 20, FrozenPollRate: 3, Workers: 1},
		{TickRate: 20, FrozenPollRate: 40, Workers: 1},
		{TickRate: 20, FrozenPollRate: 4, Workers: -1},
	} {
		if c, err := NewClock(cfg); err == nil {
			c.Close()
			t.Errorf("NewClock(%+v) accepted", cfg)
		}
	}
}

// panicky panics in its Update from tick `at` on.
type panicky struct {
	at    uint64
	ticks atomic.Int64
}

func (s *panicky) Name() string     { return "panicky" }
func (s *panicky) Init(*Area) error { return nil }
func (s *panicky) Update(a *Area) {
	s.ticks.Add(1)
	if a.Tick >= s.at {
		panic("boom")
	}
}

// TestPanicFailsOnlyItsArea: an Area whose system panics is failed alone:
// its OnPanic hook gets the panic and a stack once, it is never run again,
// and the other Areas of the same slots keep ticking, also when a control
// function or a frozen Area's timer is what panics.
func TestPanicFailsOnlyItsArea(t *testing.T) {
	for _, workers := range []int{1, 2} {
		c := newTestClock(t, workers)
		var areas []*Area
		var counters []*countingSystem
		for i := 0; i < 4; i++ {
			a := newTestArea(t, 8, 8)
			a.ID = AreaID(i + 1)
			cs := &countingSystem{}
			if err := a.Use(cs); err != nil {
				t.Fatal(err)
			}
			areas = append(areas, a)
			counters = append(counters, cs)
		}
		bad := &panicky{at: 5}
		if err := areas[1].Use(bad); err != nil {
			t.Fatal(err)
		}
		var got []Panic
		var hooked []AreaID
		for _, a := range areas {
			a.OnPanic = func(a *Area, p Panic) {
				hooked = append(hooked, a.ID)
				got = append(got, p)
			}
			c.Add(a)
		}
		areas[2].PostControl(func(*Area) {}) // harmless work first
		for _, a := range areas[:3] {
			a.Wake()
		}
		// Area 4 stays frozen; its timer panics when it fires.
		areas[3].OnTimer = func(*Area, time.Time) { panic("timer boom") }
		now := time.Unix(1000, 0)
		areas[3].PostControl(func(a *Area) { a.SetTimer(now.Add(2 * time.Second)) })
		for i := 0; i < 100; i++ {
			if i == 30 {
				areas[2].PostControl(func(*Area) { panic("control boom") })
			}
			c.Step(now)
			now = now.Add(c.Period())
		}
		if want := []AreaID{2, 3, 4}; len(hooked) != 3 || !sameIDs(hooked, want) {
			t.Fatalf("workers=%d: OnPanic called for %v; want once each for %v", workers, hooked, want)
		}
		for _, p := range got {
			if len(p.Stack) == 0 || p.Value == nil {
				t.Fatalf("workers=%d: panic info %+v lacks a value or a stack", workers, p)
			}
		}
		if n := bad.ticks.Load(); n != 6 {
			t.Errorf("workers=%d: the panicking system ran %d times; want 6 (ticks 0..5, then never again)", workers, n)
		}
		if n := counters[0].n.Load(); n != 100 {
			t.Errorf("workers=%d: the healthy Area ticked %d times; want 100", workers, n)
		}
		for i, a := range areas {
			if want := i != 0; a.Failed() != want {
				t.Errorf("workers=%d: area %d Failed() = %v; want %v", workers, a.ID, a.Failed(), want)
			}
		}
		if c.Failures() != 3 || c.Len() != 1 {
			t.Errorf("workers=%d: clock failures %d, areas %d; want 3 and 1", workers, c.Failures(), c.Len())
		}
	}
}

func sameIDs(got, want []AreaID) bool {
	seen := map[AreaID]int{}
	for _, id := range got {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			return false
		}
	}
	return len(got) == len(want)
}

// TestPostNowRunsControlAtOnce: control work posted with PostNow runs at
// once, on the poster's goroutine, when the Area is not running (a frozen
// Area included: no wait for its next poll), with OnControl after it;
// intents posted before stay for the tick; while the Area runs, the work
// waits for its next run; a panic in it fails the Area alone, and the
// clock takes it out at its next slot.
func TestPostNowRunsControlAtOnce(t *testing.T) {
	c := newTestClock(t, 1)
	a := newTestArea(t, 8, 8)
	c.Add(a)
	c.Step(time.Unix(1000, 0)) // registered, frozen
	var order []string
	a.OnControl = func(*Area) { order = append(order, "on-control") }
	a.Post(Entity{}, Intent{Seq: 1})
	a.PostNow(func(*Area) { order = append(order, "now") })
	if len(order) != 2 || order[0] != "now" || order[1] != "on-control" {
		t.Fatalf("after PostNow on an idle Area: %v; want [now on-control]", order)
	}
	if !a.inbox.pending.Load() || len(a.inbox.intents) != 1 {
		t.Fatal("the intent posted before did not stay for the tick")
	}
	// While the Area runs, PostNow only posts.
	ran := false
	a.run.Lock()
	a.PostNow(func(*Area) { ran = true })
	a.run.Unlock()
	if ran {
		t.Fatal("PostNow ran work while the Area was running")
	}
	a.Wake()
	c.Step(time.Unix(1000, 0).Add(c.Period()))
	if !ran {
		t.Fatal("the work posted while running did not run at the next tick")
	}
	// A panic in work taken in at once fails the Area alone.
	var got []Panic
	a.OnPanic = func(_ *Area, p Panic) { got = append(got, p) }
	a.PostNow(func(*Area) { panic("control boom") })
	if !a.Failed() || len(got) != 1 || len(got[0].Stack) == 0 {
		t.Fatalf("after a panic in PostNow work: failed %v, panics %d; want failed, one with a stack", a.Failed(), len(got))
	}
	c.Step(time.Unix(1000, 0).Add(2 * c.Period()))
	if c.Len() != 0 {
		t.Fatalf("the clock still drives %d Areas; want the failed one out", c.Len())
	}
}

// tickSeen records the tick number each of its Updates saw.
type tickSeen struct{ ticks []uint64 }

func (s *tickSeen) Name() string     { return "ticks" }
func (s *tickSeen) Init(*Area) error { return nil }
func (s *tickSeen) Update(a *Area)   { s.ticks = append(s.ticks, a.Tick) }
func (s *tickSeen) equal(w []uint64) bool {
	if len(s.ticks) != len(w) {
		return false
	}
	for i := range w {
		if s.ticks[i] != w[i] {
			return false
		}
	}
	return true
}

// TestSkippedSlotsCountInTicks: slots a late clock skipped count in the
// tick numbers of the Areas that were ticking (their systems see the
// number of the slot they run in), so that budgets kept in ticks hold in
// time; an Area that was frozen through them starts on from its own tick.
func TestSkippedSlotsCountInTicks(t *testing.T) {
	c := newTestClock(t, 1)
	a, b := newTestArea(t, 8, 8), newTestArea(t, 8, 8)
	sa, sb := &tickSeen{}, &tickSeen{}
	if err := a.Use(sa); err != nil {
		t.Fatal(err)
	}
	if err := b.Use(sb); err != nil {
		t.Fatal(err)
	}
	c.Add(a)
	c.Add(b)
	a.Wake()
	now := time.Unix(1000, 0)
	p := c.Period()
	// Two slots on time, then one after two skipped (3 periods later),
	// then one on time, then one 1.4 periods later (on time, rounded).
	for _, d := range []time.Duration{0, p, 3 * p, p, p + 2*p/5} {
		now = now.Add(d)
		c.Step(now)
	}
	if want := []uint64{0, 1, 4, 5, 6}; !sa.equal(want) {
		t.Fatalf("the ticking Area's systems saw ticks %v; want %v", sa.ticks, want)
	}
	if a.Tick != 7 {
		t.Fatalf("after the slots its tick is %d; want 7", a.Tick)
	}
	// b was frozen through all of it: woken, it starts on from tick 0, and
	// a skip while it ticks counts for it too.
	b.Wake()
	for _, d := range []time.Duration{p, 4 * p} {
		now = now.Add(d)
		c.Step(now)
	}
	if want := []uint64{0, 4}; !sb.equal(want) {
		t.Fatalf("the woken Area's systems saw ticks %v; want %v", sb.ticks, want)
	}
}

// TestClockFollowsWakesAndFreezes: however Areas wake and freeze between
// slots (before their Clock knows them, twice over, back and forth), a
// slot ticks exactly the Areas active when it starts, each once, and
// polls only frozen ones; a frozen Area that fails in work taken in at
// once is out at the next slot.
func TestClockFollowsWakesAndFreezes(t *testing.T) {
	c := newTestClock(t, 2)
	rng := rand.New(rand.NewPCG(3, 4))
	var areas []*Area
	var counts []*countingSystem
	for i := range 40 {
		a := newTestArea(t, 8, 8)
		s := &countingSystem{}
		if err := a.Use(s); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			a.Wake() // before its clock knows it
		}
		c.Add(a)
		areas, counts = append(areas, a), append(counts, s)
	}
	now := time.Unix(1000, 0)
	before := make([]int64, len(areas))
	for slot := range 400 {
		for _, a := range areas {
			switch rng.IntN(12) {
			case 0:
				a.Wake()
			case 1:
				a.Freeze()
			case 2:
				a.Freeze()
				a.Wake()
			case 3:
				a.Wake()
				a.Freeze()
			case 4:
				a.Wake()
				a.Wake()
			}
		}
		active := 0
		for i, a := range areas {
			before[i] = counts[i].n.Load()
			if a.Mode() == Active {
				active++
			}
		}
		rep := c.Step(now)
		now = now.Add(c.Period())
		for i, a := range areas {
			want := int64(0)
			if a.Mode() == Active {
				want = 1
			}
			if got := counts[i].n.Load() - before[i]; got != want {
				t.Fatalf("slot %d: Area %d (%v) ticked %d times; want %d", slot, i, a.Mode(), got, want)
			}
		}
		if rep.Ticked != active {
			t.Fatalf("slot %d: report says %d ticked; %d were active", slot, rep.Ticked, active)
		}
	}
	// Half frozen, half active, for one poll period: each frozen Area is
	// looked at once at most (those frozen with nothing to do before it
	// not at all), and no active one; in the next period, none.
	for i, a := range areas {
		if i%2 == 0 {
			a.Freeze()
		} else {
			a.Wake()
		}
	}
	polled := 0
	for range 5 {
		polled += c.Step(now).Polled
		now = now.Add(c.Period())
	}
	if polled == 0 || polled > len(areas)/2 {
		t.Fatalf("%d polls in a poll period; want 1 to %d, at most one per frozen Area", polled, len(areas)/2)
	}
	polled = 0
	for range 5 {
		polled += c.Step(now).Polled
		now = now.Add(c.Period())
	}
	if polled != 0 {
		t.Fatalf("%d polls in the next poll period; want none: nothing was posted and no timer set", polled)
	}
	// Frozen Areas of every phase fail in work taken in at once: all are
	// out at the next slot.
	for _, a := range areas[:10:10] {
		a.Freeze()
	}
	c.Step(now)
	now = now.Add(c.Period())
	for _, a := range areas[:10] {
		a.PostNow(func(*Area) { panic("boom") })
		if !a.Failed() {
			t.Fatal("the Area did not fail")
		}
	}
	c.Step(now)
	if c.Len() != len(areas)-10 {
		t.Fatalf("the clock drives %d Areas; want %d, the failed frozen ones out", c.Len(), len(areas)-10)
	}
}

// A frozen Area with nothing posted and no timer set is not polled at all,
// and one given work is polled within a poll period however the work came:
// a control function, an intent, a timer set while frozen, work posted
// while active just before it froze, or posts racing the clock from
// other goroutines.
func TestFrozenAreasWithoutWorkAreLeftAlone(t *testing.T) {
	c := newTestClock(t, 2)
	const n = 30
	type watch struct {
		a        *Area
		e        Entity
		ran      int    // control functions run
		answered int    // stray intents answered
		fired    int    // timers fired
		want     [3]int // what ran, answered and fired should reach
		by       [3]int // the slot by which they should
	}
	ws := make([]*watch, n)
	for i := range ws {
		a := newTestArea(t, 8, 8)
		e, err := a.SpawnPlayer(uint64(i+1), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		w := &watch{a: a, e: e}
		a.AfterTick = func(a *Area) { w.answered += len(a.Outbox) }
		a.OnTimer = func(*Area, time.Time) { w.fired++ }
		c.Add(a)
		ws[i] = w
	}
	now := time.Unix(1000, 0)
	slot := 0
	step := func() SlotReport {
		rep := c.Step(now)
		now = now.Add(c.Period())
		slot++
		for i, w := range ws {
			got := [3]int{w.ran, w.answered, w.fired}
			for k := range got {
				if got[k] < w.want[k] && slot >= w.by[k] {
					t.Fatalf("slot %d: Area %d has %d of %d of its work kind %d done; it was due by slot %d", slot, i, got[k], w.want[k], k, w.by[k])
				}
			}
		}
		return rep
	}
	quiet := func() {
		t.Helper()
		for range 10 { // the work done, and each Area looked at once more
			step()
		}
		polled := 0
		for range 5 {
			polled += step().Polled
		}
		if polled != 0 {
			t.Fatalf("slot %d: %d frozen Areas polled in a poll period with nothing to do", slot, polled)
		}
	}
	quiet()
	rng := rand.New(rand.NewPCG(5, 6))
	const period = 5 // slots per poll period
	for range 300 {
		for _, w := range ws {
			switch rng.IntN(40) {
			case 0:
				w.a.PostControl(func(*Area) { w.ran++ })
				w.want[0], w.by[0] = w.want[0]+1, slot+period
			case 1:
				if !w.a.Post(w.e, Intent{Seq: 1, Kind: IntentStep, Dir: East}) {
					t.Fatal("the inbox refused an intent")
				}
				w.want[1], w.by[1] = w.want[1]+1, slot+period
			case 2:
				if w.want[2] == w.fired { // one timer at a time
					due := now.Add(300 * time.Millisecond)
					w.a.PostNow(func(a *Area) { a.SetTimer(due) })
					w.want[2], w.by[2] = w.want[2]+1, slot+(300+250)/50+1
				}
			case 3: // work posted while active, frozen before the next slot
				if w.answered < w.want[1] {
					break // a tick with no intake system would drop the intent
				}
				w.a.Wake()
				step()
				w.a.PostControl(func(*Area) { w.ran++ })
				w.want[0], w.by[0] = w.want[0]+1, slot+period
				w.a.Freeze()
			}
		}
		step()
	}
	quiet()
	// Posts from other goroutines while the clock runs: each is done in
	// the end, and then the Areas cost nothing again.
	var done, posted atomic.Int64
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ws[i%n].a.PostControl(func(*Area) { done.Add(1) })
			posted.Add(1)
			if i%7 == 0 {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	for i := 0; i < 200 || posted.Load() < 500; i++ { // the poster runs beside the clock a while
		step()
		runtime.Gosched()
	}
	close(stop)
	<-finished
	for range period {
		step()
	}
	if got := done.Load(); got != posted.Load() {
		t.Fatalf("%d of %d control functions posted from another goroutine ran within a poll period of the last", got, posted.Load())
	}
	quiet()
}

// idler is a test system that counts its updates and says it is idle when
// told to; restless is one that is no Idler.
type idler struct {
	countingSystem
	idle bool
}

func (s *idler) Idle(*Area) bool { return s.idle }

type restless struct{ countingSystem }

// stir is something done to an Area from outside that its next slot must
// tick for.
type stir struct {
	name string
	do   func()
}

// stirs are the ways work reaches Area a (whose body e may be sent an
// intent) from other goroutines.
func stirs(a *Area, e Entity) []stir {
	return []stir{
		{"an intent posted", func() { a.Post(e, Intent{Seq: 1, Kind: IntentStep, Dir: East}) }},
		{"control work posted", func() { a.PostControl(func(*Area) {}) }},
		{"control work taken in at once", func() { a.PostNow(func(*Area) {}) }},
	}
}

// An active Area under a Clock rests through a tick (no system, no
// AfterTick, the tick number going on) only when nothing can change in
// it: nothing posted, no control work taken in at once since its last
// tick, no move pending, no timer due, every system an idle Idler, and
// its owner's Rest agreeing; its tick numbers are those of an Area that
// never rests, skipped slots included.
func TestAreaRestsOnlyWhenNothingCanChange(t *testing.T) {
	c := newTestClock(t, 1)
	a, ref := newTestArea(t, 8, 8), newTestArea(t, 8, 8)
	e, err := a.SpawnPlayer(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sys, other := &idler{idle: true}, &idler{idle: true}
	if err := a.Use(sys, other); err != nil {
		t.Fatal(err)
	}
	owner := true
	var asked []uint64
	a.Rest = func(a *Area, tick uint64) uint64 {
		asked = append(asked, tick)
		if !owner {
			return tick - 1
		}
		return tick // this tick only: the Clock visits it every slot
	}
	after := 0
	var setMoves, setTimer, setDefer, setDying bool // what the next tick's AfterTick leaves behind
	a.AfterTick = func(a *Area) {
		after++
		a.MovesPending = 0 // no movement system here to count them
		if setMoves {
			a.MovesPending, setMoves = 1, false
		}
		if setTimer {
			a.SetTimer(a.Now.Add(c.Period() / 2))
			setTimer = false
		}
		if setDefer {
			a.Defer(func(*Area) {})
			setDefer = false
		}
		if setDying {
			a.Hurt(e, 1000) // buried at the next barrier
			setDying = false
		}
	}
	a.OnTimer = func(*Area, time.Time) {}
	for _, x := range []*Area{a, ref} {
		c.Add(x)
		x.Wake()
	}
	now := time.Unix(1000, 0)
	// slot runs one slot (gap periods after the last) and reports whether
	// a ran its tick.
	slot := func(gap int) bool {
		t.Helper()
		now = now.Add(time.Duration(gap) * c.Period())
		before, afterBefore := sys.n.Load(), after
		c.Step(now)
		if a.Tick != ref.Tick {
			t.Fatalf("tick %d; an Area that never rests is at %d", a.Tick, ref.Tick)
		}
		ran := sys.n.Load() != before
		if ran != (after != afterBefore) {
			t.Fatalf("systems ran %v, AfterTick ran %v: a tick runs both or neither", ran, after != afterBefore)
		}
		return ran
	}
	slot(1)
	rested := a.Stats().Rested
	asked = asked[:0]
	for i := range 5 {
		if slot(1 + i%3) { // skipped slots count too
			t.Fatalf("slot %d: the Area ticked with nothing that can change", i)
		}
	}
	if got := a.Stats().Rested - rested; got != 5 || len(asked) != 5 || asked[4] != a.Tick {
		t.Fatalf("%d ticks rested, owner asked %v (tick now %d); want 5, the last at the tick", got, asked, a.Tick)
	}
	cases := append(stirs(a, e),
		stir{"a system not idle", func() { other.idle = false }},
		stir{"the owner busy", func() { owner = false }},
	)
	for _, tc := range cases {
		tc.do()
		if !slot(1) {
			t.Fatalf("%s: the Area rested", tc.name)
		}
		a.MovesPending, other.idle, owner = 0, true, true
		slot(1) // settles what the tick left (a step taken, a timer fired)
		if slot(1) {
			t.Fatalf("after %s: the Area ticked again with nothing that can change", tc.name)
		}
	}
	// What a tick leaves behind, with nothing posted or taken in since: a
	// move pending, a timer due by the next slot, deferred work, a body
	// to bury (the last).
	for i, left := range []*bool{&setMoves, &setTimer, &setDefer, &setDying} {
		*left, other.idle = true, false
		slot(1) // ticks, and leaves it behind
		other.idle = true
		if !slot(1) {
			t.Fatalf("the Area rested with what a tick left behind (%d)", i)
		}
		slot(1)
		if slot(1) {
			t.Fatal("the Area ticked again with nothing that can change")
		}
	}
	// A system that is no Idler, before or after idle ones: never rests,
	// and the owner is not asked. No owner's Rest: never rests.
	var never []*Area
	for _, use := range [][]System{{&idler{idle: true}, &restless{}}, {&restless{}, &idler{idle: true}}, {&idler{idle: true}}} {
		b := newTestArea(t, 8, 8)
		if err := b.Use(use...); err != nil {
			t.Fatal(err)
		}
		if len(use) > 1 {
			b.Rest = func(*Area, uint64) uint64 {
				t.Fatal("the owner of an Area with a system that is no Idler was asked")
				return ^uint64(0)
			}
		}
		c.Add(b)
		b.Wake()
		never = append(never, b)
	}
	for range 3 {
		slot(1)
	}
	for i, b := range never {
		if b.Stats().Rested != 0 || b.Tick != 3 || b.Failed() {
			t.Fatalf("Area %d: rested %d ticks, at tick %d, failed %v; want none rested, 3 ticks", i, b.Stats().Rested, b.Tick, b.Failed())
		}
	}
}

// sleeperAreas returns an Area with a player e and one idle system sys,
// and ref, an Area with neither, whose tick numbers are those of an Area
// that never rests.
func sleeperAreas(t *testing.T) (a, ref *Area, e Entity, sys *idler) {
	t.Helper()
	a, ref = newTestArea(t, 8, 8), newTestArea(t, 8, 8)
	e, err := a.SpawnPlayer(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sys = &idler{idle: true}
	if err := a.Use(sys); err != nil {
		t.Fatal(err)
	}
	return a, ref, e, sys
}

// An Area whose owner rests it for several ticks sleeps in its Clock's
// wheel: the Clock does not visit it until its sleep ends, its timer is
// due, something is posted to it or control work is taken in at once; it
// wakes in the very next slot then, its tick numbers those of an Area that
// never slept (skipped slots included), its slept ticks counted as rested.
// It stays among the Clock's active Areas; frozen, its time stands still;
// removed, it is gone from the wheel.
func TestRestingAreasSleepUntilTheirWork(t *testing.T) {
	c := newTestClock(t, 2)
	a, ref, e, sys := sleeperAreas(t)
	const sleep = 9
	var asked int
	a.Rest = func(a *Area, tick uint64) uint64 { asked++; return tick + sleep }
	var fired int
	a.OnTimer = func(*Area, time.Time) { fired++ }
	var setTimer bool
	a.AfterTick = func(a *Area) {
		if setTimer {
			a.SetTimer(a.Now.Add(5 * c.Period()))
			setTimer = false
		}
	}
	for _, x := range []*Area{a, ref} {
		c.Add(x)
		x.Wake()
	}
	now := time.Unix(1000, 0)
	step := func(gap int) {
		now = now.Add(time.Duration(gap) * c.Period())
		c.Step(now)
	}
	ticked := func(gap int) bool {
		t.Helper()
		before := sys.n.Load()
		step(gap)
		return sys.n.Load() != before
	}
	// same holds a to the ticks of ref once it has run in this slot.
	same := func(what string) {
		t.Helper()
		if a.Tick != ref.Tick || a.Stats().Rested+uint64(sys.n.Load()) != a.Tick {
			t.Fatalf("%s: tick %d (%d rested, %d run); an Area that never rests is at %d", what, a.Tick, a.Stats().Rested, sys.n.Load(), ref.Tick)
		}
	}
	step(1)
	asked = 0
	for range 10 * (sleep + 1) {
		step(1)
	}
	if asked != 10 {
		t.Fatalf("over %d slots the Clock visited the Area %d times; want 10, once per sleep of %d slots", 10*(sleep+1), asked, sleep+1)
	}
	step(1)
	if in := c.Active(nil); !a.asleep.Load() || !slices.Contains(in, a) {
		t.Fatalf("asleep %v, among the Clock's active Areas %v; want both", a.asleep.Load(), slices.Contains(in, a))
	}
	for _, w := range stirs(a, e) {
		step(1)
		step(1) // asleep by now
		if !a.asleep.Load() {
			t.Fatalf("before %s: the Area is not asleep", w.name)
		}
		w.do()
		if !ticked(1) {
			t.Fatalf("%s: the Area did not tick in the next slot", w.name)
		}
		same(w.name)
	}
	// A timer set in a tick: the Area sleeps until it is due, not longer.
	// (The tick is asked for as an owner would: on the Area's goroutine.
	// A rest decided ahead, at the end of the last tick, is not undone by
	// state changed elsewhere.)
	a.PostNow(func(*Area) { setTimer = true })
	ticked(1)
	for i := 0; fired == 0; i++ {
		if i > 6 {
			t.Fatal("the timer did not fire within a slot of its time: the Area slept through it")
		}
		step(1)
	}
	// A late clock: the slots it skips end sleeps too.
	step(1)
	step(1)
	if !a.asleep.Load() {
		t.Fatal("the Area is not asleep")
	}
	step(3 * sleep) // slots skipped beyond the end of its sleep
	if a.asleep.Load() {
		t.Fatal("the Area sleeps on after skipped slots took it past the end of its sleep")
	}
	a.PostNow(func(*Area) {})
	ticked(1)
	same("after skipped slots")
	// Frozen while asleep: its time stands still; woken, it goes on.
	step(1)
	step(1)
	a.PostNow(func(a *Area) { a.Freeze() })
	frozenAt := a.Tick
	for range 3 * sleep {
		step(1)
	}
	if a.Tick != frozenAt || a.asleep.Load() {
		t.Fatalf("frozen: tick %d -> %d, asleep %v; want its time to stand still, out of the wheel", frozenAt, a.Tick, a.asleep.Load())
	}
	a.Wake()
	a.PostNow(func(*Area) {})
	if !ticked(1) || a.Tick != frozenAt+1 {
		t.Fatalf("woken: ticked at %d; want %d", a.Tick, frozenAt+1)
	}
	// Removed while asleep: gone from the wheel, never visited again.
	step(1)
	step(1)
	c.Remove(a)
	step(1)
	asked = 0
	for range 3 * sleep {
		step(1)
	}
	if asked != 0 || slices.Contains(c.Active(nil), a) || a.asleep.Load() {
		t.Fatalf("removed: visited %d times, among the active %v, asleep %v", asked, slices.Contains(c.Active(nil), a), a.asleep.Load())
	}
}

// At the end of each tick its Clock asks an Area's owner ahead whether it
// may rest through its next slot (Area.Ahead): decided then, the Clock
// puts it to sleep at that slot without visiting it, but only if every
// value the owner counted on (Area.Expect: a frame handed to a writer is
// written) reads what it wanted by then. When one does not, the Clock
// visits the Area and asks again, at the slot, and it ticks if the owner
// says so. Expect counts on nothing outside an ahead decision, nor on
// more than maxExpects values.
func TestARestDecidedAheadHoldsOnlyWhatItCountedOn(t *testing.T) {
	c := newTestClock(t, 2)
	a, ref, e, sys := sleeperAreas(t)
	const sleep, round = 9, 7
	var written atomic.Uint64 // as a connection's writer records a frame written
	var asked []bool          // Ahead, at each Rest
	var counted []bool        // Expect's answers, when many
	many := false
	a.Rest = func(a *Area, tick uint64) uint64 {
		asked = append(asked, a.Ahead())
		if many {
			for range maxExpects + 1 {
				counted = append(counted, a.Expect(&written, round))
			}
			return tick - 1
		}
		if written.Load() != round && !a.Expect(&written, round) {
			return tick - 1 // its frame may not reach the client: a round now
		}
		return tick + sleep
	}
	for _, x := range []*Area{a, ref} {
		c.Add(x)
		x.Wake()
	}
	now := time.Unix(1000, 0)
	ticked := func() bool {
		t.Helper()
		before := sys.n.Load()
		now = now.Add(c.Period())
		c.Step(now)
		return sys.n.Load() != before
	}
	post := func() { a.Post(e, Intent{Seq: 1, Kind: IntentStep, Dir: East}) }
	a.PostNow(func(a *Area) {
		if a.Ahead() || a.Expect(&written, round) {
			t.Error("Expect counted on a value outside a rest decided ahead")
		}
	})
	ticked()

	// The frame written by the next slot: the Area sleeps through it
	// unvisited, and wakes with the tick numbers of one that never rests.
	post()
	asked = asked[:0]
	if !ticked() || !slices.Equal(asked, []bool{true}) {
		t.Fatalf("with an intent posted: asked %v; want a tick, then one rest asked ahead", asked)
	}
	written.Store(round)
	asked = asked[:0]
	if ticked() || len(asked) != 0 || !a.asleep.Load() {
		t.Fatalf("the frame written: ticked or asked %v, asleep %v; want asleep, unvisited", asked, a.asleep.Load())
	}
	for range sleep + 1 {
		if ticked() {
			t.Fatal("the Area ticked with nothing that can change")
		}
	}
	if len(asked) != 1 || asked[0] || a.Tick != ref.Tick || a.Stats().Rested+uint64(sys.n.Load()) != a.Tick {
		t.Fatalf("after its sleep: asked %v, tick %d (%d rested, %d run); want asked once at its slot, at tick %d", asked, a.Tick, a.Stats().Rested, sys.n.Load(), ref.Tick)
	}

	// The frame not written by the next slot: the Clock visits the Area,
	// its owner is asked at the slot, and the round runs.
	written.Store(0)
	post()
	ticked()
	asked = asked[:0]
	if !ticked() || !slices.Equal(asked, []bool{false, true}) {
		t.Fatalf("the frame not written: asked %v; want asked at the slot, a tick, and asked ahead after it", asked)
	}
	if a.Tick != ref.Tick {
		t.Fatalf("tick %d; an Area that never rests is at %d", a.Tick, ref.Tick)
	}

	// At most maxExpects values.
	many = true
	post()
	ticked()
	if want := append(slices.Repeat([]bool{true}, maxExpects), false); !slices.Equal(counted, want) {
		t.Fatalf("Expect answered %v asked ahead %d times; want %v", counted, maxExpects+1, want)
	}
}

// Many Areas asleep in one bucket of the wheel, woken one by one in any
// order: each ticks in the next slot, the others sleep on.
func TestSleepersWokenInAnyOrder(t *testing.T) {
	c := newTestClock(t, 2)
	const n = 12
	var areas []*Area
	var counts []*idler
	for range n {
		a := newTestArea(t, 8, 8)
		s := &idler{idle: true}
		if err := a.Use(s); err != nil {
			t.Fatal(err)
		}
		a.Rest = func(a *Area, tick uint64) uint64 { return tick + 100 }
		c.Add(a)
		a.Wake()
		areas, counts = append(areas, a), append(counts, s)
	}
	now := time.Unix(1000, 0)
	step := func() {
		now = now.Add(c.Period())
		c.Step(now)
	}
	step()
	step() // all asleep now, in one bucket
	for i, a := range areas {
		if !a.asleep.Load() {
			t.Fatalf("Area %d is not asleep", i)
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, i := range rng.Perm(n) {
		before := make([]int64, n)
		for j := range counts {
			before[j] = counts[j].n.Load()
		}
		areas[i].PostControl(func(*Area) {})
		step()
		for j := range areas {
			ran := counts[j].n.Load() != before[j]
			if ran != (j == i) {
				t.Fatalf("woke Area %d: Area %d ticked %v", i, j, ran)
			}
		}
		step() // back to sleep
	}
	for b := range c.wheel {
		for _, a := range c.wheel[b] {
			if at := a.wheelAt; c.wheel[b][at] != a || !a.asleep.Load() {
				t.Fatalf("bucket %d holds an Area out of place", b)
			}
		}
	}
}

// TestBeforeSlotRunsFirst: what BeforeSlot posts (an Area host reads its
// sockets there) is taken in by the slot it runs at the start of: an Area
// woken by it ticks in that slot, not the next.
func TestBeforeSlotRunsFirst(t *testing.T) {
	a := newTestArea(t, 4, 4)
	slots := 0
	c, err := NewClock(ClockConfig{Workers: 1, BeforeSlot: func() {
		if slots++; slots == 3 {
			a.Wake()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.Add(a)
	now := time.Unix(0, 0)
	for i := 1; i <= 4; i++ {
		rep := c.Step(now)
		if want := max(i-2, 0); int(a.Tick) != want || rep.Ticked != min(want, 1) {
			t.Fatalf("slot %d: the Area's tick %d, %d ticked; want tick %d (woken by the third slot's BeforeSlot)", i, a.Tick, rep.Ticked, want)
		}
		now = now.Add(c.Period())
	}
}
