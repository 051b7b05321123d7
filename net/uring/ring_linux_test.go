//go:build linux

package uring

import (
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pairs opens n loopback TCP connections and returns the non-blocking
// descriptors of both ends (the server's written to, the client's read).
func pairs(tb testing.TB, n int) (w, r []int) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			tb.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			tb.Fatal(err)
		}
		w = append(w, dupFD(tb, s))
		r = append(r, dupFD(tb, c))
		s.Close()
		c.Close()
	}
	tb.Cleanup(func() {
		for _, fd := range append(w, r...) {
			unix.Close(fd)
		}
	})
	return w, r
}

func dupFD(tb testing.TB, c net.Conn) int {
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		tb.Fatal(err)
	}
	return fd
}

func newRing(tb testing.TB, n uint32) *Ring {
	r, err := New(n)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func iovOf(b []byte) []unix.Iovec {
	v := make([]unix.Iovec, 1)
	v[0].Base = &b[0]
	v[0].SetLen(len(b))
	return v
}

// TestWritesArriveAndFullSocketsSayEAGAIN: a batch writes each socket its
// own bytes, and a socket that is full answers EAGAIN at once (the ring
// never parks a write on a non-blocking descriptor).
func TestWritesArriveAndFullSocketsSayEAGAIN(t *testing.T) {
	w, rd := pairs(t, 4)
	r := newRing(t, 8)
	msgs := [][]byte{[]byte("one"), []byte("two!"), []byte("three"), []byte("four..")}
	iovs := make([][]unix.Iovec, len(msgs))
	for i, m := range msgs {
		iovs[i] = iovOf(m)
		r.Writev(w[i], iovs[i], uint64(i))
	}
	got := map[uint64]int{}
	if err := r.Submit(func(tag uint64, n int, err error) {
		if err != nil {
			t.Errorf("write %d: %v", tag, err)
		}
		got[tag] = n
	}); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if got[uint64(i)] != len(m) {
			t.Errorf("write %d: %d bytes reported, want %d", i, got[uint64(i)], len(m))
		}
		buf := make([]byte, 64)
		for {
			n, err := unix.Read(rd[i], buf)
			if err == unix.EAGAIN {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(buf[:n]) != string(m) {
				t.Errorf("socket %d read %q, want %q", i, buf[:n], m)
			}
			break
		}
	}
	// Fill socket 0 with writev until EAGAIN, then ask the ring.
	big := make([]byte, 1<<16)
	for {
		if _, err := unix.Write(w[0], big); err == unix.EAGAIN {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	v := iovOf(big)
	r.Writev(w[0], v, 7)
	var sawErr error
	calls := 0
	submitted := make(chan error, 1)
	go func() {
		submitted <- r.Submit(func(tag uint64, n int, err error) { calls++; sawErr = err })
	}()
	select {
	case err := <-submitted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		// The write is parked on the socket (no RWF_NOWAIT): drain the
		// reader so that Submit can return, and fail.
		go func() {
			for {
				if _, err := unix.Read(rd[0], big); err != nil && err != unix.EAGAIN {
					return
				}
			}
		}()
		<-submitted
		t.Fatal("a write to a full socket waited for its reader: the ring parks writes")
	}
	if calls != 1 || sawErr != unix.EAGAIN {
		t.Fatalf("a write to a full socket: %d completions, err %v; want 1, EAGAIN", calls, sawErr)
	}
}

// BenchmarkRound writes one small frame to each of 256 loopback sockets,
// by one writev each or by one ring submission, then drains the readers
// (the same work in both).
func BenchmarkRound(b *testing.B) {
	const conns = 256
	frame := make([]byte, 40)
	for _, mode := range []string{"writev", "uring"} {
		b.Run(mode, func(b *testing.B) {
			w, rd := pairs(b, conns)
			r := newRing(b, conns)
			iov := iovOf(frame)
			buf := make([]byte, 4096)
			done := func(uint64, int, error) {}
			for b.Loop() {
				if mode == "writev" {
					for _, fd := range w {
						unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafePointer(iov)), 1)
					}
				} else {
					for i, fd := range w {
						r.Writev(fd, iov, uint64(i))
					}
					if err := r.Submit(done); err != nil {
						b.Fatal(err)
					}
				}
				for _, fd := range rd {
					unix.Read(fd, buf)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*conns), "ns/frame")
		})
	}
}

func unsafePointer(v []unix.Iovec) unsafe.Pointer { return unsafe.Pointer(&v[0]) }

// opReadv is IORING_OP_READV: the ring has no reads (the gate reads with
// read(2); see BenchmarkReadRound), so only this benchmark queues them.
const opReadv = 1

// BenchmarkReadRound measures the lever not taken: reading a small frame
// from each of 256 loopback sockets by one read(2) each (as the gate
// does) or by one ring submission of non-blocking readvs. Only the reads
// are timed; the frames are written with the timer stopped.
func BenchmarkReadRound(b *testing.B) {
	const conns, size = 256, 512
	frame := make([]byte, 40)
	for _, mode := range []string{"read", "uring"} {
		b.Run(mode, func(b *testing.B) {
			w, rd := pairs(b, conns)
			r := newRing(b, conns)
			bufs := make([]byte, conns*size)
			iovs := make([]unix.Iovec, conns)
			for i := range iovs {
				iovs[i].Base = &bufs[i*size]
				iovs[i].SetLen(size)
			}
			got := 0
			done := func(_ uint64, n int, err error) { got += n }
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for _, fd := range w {
					if _, err := unix.Write(fd, frame); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if mode == "read" {
					for k, fd := range rd {
						n, _, _ := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&bufs[k*size])), size)
						got += int(n)
					}
					continue
				}
				for k, fd := range rd {
					r.push(&sqe{opcode: opReadv, fd: int32(fd), addr: uint64(uintptr(unsafe.Pointer(&iovs[k]))), len: 1, rwFlags: rwfNoWait, userData: uint64(k)})
				}
				if err := r.Submit(done); err != nil {
					b.Fatal(err)
				}
			}
			if want := b.N * conns * len(frame); got != want {
				b.Fatalf("read %d bytes; want %d", got, want)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*conns), "ns/read")
		})
	}
}
