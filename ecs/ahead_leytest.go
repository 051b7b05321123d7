//go:build leytest

package ecs

// AskRestAhead asks the Area's Rest about tick as its Clock does at the
// end of a tick (Ahead reports true meanwhile), on the calling goroutine,
// which must be the Area's (control work), and returns its answer and how
// many values it counted on (Expect); it changes nothing else. It exists
// only in leytest builds: an owner's tests hold its Rest to what it
// decides ahead.
func (a *Area) AskRestAhead(tick uint64) (until uint64, expects int) {
	a.ahead, a.nExpects = true, 0
	until = a.Rest(a, tick)
	expects = a.nExpects
	a.ahead, a.nExpects = false, 0
	return until, expects
}
