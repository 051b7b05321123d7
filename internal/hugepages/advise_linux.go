package hugepages

import "golang.org/x/sys/unix"

// advise gives s the advice MADV_HUGEPAGE. It takes the span as numbers,
// not a slice: the mapping is the runtime's, not an object of this
// package's.
func advise(s Span) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, s.Start, s.End-s.Start, unix.MADV_HUGEPAGE); errno != 0 {
		return errno
	}
	return nil
}
