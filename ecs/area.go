package ecs

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	arche "github.com/mlange-42/arche/ecs"
)

// AreaID identifies an Area within a realm.
type AreaID uint32

// Sentinel errors of the Area's body bookkeeping.
var (
	// ErrOutOfBounds reports a square off the grid.
	ErrOutOfBounds = errors.New("ecs: square out of bounds")
	// ErrSquareTaken reports a square that is a wall or already occupied.
	ErrSquareTaken = errors.New("ecs: square is a wall or occupied")
	// ErrAreaFull reports an Area holding its rules' MaxPlayers already.
	ErrAreaFull = errors.New("ecs: area holds its maximum of players")
	// ErrLocked reports a structural change attempted while a query runs;
	// use Area.Defer to run it at the next barrier.
	ErrLocked = errors.New("ecs: world is locked by a running query")
)

// Mode is whether an Area simulates.
type Mode uint32

// The modes.
const (
	// Active Areas tick at the clock's tick rate.
	Active Mode = iota
	// Frozen Areas do not simulate: no systems, no broadcast. The clock polls
	// them a few times a second to drain their inbox and fire their timer.
	Frozen
)

// String returns "active" or "frozen".
func (m Mode) String() string {
	if m == Frozen {
		return "frozen"
	}
	return "active"
}

// Config describes a new Area.
type Config struct {
	ID    AreaID
	Rules Rules
	W, H  int
	// TickRate is the simulation rate in Hz (default 20); rules that speak
	// in seconds are converted with it.
	TickRate int
	// InboxLimit bounds the intents waiting for one tick (default 4096);
	// Post refuses past it.
	InboxLimit int
	// Capacity is the initial entity capacity of the world and of each of
	// its archetypes (default 4): an archetype reserves that many of every
	// component of its kind when its first entity comes, and doubles as it
	// fills. A home's one player in an archetype of 64 held some 48 KB of
	// components nobody used.
	Capacity int
}

// Move records one change of a body's square during a tick: From is NoCell
// for a spawn, To is NoCell for a despawn.
type Move struct {
	Entity   Entity
	From, To Cell
}

// BodyIndex is an index derived from where bodies stand: the spatial hash
// is one. An Area keeps every index given to AddIndex in step with its
// bodies at the moment each change happens: Insert on a spawn, Move on a
// move, and Remove for every entity it despawns (body or not). So an index
// never holds an entity the world has removed, whenever the removal happens
// (in a system, a control function, a timer or AfterTick), and readers of
// an index need no liveness check.
type BodyIndex interface {
	// Insert records that e now stands on square c.
	Insert(e Entity, c Cell)
	// Move records that e moved to square c.
	Move(e Entity, c Cell)
	// Remove forgets e; an entity the index does not hold is ignored.
	Remove(e Entity)
	// Changed records that e's state other than its square changed (its
	// facing, health or flags): see Area.Touch.
	Changed(e Entity)
}

