package ecs

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ClockConfig tunes a Clock.
type ClockConfig struct {
	// TickRate is the active Areas' tick rate in Hz (default 20). One slot
	// lasts 1/TickRate.
	TickRate int
	// FrozenPollRate is how often a frozen Area is polled, in Hz
	// (default 4). It must divide TickRate.
	FrozenPollRate int
	// Workers is the number of goroutines ticking Areas (default
	// GOMAXPROCS).
	Workers int
	// BeforeSlot, if set, runs at the start of each slot, on the
	// goroutine running it, before the Areas are looked at: an Area host
	// reads its clients' sockets there (net/gate's paced reads), so that
	// what they posted since the last slot is in the inboxes in time for
	// this slot's ticks. It must not call the Clock.
	BeforeSlot func()
}

// DefaultClockConfig returns the defaults: 20 Hz, frozen polls at 4 Hz,
// GOMAXPROCS workers.
func DefaultClockConfig() ClockConfig {
	return ClockConfig{TickRate: 20, FrozenPollRate: 4, Workers: runtime.GOMAXPROCS(0)}
}

// SlotReport describes one clock slot.
type SlotReport struct {
	Slot   uint64
	Ticked int // active Areas ticked
	// Polled counts the frozen Areas the slot looked at: those of its
	// poll phase with control work, intents or a timer, and those that
	// froze since their phase last came (looked at once, then left
	// alone until they have work again).
	Polled int
	// Busy is the slot's wall time from its start to its last Area done.
	Busy time.Duration
	// WorstLate is the largest delay between the slot's scheduled time and
	// the start of an Area's tick in it.
	WorstLate time.Duration
}

type dueArea struct {
	a    *Area
	tick bool // tick it (active) or poll it (frozen)
}

// Clock drives many Areas from one loop and a small worker pool: every slot
// (1/TickRate) it ticks each active Area once and polls each frozen Area
// with work whose turn it is (every TickRate/FrozenPollRate slots, spread
// evenly over the slots). A slot ends when every Area in it is done, so an
// Area is never run by two goroutines at once, and one Area's tick
// happens-before its next.
//
// A frozen Area costs the clock nothing while it has nothing posted and no
// timer set: the clock keeps the active Areas in one list and, per poll
// phase, the frozen Areas that have work or a timer; the rest are in no
// list. An Area tells its Clock when it wakes, when something is posted to
// it while frozen and nothing was pending, and when it sets a timer while
// frozen and none was set; a slot visits the active Areas and one phase's
// frozen Areas with work, never all of them.
//
// An active Area that rests (Area.Rest) with slots to sleep through leaves
// the active list for a wheel of wheelSlots buckets, one per slot, and is
// put back on it in the slot its sleep ends, or in the slot after it is
// told something was posted to it or control work was taken in (the
// slots it slept count in its ticks).
//
// Each Area is a fault boundary: a panic in its tick or poll (a system, a
// control function, its timer, its AfterTick) is recovered, the Area is
// marked failed (see Area.Failed) and never run again, and its OnPanic hook
// is called with the panic and its stack. The other Areas of the slot run
// on as if nothing happened. A panic in the hook itself is not recovered.
type Clock struct {
	cfg       ClockConfig
	period    time.Duration
	pollEvery uint64

	mu      sync.Mutex // guards phases, active, n, adds, removes, alerts and the Areas' phase, listed and polled
	phases  [][]*Area  // per poll phase (a slot's number modulo pollEvery): the frozen Areas with work polled in it (polled)
	active  []*Area    // the Areas that woke since they were last seen frozen (listed)
	n       int        // the Areas driven
	adds    []*Area
	removes []*Area
	alerts  []*Area // Areas that woke or failed since the last slot
	nextPh  uint64
	// wheel holds the active Areas asleep (Area.Rest), each in the bucket
	// of the slot it wakes in (modulo wheelSlots).
	wheel   [wheelSlots][]*Area
	drained uint64 // the slot whose bucket was last drained, plus one

	slot      uint64    // the running slot's number, the ones skipped counted
	skipped   uint64    // the slots skipped just before the running one
	slotAt    time.Time // the running slot's scheduled start, on the wall clock
	slotNow   time.Time // the running slot's time for timers (simulated under Step)
	lastNow   time.Time // the previous slot's slotNow (zero before the first)
	due       []dueArea
	next      atomic.Int64
	worstLate atomic.Int64
	start     []chan struct{}
	done      sync.WaitGroup
	quit      chan struct{}
	closeOnce sync.Once

	lateSlots atomic.Uint64
	failures  atomic.Uint64
}

