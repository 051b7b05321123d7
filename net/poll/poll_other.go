//go:build !linux

package poll

import (
	"sync"
	"time"
)

// Loop is a goroutine that runs queued functions. On this platform it has no
// descriptor registration: Add returns ErrUnsupported.
//
// Run is safe for concurrent use.
type Loop struct {
	id     int
	done   chan struct{}
	mu     sync.Mutex // guards tasks, closed
	cond   *sync.Cond
	tasks  []func()
	spare  []func()
	closed bool
}

// newLoop returns a loop; this platform's loops have no descriptors, so a
// paced one (fallback > 0) is the same as any.
func newLoop(id int, _ time.Duration) (*Loop, error) {
	l := &Loop{id: id, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// ID reports the loop's index in its Poller.
func (l *Loop) ID() int { return l.id }

// Add returns ErrUnsupported on this platform.
func (l *Loop) Add(fd int, h Handler) error { return ErrUnsupported }

// Remove returns ErrUnsupported on this platform.
func (l *Loop) Remove(fd int) error { return ErrUnsupported }

// Run queues f to run on the loop goroutine. It never blocks on the loop and
// returns ErrClosed, without running f, once the loop is stopping.
func (l *Loop) Run(f func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.tasks = append(l.tasks, f)
	l.cond.Signal()
	return nil
}

func (l *Loop) stop() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Signal()
	l.mu.Unlock()
	return nil
}

func (l *Loop) run() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.tasks) == 0 && !l.closed {
			l.cond.Wait()
		}
		tasks := l.tasks
		l.tasks = l.spare[:0]
		closed := l.closed
		l.mu.Unlock()
		for i, f := range tasks {
			f()
			tasks[i] = nil
		}
		l.mu.Lock()
		l.spare = tasks[:0]
		l.mu.Unlock()
		if closed && len(tasks) == 0 {
			return
		}
	}
}

// askHarvest does nothing: this platform's loops have no descriptors.
func (l *Loop) askHarvest() {}

// awaitHarvest does nothing: this platform's loops have no descriptors.
func (l *Loop) awaitHarvest() {}
