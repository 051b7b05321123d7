//go:build linux

package control

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leyworks/ley/net/poll"
)

// quietConn is a TCP or unix socket whose reads and writes are made
// without telling the Go scheduler (net/poll's raw system calls), once the
// runtime's poller has said the socket is ready: the socket is
// non-blocking, so no call waits. A link's read or write through the
// net package tells the scheduler (entersyscall), and when the process
// was idle that wakes sysmon from its sleep with its poll interval reset
// to 20 µs: a host whose link carries a few dozen messages a second (acks,
// presence, snapshots) kept sysmon waking a few hundred times a second,
// a tenth of a host's CPU in the homes workload. Deadlines, Close and the
// addresses are the socket's own.
type quietConn struct {
	net.Conn
	rc syscall.RawConn
}

// quiet returns nc as a quietConn when it is a TCP or unix socket, and nc
// itself otherwise.
func quiet(nc net.Conn) net.Conn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc
	}
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nc
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	return &quietConn{Conn: nc, rc: rc}
}

// Read reads into p what the socket holds, waiting (in the runtime's
// poller, under the read deadline) until it holds something.
func (c *quietConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = poll.Read(int(fd), p)
			switch rerr {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // wait until readable
			}
			if raceEnabled && rerr == nil {
				_, _ = syscall.Read(int(fd), nil) // see raceEnabled
			}
			return true
		}
	})
	switch {
	case err != nil: // the deadline, or the socket closed
		return 0, err
	case rerr != nil:
		return 0, c.opError("read", rerr)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting (in the runtime's poller, under the write
// deadline) while the socket's buffer is full.
func (c *quietConn) Write(p []byte) (int, error) {
	n := 0
	var werr error
	err := c.rc.Write(func(fd uintptr) bool {
		if raceEnabled {
			_, _ = syscall.Write(int(fd), nil) // see raceEnabled
		}
		for n < len(p) {
			iov := [1]unix.Iovec{{Base: &p[n]}}
			iov[0].SetLen(len(p) - n)
			w, e := poll.Writev(int(fd), iov[:])
			switch e {
			case nil:
				n += w
			case unix.EINTR:
			case unix.EAGAIN:
				return false // wait until writable
			default:
				werr = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case werr != nil:
		return n, c.opError("write", werr)
	}
	return n, nil
}

// opError wraps a system call's error as the net package would.
func (c *quietConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}