// NewClock returns a Clock with its workers started; Close stops them.
func NewClock(cfg ClockConfig) (*Clock, error) {
	d := DefaultClockConfig()
	if cfg.TickRate == 0 {
		cfg.TickRate = d.TickRate
	}
	if cfg.FrozenPollRate == 0 {
		cfg.FrozenPollRate = d.FrozenPollRate
	}
	if cfg.Workers == 0 {
		cfg.Workers = d.Workers
	}
	if cfg.TickRate < 1 || cfg.FrozenPollRate < 1 || cfg.FrozenPollRate > cfg.TickRate || cfg.TickRate%cfg.FrozenPollRate != 0 {
		return nil, fmt.Errorf("ecs: clock: frozen poll rate %d Hz must divide tick rate %d Hz", cfg.FrozenPollRate, cfg.TickRate)
	}
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("ecs: clock: %d workers", cfg.Workers)
	}
	c := &Clock{
		cfg:       cfg,
		period:    time.Second / time.Duration(cfg.TickRate),
		pollEvery: uint64(cfg.TickRate / cfg.FrozenPollRate),
		quit:      make(chan struct{}),
	}
	c.phases = make([][]*Area, c.pollEvery)
	for range cfg.Workers {
		ch := make(chan struct{}, 1)
		c.start = append(c.start, ch)
		go c.worker(ch)
	}
	return c, nil
}

// wheelSlots is the number of buckets of a Clock's wheel of sleeping
// Areas: the most slots an Area sleeps at once is a little less.
const wheelSlots = 256

// Period is the length of one slot.
func (c *Clock) Period() time.Duration { return c.period }

// Add registers a to be driven from the next slot. Safe from any goroutine.
func (c *Clock) Add(a *Area) {
	c.mu.Lock()
	c.adds = append(c.adds, a)
	c.mu.Unlock()
}

// Remove stops driving a from the next slot; a slot already running may
// still be ticking it when Remove returns. Safe from any goroutine.
func (c *Clock) Remove(a *Area) {
	c.mu.Lock()
	c.removes = append(c.removes, a)
	c.mu.Unlock()
}

// Len is the number of Areas the clock drives (adds and removes take
// effect at the next slot).
func (c *Clock) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// alert has the next slot look at a, which woke, failed, or has work while
// frozen. Safe from any goroutine.
func (c *Clock) alert(a *Area) {
	c.mu.Lock()
	c.alerts = append(c.alerts, a)
	c.mu.Unlock()
}

// Active appends to dst the Areas the clock ticks and returns it: those
// that woke since it last saw them frozen (one may have frozen since; its
// Mode says), the ones asleep in its wheel (Area.Rest) included. Safe from
// any goroutine.
func (c *Clock) Active(dst []*Area) []*Area {
	c.mu.Lock()
	defer c.mu.Unlock()
	dst = append(dst, c.active...)
	for _, b := range c.wheel {
		dst = append(dst, b...) // asleep, resting: active all the same
	}
	return dst
}

// LateSlots counts slots Run started a whole period or more after their
// scheduled time (the previous slot overran).
func (c *Clock) LateSlots() uint64 { return c.lateSlots.Load() }

