package machine

import (
	"time"

	"golang.org/x/sys/unix"
)

// Exited waits at most within for process pid of this machine to exit
// and reports whether it has (exited and not reaped counts: a zombie runs
// nothing). It waits on the process's pidfd, which the kernel makes
// readable as the process exits, so it returns as soon as that happens;
// where pidfds are refused (kernels before 5.3) it reads /proc once.
func Exited(pid int, within time.Duration) bool {
	if pid <= 0 {
		return true
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true // no such process: exited and reaped
	}
	if err != nil {
		return !Alive(pid)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(within)
	for {
		ms := max(int(time.Until(deadline).Milliseconds()), 0)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return !Alive(pid)
		}
		return n > 0
	}
}
