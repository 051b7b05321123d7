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
