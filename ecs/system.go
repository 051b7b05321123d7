package ecs

// System is one step of an Area's tick. An Area runs its systems in the
// fixed order they were added with Area.Use, with a barrier (deferred
// structural changes applied) after each, and measures each one.
//
// A system instance belongs to one Area: Init builds its filters and
// scratch once; Update only iterates. Update must not allocate in steady
// state and must not block.
type System interface {
	// Name names the system in stats and logs ("intake", "movement", ...).
	Name() string
	// Init prepares the system for Area a; an error stops Area.Use.
	Init(a *Area) error
	// Update runs the system for one tick.
	Update(a *Area)
}

// An Idler is a System that can tell when its next Update would do
// nothing: Idle reports that, given nothing is posted to the Area, no body
// has an intent queued or a walk planned (Area.MovesPending is 0) and no
// deferred work waits. An Area whose systems are all Idlers, all idle, may
// rest through a tick instead of running it (see Area.Rest). Idle runs on
// the ticking goroutine, between ticks, and ahead, at the end of a tick,
// for the next slot's (Area.Ahead); it must be cheap and must not change
// the Area. What it reads must change only on that goroutine (a tick,
// control work): a rest decided ahead is undone by something posted or
// control work taken in, not by a change made elsewhere.
type Idler interface {
	Idle(a *Area) bool
}
