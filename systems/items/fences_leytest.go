//go:build leytest

package items

import "sync/atomic"

// The fences of a trade (docs/items.md), each removable in leytest builds
// only, process-wide, so that TestTradeFences can show that the checks
// fail without it.
var holdOff, wholeOff, transitOff atomic.Bool

// SetTradeHold turns the hold on a trader's items on (the default) or off.
func SetTradeHold(on bool) { holdOff.Store(!on) }

// SetSwapWhole turns the all-or-nothing swap on (the default) or off.
func SetSwapWhole(on bool) { wholeOff.Store(!on) }

// SetTransitVoid turns the refusal of a swap with a crossing body on (the
// default) or off.
func SetTransitVoid(on bool) { transitOff.Store(!on) }

func tradeHold() bool { return !holdOff.Load() }

func swapWhole() bool { return !wholeOff.Load() }

func transitVoid() bool { return !transitOff.Load() }