// Area is one world: an arche World, its Grid, a tick counter, an inbox,
// the systems that run every tick and their stats.
//
// Concurrency: an Area is ticked (or polled, when frozen) by one goroutine
// at a time, the Clock's. Only Post, PostControl, Wake, Freeze, Mode and
// Stats may be called from other goroutines; everything else belongs to the
// goroutine ticking the Area (systems and control functions).
type Area struct {
	ID       AreaID
	Rules    Rules
	World    World
	Grid     *Grid
	TickRate int

	// Tick is the number of the running (or last) tick. Under a Clock it
	// counts the clock's slots while the Area ticks, the ones a late host
	// skipped included, so that budgets kept in ticks (a body's steps, an
	// attack's cooldown) hold in wall time: a host that falls behind runs
	// fewer ticks, not slower ones.
	Tick uint64
	// Now is the time of the running tick (or poll): its Clock slot's time,
	// read once for the whole slot. Systems and AfterTick use it rather
	// than reading the clock again.
	Now time.Time
	// Intents holds the intents drained from the inbox for this tick; the
	// intake system consumes them. Valid during a tick.
	Intents []IntentInput
	// Outbox collects the answers to intents given since the last tick
	// ended (in control functions, or by SetTransit between ticks) and
	// during this tick. AfterTick reads it; it is emptied after AfterTick.
	Outbox []Answer
	// Moves logs this tick's body moves, spawns and despawns in order, for
	// code that reacts to what moved (a step onto a portal). It is emptied
	// after AfterTick. Indexes of where bodies stand do not read it: they
	// are kept in step at once (see BodyIndex).
	Moves []Move
	// Events are this tick's events (Emit), for AfterTick; emptied after
	// it.
	Events []Event
	// MovesPending counts the bodies with queued intents or a planned walk:
	// the intake counts each intent it queues, the movement system recounts
	// after each pass and skips its pass while the count is zero, so an Area
	// where nobody walks costs no query.
	MovesPending int

	// AfterTick, when set, runs on the ticking goroutine at the end of each
	// tick: the host reads Outbox and sends frames from there.
	AfterTick func(a *Area)
	// OnTimer, when set, runs on the ticking goroutine once the time set by
	// SetTimer has come, in either mode.
	OnTimer func(a *Area, now time.Time)
	// OnPanic, when set, is called after a panic in the Area's tick, poll
	// or control work was recovered and the Area marked failed: the world
	// may be half-updated and must not be read for the truth. It runs on
	// the goroutine that ran the Area, which never runs it again.
	OnPanic func(a *Area, p Panic)
	// OnAction, when set, is the Area's action rule: it carries out an
	// action intent of body e on the square next to it in direction d (the
	// movement system calls it, with the body's movement budget spent if it
	// answers OutcomeApplied). A system installs it (systems/action), never
	// the host. Unset, actions are answered OutcomeInvalid.
	OnAction func(a *Area, e Entity, d Dir) Outcome
	// OnDeath, when set, is the Area's death rule: it runs when Hurt takes a
	// body's last hit point, on the ticking goroutine at the next point
	// structural changes are allowed, and says what follows (a player comes
	// back at a spawn point, a creature is gone). A system installs it
	// (systems/action). Unset, the body is despawned.
	OnDeath func(a *Area, e Entity)
	// OnItem, when set, is the Area's item rule: it carries out an item
	// intent (IntentPlace, IntentTake, IntentMoveItem) of body e (the
	// movement system calls it in the body's turn; a place or a take spends
	// the movement budget when it answers OutcomeApplied, a move between
	// slots does not). A system installs it (systems/items). Unset, item
	// intents are answered OutcomeInvalid.
	OnItem func(a *Area, e Entity, it *Intent) Outcome
	// OnControl, when set, runs after control work PostNow took in at
	// once, on the goroutine that ran it: the host delivers the answers
	// that work made (Outbox), which is emptied after.
	OnControl func(a *Area)
	// Rest, when set, lets the Area rest through ticks its Clock would
	// run while nothing can change in it: nothing posted, no control work
	// taken in at once since its last tick, no body with an intent queued
	// or a walk planned, no timer due, and every system an idle Idler.
	// Then Rest is asked, with the number the tick would have and Now its
	// slot's time: it returns the last tick through which its owner has
	// nothing to do either (a tick before tick: it has work at tick). The
	// Area rests through those ticks (fewer if its timer comes first), and
	// its Clock does not visit it in them unless something is posted to
	// it or control work is taken in at once. A rested tick runs no system
	// and no AfterTick; the tick numbers go on as if they had run (Tick).
	// Unset, the Area never rests. Area.Step never rests.
	//
	// A Clock asks Rest ahead as well (Ahead): at the end of each tick,
	// while what the tick touched is still in the processor's caches, for
	// the tick of the Area's next slot, with Now that slot's time. A rest
	// decided ahead holds only if, when the Clock comes to that slot (and
	// it is not late past the rest), nothing was posted and no control
	// work taken in since, and every value Rest counted on (Expect) reads
	// what it wants; else the Clock visits the Area in that slot and asks
	// again. What Rest reads must change only on the Area's goroutine,
	// with time (its answer is a tick) or through a value it counts on.
	Rest func(a *Area, tick uint64) (until uint64)

	mode    atomic.Uint32
	failed  atomic.Bool
	clock   atomic.Pointer[Clock] // the Clock driving it, told when it wakes or fails
	phase   uint64                // its poll phase in that Clock (the Clock's, under its mu)
	listed  bool                  // on that Clock's active list (likewise)
	polled  bool                  // in its phase's poll list (likewise): frozen with work or a timer
	run     sync.Mutex            // held while the Area runs: a tick, a poll, control work taken in at once
	removed bool                  // taken out of its Clock after failing (the Clock's, under run)
	// lastSlot is the Clock slot the Area last ticked in, and slotted
	// whether it has (both the Clock's, under run).
	lastSlot uint64
	slotted  bool
	steps    uint64 // ticks run, for sampling the systems' times
	inbox    inbox
	deferred []func(*Area)
	dying    []Entity // killed by Hurt, buried at the next barrier
	buryFn   func(*Area)
	timer    atomic.Int64 // when OnTimer is due (timerAt); 0: none. The clock reads it between runs

	byID      []Entity // entity ID -> entity, for bodies found on the grid
	indexes   []BodyIndex
	players   int
	wanderers int
	creatures int
	entities  int     // bodies spawned and not despawned
	census    *Census // counts them too, if the Area joined one

	systems  []System
	idlers   []Idler       // the systems, as Idlers; nil if one is not
	rested   atomic.Uint64 // ticks rested through (Rest)
	stirred  atomic.Bool   // control work was taken in at once since the last tick (PostNow)
	asleep   atomic.Bool   // resting in its Clock's wheel, not visited until wakeSlot or an alert
	doze     uint64        // slots more it may rest through after the one it rested in (run's; read by the Clock at the next slot)
	ahead    bool          // Rest is asked ahead (restAhead)
	nExpects int           // the values a rest decided ahead counts on (Expect), in expects
	expects  [maxExpects]expect
	dozed    bool            // it slept in the wheel: its next tick counts the slots since (the Clock's)
	wakeSlot uint64          // the slot it wakes in (the Clock's, under its mu)
	wheelAt  int             // its index in that slot's bucket (likewise)
	sysLast  []time.Duration // this tick's time per system, folded into stats at its end
	stats    tickStats

	posMap       Map[Position]
	bodyMap      Map[Body]
	playerMap    Map[Player]
	moverMap     Map[Mover]
	intentsMap   Map[Intents]
	pathMap      Map[Path]
	transitMap   Map[Transit]
	creatureMap  Map[Creature]
	healthMap    Map[Health]
	inventoryMap Map[Inventory]

	playerIDs   []arche.ID
	wandererIDs []arche.ID
	transitID   arche.ID

	// restore makes a parked Area whole again before it next runs (Park);
	// nil when it is not parked.
	restore func(a *Area)
}

