//go:build unix && !linux

package poll

import "golang.org/x/sys/unix"

// WriteBuffers writes bufs (empty ones skipped) to fd with one writev(2).
// On this platform it goes through unix.Writev, which allocates its iovec
// array; scratch is not used.
func WriteBuffers(fd int, bufs [][]byte, scratch *[]unix.Iovec) (int, error) {
	return unix.Writev(fd, bufs)
}
