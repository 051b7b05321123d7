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