// NewArea returns a frozen Area with an empty grid. Add systems with Use,
// register it with a Clock, and Wake it.
func NewArea(cfg Config) (*Area, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	a := &Area{ID: cfg.ID, Rules: cfg.Rules, TickRate: cfg.TickRate}
	if err := a.makeWorld(cfg); err != nil {
		return nil, err
	}
	a.inbox.limit = cfg.InboxLimit
	a.buryFn = a.bury
	a.mode.Store(uint32(Frozen))
	return a, nil
}

// fill puts the defaults into cfg's unset fields and checks the rest.
func (cfg *Config) fill() error {
	if cfg.TickRate == 0 {
		cfg.TickRate = 20
	}
	if cfg.InboxLimit == 0 {
		cfg.InboxLimit = 4096
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 4
	}
	if cfg.Rules.Kind == 0 {
		cfg.Rules = RulesFor(KindVillage)
	}
	if err := cfg.Rules.Validate(); err != nil {
		return err
	}
	if cfg.TickRate < 1 || cfg.TickRate > 1000 {
		return fmt.Errorf("ecs: tick rate %d Hz out of range 1..1000", cfg.TickRate)
	}
	return nil
}

// makeWorld gives the Area an empty world and grid of cfg's size and
// capacity, with the component maps the Area keeps: NewArea's, and a
// parked Area's when it is renewed.
func (a *Area) makeWorld(cfg Config) error {
	g, err := NewGrid(cfg.W, cfg.H)
	if err != nil {
		return err
	}
	a.World, a.Grid = arche.NewWorld(cfg.Capacity), g
	w := &a.World
	a.posMap = NewMap[Position](w)
	a.bodyMap = NewMap[Body](w)
	a.playerMap = NewMap[Player](w)
	a.moverMap = NewMap[Mover](w)
	a.intentsMap = NewMap[Intents](w)
	a.pathMap = NewMap[Path](w)
	a.transitMap = NewMap[Transit](w)
	a.creatureMap = NewMap[Creature](w)
	pos, body, mover := arche.ComponentID[Position](w), arche.ComponentID[Body](w), arche.ComponentID[Mover](w)
	a.healthMap = NewMap[Health](w)
	a.inventoryMap = NewMap[Inventory](w)
	a.playerIDs = []arche.ID{pos, body, mover, arche.ComponentID[Player](w), arche.ComponentID[Intents](w), arche.ComponentID[Path](w), arche.ComponentID[Health](w), arche.ComponentID[Inventory](w)}
	a.wandererIDs = []arche.ID{pos, body, mover, arche.ComponentID[Wander](w)}
	a.transitID = arche.ComponentID[Transit](w)
	return nil
}

// Use initialises systems in the order given and appends them to the
// Area's schedule; they run in that fixed order every tick.
func (a *Area) Use(systems ...System) error {
	for _, s := range systems {
		if err := s.Init(a); err != nil {
			return fmt.Errorf("init system %s: %w", s.Name(), err)
		}
		a.systems = append(a.systems, s)
		a.sysLast = append(a.sysLast, 0)
		if id, ok := s.(Idler); ok && (len(a.idlers) > 0 || len(a.systems) == 1) {
			a.idlers = append(a.idlers, id)
		} else {
			a.idlers = nil
		}
		a.stats.mu.Lock()
		a.stats.systems = append(a.stats.systems, systemStat{name: s.Name()})
		a.stats.mu.Unlock()
	}
	return nil
}

// AddIndex makes the Area keep ix in step with its bodies from now on (see
// BodyIndex), first inserting every body it holds. Call it from the ticking
// goroutine, outside a query.
func (a *Area) AddIndex(ix BodyIndex) {
	a.indexes = append(a.indexes, ix)
	a.EachBody(func(e Entity, p Position) bool {
		ix.Insert(e, a.Grid.Cell(p.X, p.Y))
		return true
	})
}

// Indexes returns the indexes the Area keeps in step, in the order they
// were added. The slice is the Area's: do not modify it.
func (a *Area) Indexes() []BodyIndex { return a.indexes }

// EachBody calls fn for every body with its position until fn returns
// false. It runs a query: fn must not spawn or despawn. It allocates;
// it is for setup and tests, not for a tick.
func (a *Area) EachBody(fn func(e Entity, p Position) bool) {
	q := NewFilter2[Position, Body]().Query(&a.World)
	for q.Next() {
		p, _ := q.Get()
		if !fn(q.Entity(), *p) {
			q.Close()
			return
		}
	}
}

// PositionOf returns e's position, if e is alive and has one.
func (a *Area) PositionOf(e Entity) (Position, bool) {
	if !a.World.Alive(e) {
		return Position{}, false
	}
	if p := a.posMap.Get(e); p != nil {
		return *p, true
	}
	return Position{}, false
}

// Panic is a recovered panic of an Area: the value passed to panic and the
// stack of the goroutine at the time.
type Panic struct {
	Value any
	Stack []byte
}

