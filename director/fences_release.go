//go:build !leytest

package director

// joinRecheckOff is false: the fence stands (see fences_leytest.go).
func joinRecheckOff() bool { return false }

// rejoinEvictOff and doorFenceOff are false: the fences stand (see
// fences_leytest.go).
func rejoinEvictOff() bool { return false }

func doorFenceOff() bool { return false }
