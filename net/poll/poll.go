package poll

import (
	"errors"
	"runtime"
	"time"
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
func New(n int) (*Poller, error) { return start(n, 0) }

// NewPaced starts a Poller of n paced loops (n as New's): a paced loop
// handles its descriptors' events only when [Poller.Harvest] asks it to,
// or when fallback went by without one, never as each event comes; it
// wakes at once only for functions queued by [Loop.Run], and handles the
// events ready then too. A server whose reads wait for a clock anyway (an
// Area host applies intents at its next tick) reads them all at the tick
// this way: one wake-up a tick, where an event-driven loop wakes for each
// message. fallback must be positive: it keeps a loop whose harvests
// stopped (its clock stopped, or fell behind) reading, once a harvest or
// a queued function first woke it.
func NewPaced(n int, fallback time.Duration) (*Poller, error) {
	if fallback <= 0 {
		return nil, errors.New("poll: a paced loop needs a positive fallback")
	}
	return start(n, fallback)
}

// start starts n loops, paced when fallback is positive.
func start(n int, fallback time.Duration) (*Poller, error) {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if n < 1 {
		n = 1
	}
	p := &Poller{loops: make([]*Loop, 0, n)}
	for i := 0; i < n; i++ {
		l, err := newLoop(i, fallback)
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

// Harvest has every paced loop handle the events of its descriptors
// ready now (and the functions queued) and returns once they all have. It
// returns at once for a Poller that is not paced, and for a loop that
// stopped. One goroutine at a time may call it.
func (p *Poller) Harvest() {
	for _, l := range p.loops {
		l.askHarvest()
	}
	for _, l := range p.loops {
		l.awaitHarvest()
	}
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
