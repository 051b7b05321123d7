//go:build linux

package poll

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Loop is one event-loop goroutine with its epoll instance.
//
// Run is safe for concurrent use; Add and Remove must be called on the loop
// goroutine (from a Handler or a function passed to Run).
type Loop struct {
	id    int
	epfd  int
	evfd  int
	done  chan struct{}
	close atomic.Bool

	// handlers is indexed by fd; touched only on the loop goroutine.
	handlers []Handler

	// afterBatch, if set, runs after each batch of events and queued
	// functions (SetAfterBatch); touched only on the loop goroutine.
	afterBatch func()

	mu     sync.Mutex // guards tasks and woken
	tasks  []func()
	spare  []func()
	woken  bool
	wakeup [8]byte
	drain  [8]byte

	// A paced loop (fallback > 0, NewPaced) waits on these, not on its
	// epoll descriptor: harvest asks it to handle what is ready (and it
	// answers on harvested), kick wakes it for queued functions.
	fallback  time.Duration
	harvest   chan struct{}
	harvested chan struct{}
	kick      chan struct{}
}

func newLoop(id int, fallback time.Duration) (*Loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("poll: epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("poll: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(evfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(evfd)
		unix.Close(epfd)
		return nil, fmt.Errorf("poll: register eventfd: %w", err)
	}
	l := &Loop{id: id, epfd: epfd, evfd: evfd, done: make(chan struct{}), fallback: fallback}
	if fallback > 0 {
		l.harvest, l.harvested, l.kick = make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	}
	l.wakeup[0] = 1 // native-endian uint64(1) on little-endian hosts; any non-zero value wakes
	return l, nil
}

// ID reports the loop's index in its Poller.
func (l *Loop) ID() int { return l.id }

// Add registers fd, edge-triggered for read, write and peer hang-up, and
// routes its events to h. It must be called on the loop goroutine. fd must
// be non-blocking.
func (l *Loop) Add(fd int, h Handler) error {
	if l.close.Load() {
		return ErrClosed
	}
	if fd >= len(l.handlers) {
		n := max(2*len(l.handlers), fd+1, 64)
		hs := make([]Handler, n)
		copy(hs, l.handlers)
		l.handlers = hs
	}
	ev := unix.EpollEvent{
		Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET,
		Fd:     int32(fd),
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("poll: epoll_ctl add fd %d: %w", fd, err)
	}
	l.handlers[fd] = h
	return nil
}

// Remove unregisters fd. It must be called on the loop goroutine, before fd
// is closed.
func (l *Loop) Remove(fd int) error {
	if fd < len(l.handlers) {
		l.handlers[fd] = nil
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return fmt.Errorf("poll: epoll_ctl del fd %d: %w", fd, err)
	}
	return nil
}

// SetAfterBatch makes f run on the loop goroutine after each batch of
// events and queued functions: a handler that gathers work while the batch
// runs (writes to many sockets) does it there, all at once. Call it before
// the loop's first Run (and, for a paced loop, its Poller's first
// Harvest), or on the loop goroutine.
func (l *Loop) SetAfterBatch(f func()) { l.afterBatch = f }

// Run queues f to run on the loop goroutine and wakes the loop if it sleeps.
// It never blocks on the loop and does not allocate in steady state (the
// queue's backing arrays are reused; pass a method value created once, not a
// fresh closure, on hot paths). It returns ErrClosed, without running f, once
// the loop is stopping.
func (l *Loop) Run(f func()) error {
	l.mu.Lock()
	if l.close.Load() {
		l.mu.Unlock()
		return ErrClosed
	}
	l.tasks = append(l.tasks, f)
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		return l.wake()
	}
	return nil
}