// Run drives the Areas in real time until ctx is done. A slot that
// overruns delays the next; slots that could not start in time are skipped
// rather than run in a burst, and counted by LateSlots. A skipped slot
// still counts in the tick numbers of the Areas ticking (see Area.Tick).
func (c *Clock) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	next := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		c.run(next, next)
		next = next.Add(c.period)
		if now := time.Now(); !now.Before(next) {
			missed := now.Sub(next)/c.period + 1
			c.lateSlots.Add(uint64(missed))
			next = next.Add(missed * c.period)
		}
		t.Reset(time.Until(next))
	}
}

// Step runs one slot now on the calling goroutine (and the workers),
// with now as the slot's time for timers (simulated time); lateness is
// measured from the moment Step is called. Whole periods of now beyond
// one since the previous slot's count as skipped slots. Tests and
// benchmarks use it; do not mix it with a running Run.
func (c *Clock) Step(now time.Time) SlotReport { return c.run(now, time.Now()) }

// run runs one slot: at is its time for timers, sched its scheduled start
// on the wall clock (lateness is measured from it).
func (c *Clock) run(at, sched time.Time) SlotReport {
	if c.cfg.BeforeSlot != nil {
		c.cfg.BeforeSlot()
	}
	c.skipped = 0
	if !c.lastNow.IsZero() {
		if gap := at.Sub(c.lastNow); gap >= c.period+c.period/2 {
			c.skipped = uint64((gap+c.period/2)/c.period) - 1
		}
		c.slot += c.skipped
	}
	c.slotAt, c.slotNow, c.lastNow = sched, at, at
	c.mu.Lock()
	c.applyChanges()
	c.wake()
	var failed []*Area
	// The active Areas tick; those found frozen leave the list, and those
	// that rested with slots to sleep through go to the wheel.
	keep := c.active[:0]
	for _, a := range c.active {
		switch {
		case a.failed.Load(): // failed in control work taken in at once
			failed = append(failed, a)
		case a.Mode() == Active:
			if a.doze > 0 && c.sleep(a) {
				continue
			}
			c.due = append(c.due, dueArea{a: a, tick: true})
			keep = append(keep, a)
		default:
			a.listed = false
			c.poll(a) // looked at in its phase, once at least
		}
	}
	clear(c.active[len(keep):])
	c.active = keep
	// The frozen Areas of this slot's phase are polled: no dispatch for
	// one with nothing due; one with nothing posted and no timer set
	// leaves the list until it tells the clock it has work.
	polled := 0
	ph := c.slot % c.pollEvery
	list := c.phases[ph]
	stay := list[:0]
	for _, a := range list {
		switch {
		case a.listed: // active: ticked above, and back here when it freezes
			a.polled = false
		case a.failed.Load():
			a.polled = false
			failed = append(failed, a)
		default:
			polled++
			// The mode was read (frozen) before these: something posted
			// or a timer set after is told to the clock (alertIfIdle).
			pending, timer := a.inbox.pending.Load(), a.timer.Load()
			if !pending && timer == 0 {
				a.polled = false
				continue
			}
			if pending || a.timerDue(at) {
				c.due = append(c.due, dueArea{a: a})
			}
			stay = append(stay, a)
		}
	}
	clear(list[len(stay):])
	c.phases[ph] = stay
	if len(failed) > 0 {
		c.removes = append(c.removes, failed...)
		c.applyChanges()
	}
	c.mu.Unlock()

	rep := SlotReport{Slot: c.slot, Polled: polled}
	for _, d := range c.due {
		if d.tick {
			rep.Ticked++
		}
	}
	c.worstLate.Store(0)
	c.next.Store(0)
	switch {
	case len(c.due) == 0:
	case len(c.due) == 1 || len(c.start) == 1:
		c.work()
	default:
		c.done.Add(len(c.start))
		for _, ch := range c.start {
			ch <- struct{}{}
		}
		c.done.Wait()
	}
	rep.Busy = time.Since(sched)
	rep.WorstLate = time.Duration(c.worstLate.Load())
	// The due list is scratch: cleared, not only truncated, so that an Area
	// removed since is not kept alive by its backing array (its world,
	// grid and searchers are megabytes).
	clear(c.due)
	c.due = c.due[:0]
	c.slot++
	return rep
}

