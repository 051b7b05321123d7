//go:build !linux

package control

import "syscall"

// dialControl does nothing where TCP_USER_TIMEOUT is not set: a vanished
// director is noticed when the kernel's retransmissions give up.
func dialControl(string, string, syscall.RawConn) error { return nil }
