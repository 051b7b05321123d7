//go:build !leytest

package area

// settling reports whether a timed-out crossing goes on asking the
// director for its outcome: always in this build (leytest builds let the
// transfer model test's mutation check turn it off).
func settling() bool { return true }

// departures reports whether a body that leaves other than through a
// portal keeps its final state in every snapshot until one holding it is
// acked (hostArea.departed); holdItems whether a body whose crossing is
// settling has its items held (ecs.Player.Settling). Always, in this
// build.
func departures() bool { return true }

func holdingItems() bool { return true }