// Failed reports whether the Area panicked and was failed: its Clock takes
// it out and never runs it again (see Clock). Safe from any goroutine.
func (a *Area) Failed() bool { return a.failed.Load() }

// guard runs fn as the Area's fault boundary: a panic is recovered, the
// Area marked failed and frozen, and OnPanic called with the panic and its
// stack. A panic in OnPanic itself is not recovered.
func (a *Area) guard(fn func()) {
	defer func() {
		if p := recover(); p != nil {
			stack := debug.Stack()
			a.failed.Store(true)
			a.Freeze()
			a.alertClock() // out of its Clock at the next slot, even frozen
			if a.OnPanic != nil {
				a.OnPanic(a, Panic{Value: p, Stack: stack})
			}
		}
	}()
	fn()
}

// PostNow posts fn like PostControl and, if the Area is not running right
// now, runs the control work waiting in its inbox at once on the calling
// goroutine (inside the Area's fault boundary, then OnControl): grants,
// hellos and portal results are taken in as they arrive instead of at the
// next tick (or the next poll of a frozen Area). Intents still wait for
// the tick. If the Area is running, fn runs at its next tick or poll. It
// never blocks. Safe from any goroutine.
func (a *Area) PostNow(fn func(*Area)) {
	// No need to tell a frozen Area's Clock: the work runs now, or when
	// the run holding the Area lets go of it.
	a.inbox.postControl(fn)
	a.runControlNow()
}

// runControlNow runs the control work waiting in the inbox if the Area is
// not running now; a run in progress does it when it ends (its runner
// calls this after it lets go), so work PostNow queued while the Area ran
// is never left for a next run that may not come (an Area its Clock has
// let go of runs no more). Posting, then trying, on one side, and letting
// go, then trying, on the other, leave nothing behind.
func (a *Area) runControlNow() {
	for a.inbox.controlPending() && a.run.TryLock() {
		ran := a.controlLocked()
		a.run.Unlock()
		if !ran {
			return // a failed Area runs nothing more
		}
	}
}

// controlLocked runs the waiting control work, and reports whether it
// could; a.run held.
func (a *Area) controlLocked() (ran bool) {
	if a.failed.Load() {
		return false
	}
	a.guard(func() {
		a.unpark()
		if a.World.IsLocked() {
			return // a query is open: impossible outside a run, but never break it
		}
		ran = true
		a.stirred.Store(true) // whatever it changed, the next tick runs
		if a.asleep.Load() {  // and the Clock must come to it
			a.alertClock()
		}
		ctl := a.inbox.drainControl()
		for i, fn := range ctl {
			fn(a)
			ctl[i] = nil
		}
		a.inbox.recycle(ctl)
		a.barrier()
		if a.OnControl != nil {
			a.OnControl(a)
		}
		a.Outbox = a.Outbox[:0]
	})
	return ran
}

// Mode returns whether the Area is active or frozen. Safe from any goroutine.
func (a *Area) Mode() Mode { return Mode(a.mode.Load()) }

// Wake makes a frozen Area tick again from the clock's next slot. Safe from
// any goroutine; waking an active Area does nothing.
func (a *Area) Wake() {
	if Mode(a.mode.Swap(uint32(Active))) != Active {
		a.alertClock()
	}
}

// alertClock has the Clock driving a, if any, look at it in its next slot.
func (a *Area) alertClock() {
	if c := a.clock.Load(); c != nil {
		c.alert(a)
	}
}

// Freeze stops the Area's simulation from the clock's next slot; it is then
// only polled. Safe from any goroutine.
func (a *Area) Freeze() { a.mode.Store(uint32(Frozen)) }

// SetTimer asks for OnTimer to run once at or after t (the zero time clears
// it). Frozen Areas are polled a few times a second, so a timer may fire up
// to one poll period late. Call it from the ticking goroutine.
func (a *Area) SetTimer(t time.Time) {
	if t.IsZero() {
		a.timer.Store(0)
		return
	}
	at := timerAt(t)
	if at == 0 {
		at = 1 // 0 means none
	}
	if a.timer.Swap(at) == 0 {
		a.alertIfIdle()
	}
}

// alertIfIdle tells the Clock of a frozen Area, or of one asleep (Rest),
// that it has work or a timer again: the Clock visits neither unless it
// has (see Clock). The caller stored what it has first; the Clock,
// dropping an Area or putting it to sleep, reads the mode or stores asleep
// first and reads what it has after, so one of the two sees the other.
func (a *Area) alertIfIdle() {
	if a.Mode() == Frozen || a.asleep.Load() {
		a.alertClock()
	}
}

// timerEpoch is the origin of timerAt.
var timerEpoch = time.Now()

// timerAt is t as ns since timerEpoch, on the monotonic clock where t has
// a monotonic reading (time.Now and times derived from it by Add): a step
// of the wall clock (NTP, an operator, a VM resumed) must not hold back a
// frozen Area's timers (grant expiry, snapshot resends, a close) by as
// much as it stepped, nor fire them early. Times without one (a test's
// simulated slot times) compare by their wall readings, as before.
func timerAt(t time.Time) int64 { return int64(t.Sub(timerEpoch)) }

// timerDue reports whether a timer is set and due at now. Any goroutine.
func (a *Area) timerDue(now time.Time) bool {
	at := a.timer.Load()
	return a.OnTimer != nil && at != 0 && timerAt(now) >= at
}

