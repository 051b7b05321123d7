package control

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dialControl sets TCP_USER_TIMEOUT (UserTimeout) on a TCP socket the
// host dials; a unix socket is left alone.
func dialControl(network, _ string, rc syscall.RawConn) error {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(UserTimeout.Milliseconds()))
	}); err != nil {
		return err
	}
	return serr
}
