package ecs

import (
	"sync"
	"sync/atomic"
)

// IntentInput is an intent addressed to an entity, as posted to an Area.
type IntentInput struct {
	Entity Entity
	Intent Intent
}

// inbox is an Area's mailbox: intents (client rate, no allocation once the
// buffers have grown) and control functions (control rate). Producers are
// any goroutine; the single consumer is the goroutine ticking the Area,
// which swaps buffers so it never holds the lock while working.
type inbox struct {
	mu      sync.Mutex // guards intents, control, spare*
	intents []IntentInput
	control []func(*Area)
	spareC  []func(*Area)
	limit   int
	// pending is set when anything was posted since the last drain, so an
	// idle frozen Area's poll is one atomic load.
	pending atomic.Bool
}

// post queues an intent; ok is false when the inbox is full. first
// reports that nothing was pending before it (the Area's Clock may have to
// be told).
func (b *inbox) post(e Entity, it Intent) (ok, first bool) {
	b.mu.Lock()
	if len(b.intents) >= b.limit {
		b.mu.Unlock()
		return false, false
	}
	b.intents = append(b.intents, IntentInput{Entity: e, Intent: it})
	first = !b.pending.Swap(true) // under the lock: a post done is seen by the next drain
	b.mu.Unlock()
	return true, first
}

// postControl queues fn and reports, as post does, whether it is the first
// thing pending.
func (b *inbox) postControl(fn func(*Area)) (first bool) {
	b.mu.Lock()
	b.control = append(b.control, fn)
	first = !b.pending.Swap(true)
	b.mu.Unlock()
	return first
}

// drain hands the consumer the posted intents (swapped with dst, whose
// backing array the inbox keeps for the next round) and control functions.
// The consumer gives the control slice back with recycle.
func (b *inbox) drain(dst []IntentInput) ([]IntentInput, []func(*Area)) {
	b.mu.Lock()
	got := b.intents
	b.intents = dst[:0]
	ctl := b.control
	b.control = b.spareC[:0]
	b.spareC = nil
	b.pending.Store(false)
	b.mu.Unlock()
	return got, ctl
}

// drainControl hands the consumer the posted control functions only;
// intents stay for the next tick. pending stays set if intents wait.
func (b *inbox) drainControl() []func(*Area) {
	b.mu.Lock()
	ctl := b.control
	b.control = b.spareC[:0]
	b.spareC = nil
	b.pending.Store(len(b.intents) > 0)
	b.mu.Unlock()
	return ctl
}

// controlPending reports whether control functions wait: one atomic load
// when nothing was posted since the last drain.
func (b *inbox) controlPending() bool {
	if !b.pending.Load() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.control) > 0
}

func (b *inbox) recycle(ctl []func(*Area)) {
	b.mu.Lock()
	if b.spareC == nil {
		b.spareC = ctl[:0]
	}
	b.mu.Unlock()
}