// Post queues an intent for entity e for the next tick. It reports false,
// queueing nothing, when the inbox holds its limit for this tick already;
// the caller answers the client itself then. Safe from any goroutine.
func (a *Area) Post(e Entity, it Intent) bool {
	ok, first := a.inbox.post(e, it)
	if first {
		a.alertIfIdle()
	}
	return ok
}

// PostControl queues fn to run on the ticking goroutine before the next
// tick's systems (or at the next poll of a frozen Area). Control functions
// are for control-rate work (spawning a joining player, a grant, a
// snapshot request); they may allocate. Safe from any goroutine.
func (a *Area) PostControl(fn func(*Area)) {
	if a.inbox.postControl(fn) {
		a.alertIfIdle()
	}
}

// Defer runs fn at the next barrier: after the running system returns.
// Systems use it for structural changes (spawns, despawns) that arche
// forbids while a query iterates.
func (a *Area) Defer(fn func(*Area)) { a.deferred = append(a.deferred, fn) }

// Step runs one tick now, on the calling goroutine: drain the inbox, run
// every system in order with a barrier after each, then AfterTick. The
// Clock calls it; tests and benchmarks may call it directly on an Area no
// Clock drives. It runs whatever the Area's mode.
func (a *Area) Step() {
	a.run.Lock()
	now := time.Now()
	a.step(now, now, 0, 0, 0)
	a.run.Unlock()
	a.runControlNow() // what PostNow queued meanwhile
}

// systemSampleEvery is how often (in ticks) each system's time is taken:
// a clock read per system per tick is a noticeable share of a quiet
// Area's tick, and the mean over sampled ticks tells the same story.
const systemSampleEvery = 8

// step runs one tick begun at start, skipped ticks after the last one
// (slots its Clock could not run in time); now is the tick's time for the
// timer and for Now (the Clock passes its slot time, so simulated time
// drives timers too); late is how long after its slot it began, period
// the slot's length (0: not run by a Clock), for its statistics.
func (a *Area) step(now, start time.Time, skipped uint64, late, period time.Duration) {
	a.Now = now
	a.unpark()
	a.Tick += skipped
	a.stirred.Store(false)
	a.drainInbox()
	sample := a.steps%systemSampleEvery == 0
	a.steps++
	t := start
	for i, s := range a.systems {
		s.Update(a)
		a.barrier()
		if sample { // one clock read per system: each ends where the next begins
			end := time.Now()
			a.sysLast[i] = end.Sub(t)
			t = end
		}
	}
	a.Tick++
	a.fireTimer(now)
	if a.AfterTick != nil {
		a.AfterTick(a)
	}
	a.Outbox = a.Outbox[:0]
	a.Moves = a.Moves[:0]
	a.Events = a.Events[:0]
	a.stats.record(time.Since(start), late, period, a, sample)
}

// maxDoze bounds the slots an Area sleeps through at once (under the
// Clock's wheel size).
const maxDoze = wheelSlots - 2

// maxExpects bounds the values a rest decided ahead counts on (Expect):
// an Area whose Rest would need more rests only when asked at its slot.
const maxExpects = 4

// expect is a value a rest decided ahead counts on: *at reads want by the
// next slot.
type expect struct {
	at   *atomic.Uint64
	want uint64
}

// Ahead reports whether Rest is being asked ahead: at the end of a tick,
// for the tick of the Area's next slot (see Rest). Area goroutine.
func (a *Area) Ahead() bool { return a.ahead }

// Expect, called by Rest asked ahead, makes the rest it decides hold only
// if *at reads want when the Clock comes to the Area's next slot: say, a
// frame the tick handed to a connection's writer, which records it
// written there. It reports false, counting on nothing, when Rest is not
// asked ahead or the Area counts on maxExpects values already; Rest must
// then decide as if the value were not there yet. Area goroutine.
func (a *Area) Expect(at *atomic.Uint64, want uint64) bool {
	if !a.ahead || a.nExpects == maxExpects {
		return false
	}
	a.expects[a.nExpects] = expect{at: at, want: want}
	a.nExpects++
	return true
}

// expected reports whether every value a rest decided ahead counts on
// reads what it wants. Any goroutine (the Clock's, between runs).
func (a *Area) expected() bool {
	for _, e := range a.expects[:a.nExpects] {
		if e.at.Load() != e.want {
			return false
		}
	}
	return true
}

// rests reports whether the Area may rest through the tick that would be
// the next after skipped slots, at now, its Clock's slots period long
// (see Rest); when it does, the tick number goes on as if the tick had
// run, and doze tells the Clock how many slots more it may sleep through.
func (a *Area) rests(now time.Time, skipped uint64, period time.Duration) bool {
	tick := a.Tick + skipped + 1
	until, ok := a.restUntil(now, tick, period)
	if !ok {
		return false
	}
	a.Tick, a.doze = tick, until-tick
	a.rested.Add(1)
	return true
}

// restAhead decides, at the end of a tick, whether the Area rests through
// the tick of its next slot, due at next, and at least one more (Rest,
// Ahead): it sets doze so that the Clock, at that slot, puts it to sleep
// through them without visiting it (Clock.sleep); they count as rested
// when it wakes, and its tick number catches up then, as after any sleep.
// A rest the Clock finds no longer holds costs the visit it would have
// made anyway. A rest of the next slot's tick alone is left to that
// visit, which counts it in the tick number at once. Area goroutine.
func (a *Area) restAhead(next time.Time, period time.Duration) {
	now, tick := a.Now, a.Tick+1
	a.ahead = true
	until, ok := a.restUntil(next, tick, period)
	a.ahead, a.Now = false, now
	if !ok || until == tick {
		a.nExpects = 0
		return
	}
	a.doze = until - a.Tick // slots from this one's: the next's tick and those after it, through until
}

