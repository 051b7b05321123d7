//go:build leytest

package registry

// Switches that remove a fence of one character, one Area, for the
// transfer model test's mutation check only (director/model_test.go),
// which sets them before it starts any director: NoAdoptEvict adopts a
// re-registering host's Areas with the bodies of characters the store has
// elsewhere; NoJoinEvict lets a join in without evicting the character's
// bodies elsewhere; NoCrossingEvict evicts them as a join would, so that
// a body crossing a portal stays (Busy) to be restored once its crossing
// is refused; NoAdoptLock adopts without the account locks of the bodies
// adopted (and keeps the bodies of accounts a join holds). All are false in every other use, and exist only in
// leytest builds.
var NoAdoptEvict, NoJoinEvict, NoCrossingEvict, NoAdoptLock bool

func adoptEvictOff() bool { return NoAdoptEvict }

func joinEvictOff() bool { return NoJoinEvict }

func crossingEvictOff() bool { return NoCrossingEvict }

func adoptLockOff() bool { return NoAdoptLock }