// applyChanges folds pending adds, alerts and removes into the phase
// lists and the active list; c.mu is held.
func (c *Clock) applyChanges() {
	for _, a := range c.adds {
		a.phase = c.nextPh % c.pollEvery
		c.nextPh++
		c.n++
		// After the store, a Wake (or a post, or a timer) sees this clock
		// and alerts it; before it, what is read here sees it (all are
		// atomic).
		a.clock.Store(c)
		c.place(a)
	}
	clear(c.adds) // the Areas are in the phase lists now; the scratch keeps none
	c.adds = c.adds[:0]
	for _, a := range c.alerts {
		if a.clock.Load() == c {
			c.place(a)
		}
	}
	clear(c.alerts)
	c.alerts = c.alerts[:0]
	for _, r := range c.removes {
		if r.clock.Load() != c {
			continue // removed already, or never added
		}
		r.clock.Store(nil)
		c.n--
		c.unsleep(r)
		if r.polled {
			r.polled = false
			l := c.phases[r.phase]
			if i := slices.Index(l, r); i >= 0 {
				last := len(l) - 1
				l[i], l[last] = l[last], nil
				c.phases[r.phase] = l[:last]
			}
		}
		if r.listed {
			r.listed = false
			if i := slices.Index(c.active, r); i >= 0 {
				c.active = slices.Delete(c.active, i, i+1)
			}
		}
	}
	clear(c.removes) // nor the Areas it let go
	c.removes = c.removes[:0]
}

// place puts a where its state says: on the active list if it is active
// or failed (the next slot ticks it or takes it out), else in its phase's
// poll list, where it is looked at and left there only while it has work
// or a timer; c.mu is held.
func (c *Clock) place(a *Area) {
	c.unsleep(a)
	if a.Mode() == Active || a.failed.Load() {
		c.list(a)
	} else {
		a.dozed = false // a frozen Area's time stands still
		c.poll(a)
	}
}

// sleep puts active Area a, which rested with a.doze slots more to rest
// through, in the wheel until then, and reports whether it did; c.mu is
// held. An Area with something posted or control work taken in since it
// rested stays awake: it stores asleep first and reads those after, and a
// poster stores them first and reads asleep after (alertIfIdle), so one
// of the two sees the other. So does one whose rest was decided ahead
// (Area.restAhead) on a value not there yet (Area.Expect).
func (c *Clock) sleep(a *Area) bool {
	wake := a.lastSlot + a.doze + 1
	a.doze = 0
	expected := a.expected()
	a.nExpects = 0
	if wake <= c.slot || !expected {
		return false // the slots it could rest through went by (a late clock), or what it counted on is not so
	}
	a.asleep.Store(true)
	if a.inbox.pending.Load() || a.stirred.Load() {
		a.asleep.Store(false)
		return false
	}
	a.listed, a.dozed, a.wakeSlot = false, true, wake
	b := &c.wheel[wake%wheelSlots]
	a.wheelAt = len(*b)
	*b = append(*b, a)
	return true
}

// unsleep takes a out of the wheel, if it is asleep there; c.mu is held.
func (c *Clock) unsleep(a *Area) {
	if !a.asleep.Load() {
		return
	}
	a.asleep.Store(false)
	b := &c.wheel[a.wakeSlot%wheelSlots]
	i, last := a.wheelAt, len(*b)-1
	(*b)[i] = (*b)[last]
	(*b)[i].wheelAt = i
	(*b)[last] = nil
	*b = (*b)[:last]
}

