//go:build linux

package poll

import (
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

type recorder struct {
	got atomic.Uint32
	buf [64]byte
	n   atomic.Int64
}

func (r *recorder) HandleEvent(fd int, ev Event) {
	r.got.Store(uint32(ev))
	if ev&EventRead != 0 {
		for {
			n, err := unix.Read(fd, r.buf[:])
			if n > 0 {
				r.n.Add(int64(n))
			}
			if err != nil || n == 0 {
				return
			}
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// pairOn registers one end of a non-blocking socket pair with l (from
// the loop goroutine, as Add must be), its events going to r, and
// returns the other end. Cleanup removes and closes the first end (on
// the loop, before Close stops it) and closes the other.
func pairOn(t *testing.T, l *Loop, r Handler) int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	added := make(chan error, 1)
	if err := l.Run(func() { added <- l.Add(fds[0], r) }); err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil { // a queued function runs at once, paced loop or not
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(fds[1])
		removed := make(chan error, 1)
		if l.Run(func() { removed <- l.Remove(fds[0]); unix.Close(fds[0]) }) != nil {
			unix.Close(fds[0]) // the loop stopped already
			return
		}
		if err := <-removed; err != nil {
			t.Error(err)
		}
	})
	return fds[1]
}

func TestLoopReadEvents(t *testing.T) {
	p, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() }) // after pairOn's cleanup: cleanups run last first
	r := &recorder{}
	peer := pairOn(t, p.Loop(1), r)
	waitFor(t, "initial writable edge", func() bool { return Event(r.got.Load())&EventWrite != 0 })
	for i := 0; i < 3; i++ {
		if _, err := unix.Write(peer, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		want := int64(5 * (i + 1))
		waitFor(t, "bytes read", func() bool { return r.n.Load() == want })
	}
	unix.Shutdown(peer, unix.SHUT_WR)
	waitFor(t, "hang-up", func() bool { return Event(r.got.Load())&EventHangup != 0 })
}

func TestRunOrderAndClose(t *testing.T) {
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Loop(0)
	var seq []int
	done := make(chan struct{})
	for i := 0; i < 1000; i++ {
		i := i
		if err := l.Run(func() { seq = append(seq, i) }); err != nil {
			t.Fatal(err)
		}
	}
	l.Run(func() { close(done) })
	<-done
	for i, v := range seq {
		if v != i {
			t.Fatalf("seq[%d] = %d; want %d", i, v, i)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(func() {}); err != ErrClosed {
		t.Fatalf("Run after Close = %v; want %v", err, ErrClosed)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestRunAllocs(t *testing.T) {
	p, err := New(1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := p.Loop(0)
	ran := make(chan struct{}, 1)
	f := func() { ran <- struct{}{} }
	allocs := testing.AllocsPerRun(1000, func() {
		l.Run(f)
		<-ran // blocking, so the runtime polls the network and wakes the loop
	})
	if allocs != 0 {
		t.Fatalf("Run allocs = %v; want 0", allocs)
	}
}

// TestPacedLoopReadsAtHarvest: a paced loop (NewPaced) does not wake for
// a descriptor's events: what a socket received waits, unread, for
// Harvest, which returns once it is read; a function queued by Run still
// runs at once; with no harvest, the fallback reads it.
func TestPacedLoopReadsAtHarvest(t *testing.T) {
	p, err := NewPaced(1, time.Hour) // no fallback within the test
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	r := &recorder{}
	peer := pairOn(t, p.Loop(0), r) // a queued function runs without a harvest
	for i := range 3 {
		if _, err := unix.Write(peer, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // an event-driven loop would have read it by now
		if n := r.n.Load(); n != int64(5*i) {
			t.Fatalf("round %d: %d bytes read before the harvest; want %d", i, n, 5*i)
		}
		p.Harvest()
		if n := r.n.Load(); n != int64(5*(i+1)) {
			t.Fatalf("round %d: %d bytes read when Harvest returned; want %d", i, n, 5*(i+1))
		}
	}

	// Without harvests, the fallback reads.
	q, err := NewPaced(1, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	r2 := &recorder{}
	peer2 := pairOn(t, q.Loop(0), r2)
	if _, err := unix.Write(peer2, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fallback's read", func() bool { return r2.n.Load() == 5 })
	if _, err := NewPaced(1, 0); err == nil {
		t.Fatal("NewPaced with no fallback: no error")
	}
}
