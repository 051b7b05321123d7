//go:build leytest

package transfer

// Switches that remove a fence of the crossing protocol, for the transfer
// model test's mutation check only (director/model_test.go), which sets
// them before it starts any director: NoSourceEpoch takes a portal_out
// from any host and incarnation of its source Area, not only the live
// incarnation the director placed (the source epoch check); NoAccountLock
// lets a crossing run without its account's lock, so that it may
// interleave with a join of the same player; NoFromSeq moves a crossing's
// character without first making sure the source's snapshot at the portal
// is stored (the director's half of the from-seq fence; the model's store
// removes the store's half). All are false in every other use, and exist
// only in leytest builds.
var NoSourceEpoch, NoAccountLock, NoFromSeq bool

func sourceEpochOff() bool { return NoSourceEpoch }

func accountLockOff() bool { return NoAccountLock }

func fromSeqOff() bool { return NoFromSeq }