func (l *Loop) wake() error {
	if l.kick != nil {
		select {
		case l.kick <- struct{}{}:
		default: // a kick is pending already
		}
		return nil
	}
	for {
		_, err := write(l.evfd, l.wakeup[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN { // counter saturated: the loop is awake anyway
			return nil
		}
		return err
	}
}

func (l *Loop) stop() error {
	l.mu.Lock()
	already := l.close.Swap(true)
	l.mu.Unlock()
	if already {
		return nil
	}
	return l.wake()
}

func (l *Loop) runTasks() {
	l.mu.Lock()
	tasks := l.tasks
	l.tasks = l.spare[:0]
	l.woken = false
	l.mu.Unlock()
	for i, f := range tasks {
		f()
		tasks[i] = nil
	}
	l.mu.Lock()
	l.spare = tasks[:0]
	l.mu.Unlock()
}

// run is the loop. It never blocks in a system call: its epoll descriptor
// is itself registered with the Go runtime's poller (an epoll descriptor
// is readable while events are ready), and the loop goroutine parks there
// between batches, as any goroutine waiting for the network does. A loop
// blocked in epoll_wait instead holds its P in a system call, which the
// runtime's sysmon keeps taking back from it (a futex and a thread handoff
// each time) and which keeps sysmon itself waking every 20 µs.
func (l *Loop) run() {
	if l.kick != nil {
		l.runPaced()
		return
	}
	defer close(l.done)
	defer unix.Close(l.evfd)
	if err := unix.SetNonblock(l.epfd, true); err != nil {
		panic(fmt.Sprintf("poll: epoll descriptor non-blocking: %v", err))
	}
	f := os.NewFile(uintptr(l.epfd), "epoll")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		panic(fmt.Sprintf("poll: epoll descriptor: %v", err))
	}
	events := make([]unix.EpollEvent, 256)
	done := false
	for !done {
		err := rc.Read(func(uintptr) bool {
			for {
				n := l.ready(events)
				if n == 0 {
					return false // nothing ready: park in the runtime's poller
				}
				if l.dispatch(events[:n]) {
					done = true
					return true
				}
				if n < len(events) {
					// Drained: events from now on make the descriptor ready
					// again, and the runtime calls back at once if they
					// came already.
					return false
				}
			}
		})
		if err != nil && !done {
			panic(fmt.Sprintf("poll: wait on epoll: %v", err))
		}
	}
}

// runPaced is a paced loop (NewPaced): it sleeps until a harvest, a
// kick or the fallback, then handles what is ready. The fallback is
// armed only once a harvest or a kick woke it: what its owner sets up
// before either (SetAfterBatch, the state the after-batch function
// reads) is then seen by the loop, as with an event-driven loop, which
// runs nothing before its first event.
func (l *Loop) runPaced() {
	defer close(l.done)
	defer unix.Close(l.evfd)
	defer unix.Close(l.epfd)
	events := make([]unix.EpollEvent, 256)
	var t *time.Timer
	var fallback <-chan time.Time // nil, never ready, until the first wake
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		asked := false
		select {
		case <-l.harvest:
			asked = true
		case <-l.kick:
		case <-fallback:
		}
		done := l.handleReady(events)
		if asked {
			l.harvested <- struct{}{}
		}
		if done {
			return
		}
		if t == nil {
			t = time.NewTimer(l.fallback)
			fallback = t.C
		} else {
			t.Reset(l.fallback)
		}
	}
}

// handleReady dispatches the events ready now, batch by batch, until a
// batch leaves some room (and runs the queued functions with each); it
// reports whether the loop is to stop.
func (l *Loop) handleReady(events []unix.EpollEvent) bool {
	for {
		n := l.ready(events)
		if l.dispatch(events[:n]) {
			return true
		}
		if n < len(events) {
			return false
		}
	}
}

// ready fills events with those ready now, without waiting (a signal's
// EINTR is retried), and returns how many.
func (l *Loop) ready(events []unix.EpollEvent) int {
	for {
		n, err := epollWait(l.epfd, events)
		if err == nil {
			return n
		}
		if !errors.Is(err, unix.EINTR) {
			panic(fmt.Sprintf("poll: epoll_wait: %v", err))
		}
	}
}

// askHarvest asks a paced loop to handle what is ready (Poller.Harvest).
func (l *Loop) askHarvest() {
	if l.harvest == nil {
		return
	}
	select {
	case l.harvest <- struct{}{}:
	case <-l.done:
	}
}

// awaitHarvest waits until a paced loop has handled what askHarvest
// asked, or has stopped.
func (l *Loop) awaitHarvest() {
	if l.harvest == nil {
		return
	}
	select {
	case <-l.harvested:
	case <-l.done:
	}
}

// dispatch hands a batch of events to their handlers, then runs the queued
// tasks; it reports whether the loop is to stop.
func (l *Loop) dispatch(events []unix.EpollEvent) bool {
	{
		n := len(events)
		for i := 0; i < n; i++ {
			e := &events[i]
			fd := int(e.Fd)
			if fd == l.evfd {
				_, _ = Read(l.evfd, l.drain[:])
				continue
			}
			if fd >= len(l.handlers) || l.handlers[fd] == nil {
				continue
			}
			var ev Event
			if e.Events&(unix.EPOLLIN|unix.EPOLLPRI) != 0 {
				ev |= EventRead
			}
			if e.Events&unix.EPOLLOUT != 0 {
				ev |= EventWrite
			}
			if e.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0 {
				ev |= EventHangup
			}
			if e.Events&unix.EPOLLERR != 0 {
				ev |= EventError
			}
			l.handlers[fd].HandleEvent(fd, ev)
		}
		l.runTasks()
		if l.afterBatch != nil {
			l.afterBatch()
		}
		if l.close.Load() {
			l.runTasks()
			return true
		}
	}
	return false
}
