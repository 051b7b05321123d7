package control

import (
	"context"
	"errors"
	"sync"
)

// Errors of a [Calls] wait.
var (
	// ErrPending reports a key expected already: one answer cannot settle
	// two waits.
	ErrPending = errors.New("control: a call with this key is pending")
	// ErrCallsClosed reports calls failed by [Calls.Close] (the link that
	// would carry their answers is gone).
	ErrCallsClosed = errors.New("control: the link closed before the answer came")
)

// Calls correlates requests sent over a link with their answers, by key
// (an Area, a grant token, an inspection id): the asker calls Expect before
// it sends its request, the link's reader calls Answer when the answer
// arrives, and the asker waits for it. An answer nobody expects is
// reported (Answer returns false), so a peer's unsolicited message is
// refused, not delivered. Close fails every wait at once, when the link
// ends. The zero value is ready; a Calls is safe for concurrent use.
type Calls[K comparable, V any] struct {
	mu     sync.Mutex // guards m, closed
	m      map[K]*Call[K, V]
	closed error
}

// Call is one expected answer (see [Calls.Expect]).
type Call[K comparable, V any] struct {
	calls *Calls[K, V]
	key   K
	ch    chan V        // buffered: Answer never blocks
	done  chan struct{} // closed by Close
	err   error         // set before done is closed
}

// Expect registers a wait for the answer keyed k. Call it before sending
// the request, so an answer that comes back at once is not missed, and
// end the wait with [Call.Wait] or [Call.Cancel]. It fails with
// ErrPending while another wait for k is on, and with the Close error once
// the calls are closed.
func (c *Calls[K, V]) Expect(k K) (*Call[K, V], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return nil, c.closed
	}
	if _, ok := c.m[k]; ok {
		return nil, ErrPending
	}
	if c.m == nil {
		c.m = map[K]*Call[K, V]{}
	}
	call := &Call[K, V]{calls: c, key: k, ch: make(chan V, 1), done: make(chan struct{})}
	c.m[k] = call
	return call, nil
}

// Answer delivers v to the wait for k and ends it; it reports false when
// nobody waits for k (never asked, answered already, cancelled, or timed
// out).
func (c *Calls[K, V]) Answer(k K, v V) bool {
	c.mu.Lock()
	call, ok := c.m[k]
	if ok {
		delete(c.m, k)
	}
	c.mu.Unlock()
	if ok {
		call.ch <- v
	}
	return ok
}

// Pending reports whether a wait for k is on.
func (c *Calls[K, V]) Pending(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[k]
	return ok
}

// Len is the number of waits on.
func (c *Calls[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Close fails every wait on, and every later Expect, with err (wrapping
// ErrCallsClosed when err is nil).
func (c *Calls[K, V]) Close(err error) {
	if err == nil {
		err = ErrCallsClosed
	}
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return
	}
	c.closed = err
	pending := c.m
	c.m = nil
	c.mu.Unlock()
	for _, call := range pending {
		call.err = err
		close(call.done)
	}
}

// Wait returns the answer, or the error that ended the wait: ctx's (the
// wait is cancelled), or the Close error.
func (call *Call[K, V]) Wait(ctx context.Context) (V, error) {
	select {
	case v := <-call.ch:
		return v, nil
	case <-call.done:
		var zero V
		return zero, call.err
	case <-ctx.Done():
		call.Cancel()
		select {
		case v := <-call.ch: // answered as the context ended
			return v, nil
		default:
		}
		var zero V
		return zero, ctx.Err()
	}
}

// Cancel ends the wait without an answer: a later Answer for its key
// reports false. It does nothing once the wait ended.
func (call *Call[K, V]) Cancel() {
	c := call.calls
	c.mu.Lock()
	if c.m[call.key] == call {
		delete(c.m, call.key)
	}
	c.mu.Unlock()
}
