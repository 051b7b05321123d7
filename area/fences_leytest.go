//go:build leytest

package area

import "sync/atomic"

// settlingOff turns settling off, process-wide: a timed-out crossing is
// forgotten at once instead of asking on. Only the director's model test
// sets it (SetSettling), as a mutation check: without settling the model
// must find a ghost. It exists only in leytest builds.
var settlingOff atomic.Bool

// SetSettling turns settling on (the default) or off for every Host of
// the process. Tests only: it exists so that the transfer model test can
// show that removing this fence makes it fail.
func SetSettling(on bool) { settlingOff.Store(!on) }

// settling reports whether a timed-out crossing goes on asking the
// director for its outcome (always, but in the model test's mutation
// check).
func settling() bool { return !settlingOff.Load() }

// departuresOff and holdOff remove two more fences, process-wide, for the
// transfer model test's mutation check (SetDepartures, SetHoldItems): a
// departed body's final state rides in the snapshots until one holding it
// is acked (hostArea.departed), and a body whose crossing is settling
// changes no items (ecs.Player.Settling). They exist only in leytest
// builds.
var departuresOff, holdOff atomic.Bool

// SetDepartures turns the departed bodies' fence on (the default) or off.
func SetDepartures(on bool) { departuresOff.Store(!on) }

// SetHoldItems turns the settling bodies' item hold on (the default) or
// off.
func SetHoldItems(on bool) { holdOff.Store(!on) }

func departures() bool { return !departuresOff.Load() }

func holdingItems() bool { return !holdOff.Load() }