// restUntil is the rest decision (Rest) for tick at now: the last tick the
// Area may rest through, and whether it may rest at all.
func (a *Area) restUntil(now time.Time, tick uint64, period time.Duration) (until uint64, ok bool) {
	a.nExpects = 0
	if a.Rest == nil || a.idlers == nil || a.stirred.Load() || a.MovesPending > 0 || len(a.deferred) > 0 || // a body to bury is deferred work
		a.inbox.pending.Load() || a.timerDue(now) {
		return 0, false
	}
	for _, id := range a.idlers {
		if !id.Idle(a) {
			return 0, false
		}
	}
	a.Now = now
	until = a.Rest(a, tick)
	if until < tick {
		return 0, false
	}
	until = min(until, tick+maxDoze)
	if at := a.timer.Load(); at != 0 && period > 0 { // due after now (timerDue): wake in its slot
		slots := (at - timerAt(now) + int64(period) - 1) / int64(period)
		until = min(until, tick+uint64(max(slots, 1))-1)
	}
	return until, true
}

// poll is a frozen Area's slot: drain control work and fire a due timer.
func (a *Area) poll(now time.Time) {
	a.Now = now
	a.unpark()
	a.drainInbox()
	// A frozen Area runs no intake system: answer intents that arrived
	// anyway, so that none goes unanswered.
	for i := range a.Intents {
		a.Answer(a.Intents[i].Entity, &a.Intents[i].Intent, OutcomeEntityGone)
	}
	a.Intents = a.Intents[:0]
	a.fireTimer(now)
	if len(a.Outbox) > 0 {
		if a.AfterTick != nil {
			a.AfterTick(a)
		}
		a.Outbox = a.Outbox[:0]
	}
	a.Moves = a.Moves[:0]
	a.Events = a.Events[:0]
}

func (a *Area) fireTimer(now time.Time) {
	if !a.timerDue(now) {
		return
	}
	a.timer.Store(0)
	a.OnTimer(a, now)
}

// drainInbox takes in what was posted since the last drain: the intents
// into a.Intents, the control work run now. With nothing posted (most
// ticks of a quiet Area) it takes no lock.
func (a *Area) drainInbox() {
	if !a.inbox.pending.Load() {
		a.Intents = a.Intents[:0]
		a.barrier()
		return
	}
	var control []func(*Area)
	a.Intents, control = a.inbox.drain(a.Intents[:0])
	for i, fn := range control {
		fn(a)
		control[i] = nil
	}
	a.inbox.recycle(control)
	a.barrier()
}

func (a *Area) barrier() {
	for i := 0; i < len(a.deferred); i++ { // deferred functions may defer more
		fn := a.deferred[i]
		a.deferred[i] = nil
		fn(a)
	}
	a.deferred = a.deferred[:0]
}

// Answer records the outcome of intent it of entity e in the Outbox; for an
// applied intent of a player it also raises the player's AckSeq.
func (a *Area) Answer(e Entity, it *Intent, o Outcome) {
	a.Outbox = append(a.Outbox, Answer{Entity: e, Seq: it.Seq, Tag: it.Tag, Outcome: o})
	if o == OutcomeApplied && a.World.Alive(e) {
		if p := a.playerMap.Get(e); p != nil && SeqAfter(it.Seq, p.AckSeq) {
			p.AckSeq = it.Seq
		}
	}
}

// RefuseAll answers every intent waiting in the Area with o, never to be
// applied: those posted and not yet taken in, and those queued on every
// body. A closing Area calls it so that every intent up to its close gets
// its answer. Call it from the ticking goroutine, outside a query.
func (a *Area) RefuseAll(o Outcome) {
	a.inbox.mu.Lock()
	in := a.inbox.intents
	a.inbox.intents = a.inbox.intents[:0]
	for i := range in {
		a.Answer(in[i].Entity, &in[i].Intent, o)
	}
	a.inbox.mu.Unlock()
	for i := range a.Intents {
		a.Answer(a.Intents[i].Entity, &a.Intents[i].Intent, o)
	}
	a.Intents = a.Intents[:0]
	q := NewFilter1[Intents]().Query(&a.World)
	for q.Next() {
		in := q.Get()
		e := q.Entity()
		for in.Len() > 0 {
			it := in.Pop()
			a.Answer(e, &it, o)
		}
	}
}

// IsCreature reports whether e is a live creature.
func (a *Area) IsCreature(e Entity) bool { return a.World.Alive(e) && a.creatureMap.Has(e) }

// InTransit reports whether e is crossing a portal.
func (a *Area) InTransit(e Entity) bool { return a.transitMap.Has(e) }

// Players is the number of player bodies in the Area.
func (a *Area) Players() int { return a.players }

// Wanderers is the number of wandering bodies (SpawnWanderer) in the Area.
func (a *Area) Wanderers() int { return a.wanderers }

