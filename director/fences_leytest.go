//go:build leytest

package director

// noJoinRecheck removes a fence of one character, one Area, for the
// transfer model test's mutation check only (director/model_test.go),
// which sets it before it starts any director: a join grants on the
// character it read before it evicted the character's bodies elsewhere
// (a crossing may have moved it meanwhile). It is false in every other
// use, and exists only in leytest builds. The fences of the registry and
// of the transfers are theirs (registry.NoAdoptEvict, NoJoinEvict;
// transfer.NoSourceEpoch, NoAccountLock).
var noJoinRecheck bool

func joinRecheckOff() bool { return noJoinRecheck }

// noRejoinEvict and noDoorFence remove two fences of items, for the
// transfer model test's mutation check only: a join into the Area the
// character is in evicts its body there first, so that the grant binds
// from its final state (noRejoinEvict lets the grant carry the store's
// older one); a move by the door out of an Area no host runs for the
// director ends that incarnation (noDoorFence lets a host cut off with it
// store what the character did there after the move took it away).
var noRejoinEvict, noDoorFence bool

func rejoinEvictOff() bool { return noRejoinEvict }

func doorFenceOff() bool { return noDoorFence }
