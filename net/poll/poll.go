package poll

import (
	"errors"
	"runtime"
)

// Event is a set of readiness conditions reported to a [Handler].
type Event uint32

// Readiness conditions.
const (
	// EventRead: the descriptor has data to read (or EOF/error to collect).
	EventRead Event = 1 << iota
	// EventWrite: the descriptor accepts writes again.
	EventWrite
	// EventHangup: the peer shut down its writing side or the connection hung up.
	EventHangup
	// EventError: an error is pending on the descriptor.
	EventError
)

// Handler receives readiness events for a registered descriptor.
//
// HandleEvent runs on the loop goroutine that owns the descriptor and must not
// block.
type Handler interface {
	HandleEvent(fd int, ev Event)
}

// Errors returned by the reactor.
var (
	// ErrClosed is returned by operations on a closed Poller or Loop.
	ErrClosed = errors.New("poll: closed")
	// ErrUnsupported is returned by Loop.Add where no reactor exists (non-Linux).
	ErrUnsupported = errors.New("poll: descriptor registration unsupported on this platform")
)

// Poller is a set of event loops.
//
// Its methods are safe for concurrent use.
type Poller struct {
	loops []*Loop
}

// New starts a Poller with n event-loop goroutines; n <= 0 means
// runtime.GOMAXPROCS(0). It fails only if the OS refuses an epoll or eventfd
// descriptor.
func New(n int) (*Poller, error) {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if n < 1 {
		n = 1
	}
	p := &Poller{loops: make([]*Loop, 0, n)}
	for i := 0; i < n; i++ {
		l, err := newLoop(i)
		if err != nil {
			return nil, errors.Join(err, p.Close())
		}
		p.loops = append(p.loops, l)
		go l.run()
	}
	return p, nil
}

// Len reports the number of loops.
func (p *Poller) Len() int { return len(p.loops) }

// Loop returns loop i modulo Len(); callers spread descriptors with it.
func (p *Poller) Loop(i int) *Loop {
	if i < 0 {
		i = -i
	}
	return p.loops[i%len(p.loops)]
}

// Close stops every loop and waits for their goroutines to return. Functions
// queued before Close run before their loop stops; descriptors still
// registered are not closed (their owners close them). Close is idempotent.
func (p *Poller) Close() error {
	var errs []error
	for _, l := range p.loops {
		errs = append(errs, l.stop())
	}
	for _, l := range p.loops {
		<-l.done
	}
	return errors.Join(errs...)
}
