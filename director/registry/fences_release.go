//go:build !leytest

package registry

// The fences of one character, one Area that the transfer model test's
// mutation check removes (fences_leytest.go) are always on in this build:
// adoptEvictOff would adopt a re-registering host's Areas with the bodies
// of characters the store has elsewhere, joinEvictOff would let a join in
// without evicting the character's bodies elsewhere, crossingEvictOff
// would leave a crossing body of such a character to be restored in the
// adopted Area once its crossing is refused, adoptLockOff would adopt
// without holding the account locks of the bodies adopted.

func adoptEvictOff() bool { return false }

func joinEvictOff() bool { return false }

func crossingEvictOff() bool { return false }

func adoptLockOff() bool { return false }