// Creatures is the number of creatures (SpawnCreature) in the Area.
func (a *Area) Creatures() int { return a.creatures }

// Alive reports whether e still exists in this Area.
func (a *Area) Alive(e Entity) bool { return a.World.Alive(e) }

// EntityAt returns the body standing on c, if any.
func (a *Area) EntityAt(c Cell) (Entity, bool) {
	id := a.Grid.At(LayerOccupant, c)
	if id == 0 {
		return Entity{}, false
	}
	return a.byID[id], true
}

// SpawnPlayer puts a player's body for account on (x, y). It fails if the
// square is off the grid, a wall or taken, if the Area holds its rules'
// maximum of players, or while a query runs (use Defer).
func (a *Area) SpawnPlayer(account uint64, x, y int32) (Entity, error) {
	if a.players >= a.Rules.MaxPlayers {
		return Entity{}, ErrAreaFull
	}
	e, err := a.spawnBody(a.playerIDs, x, y)
	if err != nil {
		return e, err
	}
	a.playerMap.Get(e).Account = account
	*a.moverMap.Get(e) = Mover{Period: a.Rules.StepPeriod(a.TickRate), Diagonal: a.Rules.Diagonal}
	hp := a.Rules.FullHP()
	*a.healthMap.Get(e) = Health{HP: hp, Max: hp}
	a.pathMap.Get(e).Clear()
	a.players++
	return e, nil
}

// SpawnWanderer puts a wandering body on (x, y), stepping at most every
// period ticks and trying a step about every `every` ticks.
func (a *Area) SpawnWanderer(x, y int32, seed uint32, period, every uint8) (Entity, error) {
	e, err := a.spawnBody(a.wandererIDs, x, y)
	if err != nil {
		return e, err
	}
	*a.moverMap.Get(e) = Mover{Period: max(period, 1), Diagonal: a.Rules.Diagonal}
	w := (*Wander)(a.World.Get(e, a.wandererIDs[3]))
	*w = Wander{Seed: seed, Every: max(every, 1)}
	a.wanderers++
	return e, nil
}

func (a *Area) spawnBody(ids []arche.ID, x, y int32) (Entity, error) {
	if a.World.IsLocked() {
		return Entity{}, ErrLocked
	}
	if !a.Grid.In(x, y) {
		return Entity{}, fmt.Errorf("%w: (%d,%d)", ErrOutOfBounds, x, y)
	}
	c := a.Grid.Cell(x, y)
	if !a.Grid.Free(c) {
		return Entity{}, fmt.Errorf("%w: (%d,%d)", ErrSquareTaken, x, y)
	}
	e := a.World.NewEntity(ids...)
	a.counted(1)
	*a.posMap.Get(e) = Position{X: x, Y: y}
	a.occupy(e, c)
	a.Moves = append(a.Moves, Move{Entity: e, From: NoCell, To: c})
	for _, ix := range a.indexes {
		ix.Insert(e, c)
	}
	return e, nil
}

func (a *Area) occupy(e Entity, c Cell) {
	id := e.ID()
	for int(id) >= len(a.byID) {
		a.byID = append(a.byID, Entity{})
	}
	a.byID[id] = e
	a.Grid.Set(LayerOccupant, c, int32(id))
}

// Despawn removes e and frees its square. While a query runs it is
// deferred to the next barrier. Despawning a dead entity does nothing.
func (a *Area) Despawn(e Entity) {
	if a.World.IsLocked() {
		a.Defer(func(a *Area) { a.Despawn(e) })
		return
	}
	if !a.World.Alive(e) {
		return
	}
	if p := a.posMap.Get(e); p != nil && a.bodyMap.Has(e) {
		c := a.Grid.Cell(p.X, p.Y)
		if a.Grid.At(LayerOccupant, c) == int32(e.ID()) {
			a.Grid.Set(LayerOccupant, c, 0)
		}
		a.Moves = append(a.Moves, Move{Entity: e, From: c, To: NoCell})
	}
	if a.playerMap.Has(e) {
		a.players--
	}
	if a.World.Has(e, a.wandererIDs[3]) {
		a.wanderers--
	}
	if a.creatureMap.Has(e) {
		a.creatures--
	}
	if a.bodyMap.Has(e) {
		a.counted(-1)
	}
	for _, ix := range a.indexes {
		ix.Remove(e)
	}
	if int(e.ID()) < len(a.byID) {
		a.byID[e.ID()] = Entity{}
	}
	a.World.RemoveEntity(e)
}

// HealthOf returns e's health; ok is false for a body that has none.
func (a *Area) HealthOf(e Entity) (h Health, ok bool) {
	if !a.World.Alive(e) {
		return Health{}, false
	}
	if p := a.healthMap.Get(e); p != nil {
		return *p, true
	}
	return Health{}, false
}

// SetHealth sets e's health (it must have a Health: players and creatures
// do) and tells the indexes.
func (a *Area) SetHealth(e Entity, h Health) {
	if p := a.healthMap.Get(e); p != nil {
		*p = h
		a.Touch(e)
	}
}

// Hurt takes dmg hit points from e and reports whether that killed it.
// A kill runs OnDeath (or despawns e) at the next barrier, once: a body
// already at 0 is not hurt again. A body with no Health is not hurt.
func (a *Area) Hurt(e Entity, dmg uint16) (killed bool) { return a.HurtBy(e, Entity{}, dmg) }

