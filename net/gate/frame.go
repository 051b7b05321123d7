package gate

import (
	"sync"
	"sync/atomic"
)

// Frame is one outbound binary message for one connection, made of byte
// slices written back-to-back after the WebSocket header the gate writes.
//
// Lifetime: get one with [NewFrame], fill Parts (and, if useful, the
// frame-owned scratch Buf), optionally [Frame.Attach] a [Shared], and hand it
// to exactly one [Conn.SendVolatile]. From then on the gate owns it: it calls
// [Frame.Release] exactly once, when the frame has been written, replaced by a
// newer volatile frame, or dropped because the connection closed. Release
// recycles the Frame; the caller must not touch it after SendVolatile.
//
// A Frame is not safe for concurrent use; ownership passes, it is not shared.
// Steady-state cost: 0 allocations (Frames and their Parts/Buf backing arrays
// come back from a sync.Pool).
type Frame struct {
	// Parts is the message payload, in order. The slices must stay unchanged
	// until the Frame is released: they are read by the event loop while it
	// writes, possibly after SendVolatile returned.
	Parts [][]byte
	// Buf is scratch owned by the Frame (kept across pool cycles), typically
	// the per-peer header that Parts[0] points into.
	Buf []byte
	// Delivered, if set, receives Round once the frame has been written in
	// full to the socket (not when it was replaced or dropped). A sender of
	// deltas reads it to learn whether its last frame arrived; the gate
	// clears both fields on release.
	Delivered *atomic.Uint64
	Round     uint64

	shared *Shared
	live   bool
}

var framePool = sync.Pool{New: func() any {
	return &Frame{Parts: make([][]byte, 0, 8), Buf: make([]byte, 0, 64)}
}}

// NewFrame returns an empty pooled Frame (len(Parts) == 0, len(Buf) == 0,
// capacities kept from earlier use). Safe for concurrent use.
func NewFrame() *Frame {
	f := framePool.Get().(*Frame)
	f.live = true
	return f
}

// Attach makes f hold a reference on s until f is released, so that s's
// buffers (which Parts may point into) outlive every write of f. It panics if
// f already holds a Shared.
func (f *Frame) Attach(s *Shared) {
	if f.shared != nil {
		panic("gate: Frame.Attach called twice")
	}
	s.Retain()
	f.shared = s
}

// Len reports the payload length, the sum of len(Parts).
func (f *Frame) Len() int {
	n := 0
	for _, p := range f.Parts {
		n += len(p)
	}
	return n
}

// Release recycles f and drops its reference on the attached Shared, which
// may run that Shared's OnFree on the calling goroutine. The gate calls it
// for frames given to SendVolatile; call it yourself only for a Frame you
// never handed over. It panics on a second release of the same hand-out.
func (f *Frame) Release() {
	if !f.live {
		panic("gate: Frame released twice")
	}
	f.live = false
	s := f.shared
	f.shared = nil
	clear(f.Parts)
	f.Parts = f.Parts[:0]
	f.Buf = f.Buf[:0]
	f.Delivered, f.Round = nil, 0
	framePool.Put(f)
	if s != nil {
		s.Release()
	}
}

// Shared owns buffers that many Frames point into (a round's snapshot
// chunks), with a reference count: the builder holds one reference from
// [NewShared] (or [Shared.Rearm]), each [Frame.Attach] adds one, each
// [Frame.Release] and the builder's own [Shared.Release] drop one. When the
// count reaches zero OnFree runs, on whichever goroutine dropped the last
// reference (an event loop, or the builder): it must not block, and it is the
// earliest moment the owner may overwrite Bufs or Rearm s for another round.
//
// Typical round, 0 allocations in steady state when Shareds are recycled
// through OnFree into the owner's free list:
//
//	sh := freeList.get()            // refs == 1 after NewShared or Rearm
//	sh.Bufs = encodeChunks(sh.Bufs[:0])
//	for _, p := range peers {
//		f := gate.NewFrame()
//		f.Buf = appendPeerHeader(f.Buf[:0], p)
//		f.Parts = append(f.Parts, f.Buf)
//		f.Parts = append(f.Parts, sh.Bufs...)
//		f.Attach(sh)
//		p.conn.SendVolatile(f)
//	}
//	sh.Release()                    // the builder's reference
//
// The reference count is atomic; Bufs and OnFree are plain fields that only
// the owner touches, and only while it holds a reference.
type Shared struct {
	// Bufs is the owner's storage; the gate never reads it (it reads Parts).
	Bufs [][]byte
	// OnFree, if set, runs once per round when the count reaches zero.
	OnFree func(*Shared)

	refs atomic.Int32
}

// NewShared returns a Shared holding one reference (the caller's).
func NewShared(onFree func(*Shared)) *Shared {
	s := &Shared{OnFree: onFree}
	s.refs.Store(1)
	return s
}

// Retain adds a reference. It panics if s was already freed (count 0).
func (s *Shared) Retain() {
	if s.refs.Add(1) <= 1 {
		panic("gate: Retain on a freed Shared")
	}
}

// Release drops a reference; the last one runs OnFree. It panics on more
// releases than references.
func (s *Shared) Release() {
	switch n := s.refs.Add(-1); {
	case n == 0:
		if s.OnFree != nil {
			s.OnFree(s)
		}
	case n < 0:
		panic("gate: Shared released more times than retained")
	}
}

// Rearm gives a freed Shared (count 0) one reference again, for the next
// round. It panics if references are still held.
func (s *Shared) Rearm() {
	if !s.refs.CompareAndSwap(0, 1) {
		panic("gate: Rearm on a Shared still referenced")
	}
}

// Refs reports the current reference count (for tests and assertions).
func (s *Shared) Refs() int { return int(s.refs.Load()) }
