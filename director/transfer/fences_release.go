//go:build !leytest

package transfer

// The fences of the crossing protocol that the transfer model test's
// mutation check removes (fences_leytest.go) are always on in this build:
// sourceEpochOff would take a portal_out from any host and incarnation of
// its source Area, accountLockOff would let a crossing run without its
// account's lock, fromSeqOff would move a crossing's character before the
// source's snapshot at the portal is stored.

func sourceEpochOff() bool { return false }

func accountLockOff() bool { return false }

func fromSeqOff() bool { return false }