// wake puts the Areas whose sleep ends by this slot (the slots skipped
// just before it included) back on the active list; c.mu is held.
func (c *Clock) wake() {
	from := c.drained
	if c.slot+1-from > wheelSlots {
		from = c.slot + 1 - wheelSlots // every bucket, once
	}
	for s := from; s <= c.slot; s++ {
		b := &c.wheel[s%wheelSlots]
		stay := (*b)[:0]
		for _, a := range *b {
			if a.wakeSlot > c.slot {
				a.wheelAt = len(stay)
				stay = append(stay, a) // a later lap (cannot be: sleeps are shorter than the wheel)
				continue
			}
			a.asleep.Store(false)
			c.list(a)
		}
		clear((*b)[len(stay):])
		*b = stay
	}
	c.drained = c.slot + 1
}

// poll puts a in its phase's poll list, once; c.mu is held.
func (c *Clock) poll(a *Area) {
	if !a.polled {
		a.polled = true
		c.phases[a.phase] = append(c.phases[a.phase], a)
	}
}

// list puts a on the active list, once; c.mu is held.
func (c *Clock) list(a *Area) {
	if !a.listed {
		a.listed = true
		c.active = append(c.active, a)
	}
}

func (c *Clock) worker(start chan struct{}) {
	for {
		select {
		case <-c.quit:
			return
		case <-start:
			c.work()
			c.done.Done()
		}
	}
}

// work takes Areas off the slot's due list until none is left.
func (c *Clock) work() {
	for {
		i := int(c.next.Add(1) - 1)
		if i >= len(c.due) {
			return
		}
		c.runArea(c.due[i])
	}
}

// runArea ticks or polls one Area inside its fault boundary.
func (c *Clock) runArea(d dueArea) {
	c.runAreaLocked(d)
	d.a.runControlNow() // what PostNow queued while it ran: no next run may come
}

// runAreaLocked is runArea's run, under the Area's run lock.
func (c *Clock) runAreaLocked(d dueArea) {
	a := d.a
	a.run.Lock() // control work taken in at once (PostNow) may hold it a moment
	defer a.run.Unlock()
	before := a.failed.Load()
	if !before {
		if d.tick {
			start := time.Now()
			late := start.Sub(c.slotAt)
			for {
				w := c.worstLate.Load()
				if int64(late) <= w || c.worstLate.CompareAndSwap(w, int64(late)) {
					break
				}
			}
			// The slots skipped count in its ticks if it ticked in the
			// slot before them, and the slots it slept through; an Area
			// that was frozen or new starts on.
			skipped := uint64(0)
			switch {
			case a.dozed:
				skipped, a.dozed = c.slot-a.lastSlot-1, false
				a.rested.Add(skipped)
			case a.slotted && a.lastSlot+1+c.skipped == c.slot:
				skipped = c.skipped
			}
			a.lastSlot, a.slotted = c.slot, true
			a.guard(func() {
				if !a.rests(c.slotNow, skipped, c.period) {
					a.step(c.slotNow, start, skipped, late, c.period)
					if a.Mode() == Active {
						a.restAhead(c.slotNow.Add(c.period), c.period)
					}
				}
			})
		} else {
			a.guard(func() { a.poll(c.slotNow) })
		}
	}
	if a.failed.Load() && !a.removed {
		// Failed here or in control work taken in at once: never run again.
		a.removed = true
		c.Remove(a)
		if !before {
			c.failures.Add(1)
		}
	}
}

// Failures counts the Areas that failed (panicked) in a tick or poll this
// clock ran (a failure in control work taken in at once by PostNow is the
// Area's hook's to count).
func (c *Clock) Failures() uint64 { return c.failures.Load() }

// Close stops the workers. The Clock must not be stepped or run after.
func (c *Clock) Close() {
	c.closeOnce.Do(func() { close(c.quit) })
}
