// Command floorserver is the physical floor of issue 16 (see
// bench.BenchmarkFloor, which builds and runs it): the least a server on
// this machine can do to move a workload's bytes. One goroutine, raw epoll
// over non-blocking sockets, no WebSocket handshake, no parsing: every
// 100 ms it writes each connection one frame of -frame bytes (one write
// each; with -every n, each connection in one round of n), and it reads
// what clients send (one read per arriving batch).
// Every system call bypasses the Go scheduler (RawSyscall), as a C
// server's would; the goroutine blocks in epoll_wait holding its thread, so
// run it with GODEBUG=asyncpreemptoff=1 (BenchmarkFloor does), or the
// runtime's preemption signals interrupt the wait.
//
// With -uring it submits each round's writes to the kernel together, one
// io_uring submission per 256 connections (net/uring, as ley's gate does),
// instead of one write(2) each: the floor of a batched server.
//
// With -ws it first answers each connection's WebSocket handshake (gobwas/ws,
// in a goroutine of its own), then hands the socket to the same loop: the
// floor of a server that browsers and the Node.js driver of bench/peer can
// reach. The handshakes happen before a run measures anything.
//
// It prints "FLOOR <addr>" once it listens.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/gobwas/ws"
	"github.com/leyworks/ley/net/uring"
	"golang.org/x/sys/unix"
)

func main() {
	size := flag.Int("frame", 33, "bytes of the frame written to every connection every 100 ms (2..127)")
	every := flag.Int("every", 1, "write each connection in one round of this many (its rounds spread evenly): 2 is 5 frames a second")
	batched := flag.Bool("uring", false, "write each round's frames with io_uring submissions of up to 256 writes, not one write(2) each")
	handshake := flag.Bool("ws", false, "answer each connection's WebSocket handshake before serving it")
	flag.Parse()
	if *every < 1 {
		fmt.Fprintln(os.Stderr, "floorserver: -every must be at least 1")
		os.Exit(2)
	}
	if *size < 2 || *size > 127 {
		fmt.Fprintln(os.Stderr, "floorserver: -frame must be 2..127")
		os.Exit(2)
	}
	var ring *uring.Ring
	if *batched {
		r, err := uring.New(256)
		if err != nil {
			fmt.Fprintln(os.Stderr, "floorserver:", err)
			os.Exit(1)
		}
		ring = r
	}
	var lfd int
	var upgraded chan int
	var err error
	if *handshake {
		// The handshakes' goroutines need a P of their own: the loop holds
		// its one while it waits in epoll_wait.
		runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2))
		lfd, upgraded, err = listenWS()
	} else {
		lfd, err = listen()
	}
	if err == nil {
		err = serve(lfd, upgraded, *size, *every, ring) // serves until killed
	}
	fmt.Fprintln(os.Stderr, "floorserver:", err)
	os.Exit(1)
}

// listen opens a non-blocking listening socket on a loopback port and
// prints its address.
func listen() (int, error) {
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return -1, err
	}
	if err := unix.Listen(lfd, 4096); err != nil {
		return -1, err
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		return -1, err
	}
	fmt.Printf("FLOOR 127.0.0.1:%d\n", sa.(*unix.SockaddrInet4).Port)
	return lfd, nil
}

// listenWS listens on a loopback port, prints its address and answers
// each connection's WebSocket handshake in a goroutine of its own. It
// sends each upgraded connection's socket, non-blocking and no longer
// the Go runtime's, on the channel it returns; the listening socket it
// returns is -1 (the loop accepts nothing itself).
func listenWS() (int, chan int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return -1, nil, err
	}
	fmt.Printf("FLOOR %s\n", ln.Addr())
	upgraded := make(chan int, 1024)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				fmt.Fprintln(os.Stderr, "floorserver: accept:", err)
				os.Exit(1)
			}
			go func() {
				if fd, err := upgrade(c.(*net.TCPConn)); err == nil {
					upgraded <- fd
				} else {
					fmt.Fprintln(os.Stderr, "floorserver: handshake:", err)
				}
			}()
		}
	}()
	return -1, upgraded, nil
}

// upgrade answers c's WebSocket handshake (no extension is agreed, so
// frames go as the loop writes them) and returns a non-blocking duplicate
// of its socket; c itself is closed.
func upgrade(c *net.TCPConn) (int, error) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := ws.Upgrade(c); err != nil {
		return -1, err
	}
	_ = c.SetDeadline(time.Time{})
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.Dup(int(s)) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	unix.CloseOnExec(fd)
	return fd, unix.SetNonblock(fd, true)
}

// serve serves until an error stops it: the connections lfd accepts (when
// it is not -1) and those upgraded sends. ring, when not nil, carries each
// round's writes.
func serve(lfd int, upgraded chan int, size, every int, ring *uring.Ring) error {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if lfd >= 0 {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
			return err
		}
	}
	frame := make([]byte, size)
	frame[0], frame[1] = 0x82, byte(size-2) // a binary WebSocket frame header
	iov := []unix.Iovec{{Base: &frame[0]}}
	iov[0].SetLen(len(frame))
	done := func(uint64, int, error) {}
	buf := make([]byte, 64<<10)
	events := make([]unix.EpollEvent, 256)
	var conns []int
	next := time.Now().Add(100 * time.Millisecond)
	round := 0
	for {
		wait := max(int((time.Until(next)+time.Millisecond-1)/time.Millisecond), 0) // rounded up: no spinning
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(wait), 0, 0)
		n := int(r)
		if e == unix.EINTR {
			n = 0
		} else if e != 0 {
			return e
		}
		for more := upgraded != nil; more; {
			select {
			case c := <-upgraded:
				_ = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(c)})
				conns = append(conns, c)
			default:
				more = false
			}
		}
		for i := 0; i < n; i++ {
			fd := int(events[i].Fd)
			if fd == lfd {
				for {
					c, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
					if err != nil {
						break
					}
					_ = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(c)})
					conns = append(conns, c)
				}
				continue
			}
			for {
				if m := rawIO(unix.SYS_READ, fd, buf); m < len(buf) {
					break // a short read drained the socket (edge-triggered)
				}
			}
		}
		if !time.Now().Before(next) {
			for i, c := range conns {
				if (round+i)%every != 0 {
					continue
				}
				if ring == nil {
					rawIO(unix.SYS_WRITE, c, frame)
					continue
				}
				if ring.Room() == 0 {
					if err := ring.Submit(done); err != nil {
						return err
					}
				}
				ring.Writev(c, iov, 0)
			}
			if ring != nil {
				if err := ring.Submit(done); err != nil {
					return err
				}
			}
			round++
			next = next.Add(100 * time.Millisecond)
		}
	}
}

// rawIO is read(2) or write(2) on a non-blocking socket; -1 on an error.
func rawIO(trap uintptr, fd int, p []byte) int {
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1
	}
	return int(n)
}
