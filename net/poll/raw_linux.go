//go:build linux

package poll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read and Writev are read(2) and writev(2) for non-blocking descriptors,
// made without telling the Go scheduler (RawSyscall, not Syscall). A call
// on a non-blocking descriptor never waits, so the scheduler has nothing to
// do about it; telling it anyway (entersyscall/exitsyscall) costs more than
// a small write on loopback, lets sysmon take the P away from a write that
// ran a little long (a futex and a thread handoff), and wakes sysmon from
// its idle sleep, after which it polls every 20 µs for a millisecond: with
// hundreds of sockets written a few times a second each, that was most of
// the host's nanosleep and futex calls. Never pass a blocking descriptor.

// Read reads into p from the non-blocking descriptor fd.
func Read(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// Writev writes iov to the non-blocking descriptor fd with one writev(2).
func Writev(fd int, iov []unix.Iovec) (int, error) {
	if len(iov) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// WriteBuffers writes bufs (empty ones skipped) to the non-blocking
// descriptor fd with one writev(2), through *scratch, an iovec array the
// caller keeps between calls: unlike unix.Writev it allocates nothing once
// *scratch has grown to the largest count of buffers.
func WriteBuffers(fd int, bufs [][]byte, scratch *[]unix.Iovec) (int, error) {
	v, _ := AppendIovecs((*scratch)[:0], bufs)
	*scratch = v
	n, err := Writev(fd, v)
	clear(v) // drop the references to the buffers
	return n, err
}

// AppendIovecs appends an iovec for each non-empty buffer of bufs to v
// and returns it with the bytes they hold.
func AppendIovecs(v []unix.Iovec, bufs [][]byte) ([]unix.Iovec, int) {
	total := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		var iv unix.Iovec
		iv.Base = &b[0]
		iv.SetLen(len(b))
		v = append(v, iv)
		total += len(b)
	}
	return v, total
}

// write writes p to the non-blocking descriptor fd (the loop's eventfd).
func write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// epollWait returns the events ready on epfd now (it never waits).
func epollWait(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// errnoErr returns the common errnos as the values callers compare with,
// without allocating.
func errnoErr(e unix.Errno) error {
	switch e {
	case unix.EAGAIN:
		return unix.EAGAIN
	case unix.EINTR:
		return unix.EINTR
	}
	return e
}
