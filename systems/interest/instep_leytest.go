//go:build leytest

package interest

// walkAlways makes every Build walk its client's cells, process-wide, as
// if no client were ever in step (System.inStep), and a quiet round write
// each cell's seen rather than the view's upTo (View.current): the test
// of the in-step path builds each frame both ways and compares them byte
// for byte. It exists only in leytest builds.
var walkAlways bool

// stepping reports whether a client in step may skip the walk of its
// cells (always, but while walkAlways is set).
func stepping() bool { return !walkAlways }
