//go:build !leytest

package director

// joinRecheckOff is false: the fence stands (see fences_leytest.go).
func joinRecheckOff() bool { return false }