// HurtBy is Hurt by body by (the zero Entity when nothing did): it emits
// EventHurt, and EventDied for a kill.
func (a *Area) HurtBy(e, by Entity, dmg uint16) (killed bool) {
	if !a.World.Alive(e) {
		return false
	}
	h := a.healthMap.Get(e)
	if h == nil || h.HP == 0 || dmg == 0 {
		return false
	}
	taken := min(h.HP, dmg)
	h.HP -= taken
	a.Touch(e)
	a.Emit(Event{Kind: EventHurt, Entity: e, By: by, Amount: int32(taken)})
	if h.HP > 0 {
		return false
	}
	a.Emit(Event{Kind: EventDied, Entity: e, By: by})
	if len(a.dying) == 0 {
		a.Defer(a.buryFn) // a method value made once: no allocation per death
	}
	a.dying = append(a.dying, e)
	return true
}

// bury runs OnDeath (or Despawn) for the bodies Hurt killed since the last
// barrier.
func (a *Area) bury(*Area) {
	for i := 0; i < len(a.dying); i++ { // OnDeath may hurt more
		e := a.dying[i]
		if !a.World.Alive(e) {
			continue
		}
		if a.OnDeath != nil {
			a.OnDeath(a, e)
			continue
		}
		a.Despawn(e)
	}
	a.dying = a.dying[:0]
}

// Touch tells the Area's indexes that e's state other than its square
// changed (its facing, health or flags), so that what clients are shown
// follows. Systems that change such state call it; moves need not.
func (a *Area) Touch(e Entity) {
	for _, ix := range a.indexes {
		ix.Changed(e)
	}
}

// Face turns body e towards d (a step it tried and could not take still
// turns it), telling the indexes if its facing changed.
func (a *Area) Face(e Entity, d Dir) {
	if b := a.bodyMap.Get(e); b != nil && b.Facing != d {
		b.Facing = d
		a.Touch(e)
	}
}

// MoveBody moves body e, whose Position is pos, onto (x, y). The caller has
// checked that the square is on the grid and Free. It keeps the occupant
// layer, pos and Moves in step, and turns the body towards the move (by
// the sign of each axis); it is not a structural change, so systems call it
// while iterating.
func (a *Area) MoveBody(e Entity, pos *Position, x, y int32) {
	if b := a.bodyMap.Get(e); b != nil {
		b.Facing = DirOf(x-pos.X, y-pos.Y, b.Facing)
	}
	from := a.Grid.Cell(pos.X, pos.Y)
	to := a.Grid.Cell(x, y)
	a.Grid.Set(LayerOccupant, from, 0)
	a.Grid.Set(LayerOccupant, to, int32(e.ID()))
	pos.X, pos.Y = x, y
	a.Moves = append(a.Moves, Move{Entity: e, From: from, To: to})
	for _, ix := range a.indexes {
		ix.Move(e, to)
	}
}

// SetTransit marks or clears e as crossing a portal (see Transit). Marking
// answers every queued intent OutcomePortalInProgress and drops its path.
func (a *Area) SetTransit(e Entity, transfer uint64, on bool) error {
	if a.World.IsLocked() {
		return ErrLocked
	}
	if !a.World.Alive(e) {
		return fmt.Errorf("ecs: set transit: entity %d is gone", e.ID())
	}
	has := a.transitMap.Has(e)
	switch {
	case on && !has:
		a.World.Add(e, a.transitID)
		a.transitMap.Get(e).Transfer = transfer
		// Everything queued for the body is refused: it is leaving.
		if q := a.intentsMap.Get(e); q != nil {
			for q.Len() > 0 {
				it := q.Pop()
				a.Answer(e, &it, OutcomePortalInProgress)
			}
		}
		if p := a.pathMap.Get(e); p != nil {
			p.Clear()
		}
	case on:
		a.transitMap.Get(e).Transfer = transfer
	case has:
		a.World.Remove(e, a.transitID)
	}
	if on != has {
		a.Touch(e)
	}
	return nil
}

// CheckGrid verifies that the grid and the ECS agree: every body's square
// holds its ID, and every occupied square holds a live body standing there.
// It walks the whole grid; tests call it.
func (a *Area) CheckGrid() error {
	bodies := 0
	q := NewFilter2[Position, Body]().Query(&a.World)
	for q.Next() {
		p, _ := q.Get()
		e := q.Entity()
		bodies++
		if !a.Grid.In(p.X, p.Y) {
			q.Close()
			return fmt.Errorf("body %d at (%d,%d) is off the grid", e.ID(), p.X, p.Y)
		}
		if got := a.Grid.At(LayerOccupant, a.Grid.Cell(p.X, p.Y)); got != int32(e.ID()) {
			q.Close()
			return fmt.Errorf("body %d at (%d,%d): occupant layer holds %d", e.ID(), p.X, p.Y, got)
		}
	}
	occupied := 0
	for c, id := range a.Grid.Layer(LayerOccupant) {
		if id == 0 {
			continue
		}
		occupied++
		if int(id) >= len(a.byID) || !a.World.Alive(a.byID[id]) {
			return fmt.Errorf("square %d holds %d, which is no live body", c, id)
		}
	}
	if occupied != bodies {
		return fmt.Errorf("%d occupied squares for %d bodies", occupied, bodies)
	}
	return nil
}
