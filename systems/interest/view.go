package interest

import (
	"sync/atomic"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// View is one client's view of an Area, as the interest system knows it:
// for each hash cell, the round as of which the client's view of the cell
// is current (0: not held; unknown: the frame that carried it may not have
// arrived), and the map version it was sent. The host keeps one per bound
// session; its fields belong to the goroutine ticking the Area, but
// Written, which the connection's writer sets.
type View struct {
	// Written is the round of the last frame written whole to the
	// client's socket: a frame replaced before it was written (a slow
	// reader) lost its records, and the cells it carried go whole next.
	Written atomic.Uint64

	seen      []uint64     // per hash cell: the round its view is current as of (but see upTo)
	upTo      uint64       // each of its cells whose seen is a round (not 0, not unknown) is current as of at least this round: set by a round in step or quiet, applied to seen by the next walk
	mark      []uint64     // per hash cell: the last round it was within interest
	staticVer []uint32     // per hash cell: the map version sent (0: none)
	inflight  []int32      // cells whose records the last frame carried
	forgot    []int32      // cells the last frame forgot (forgotten again if it never arrived)
	forgotNow []int32      // this frame's
	round     uint64       // the round of the last frame built (or found quiet)
	fresh     bool         // the next frame resets the client's view
	walked    uint64       // the round its cells were last brought up to date: walked, or found in step (System.inStep)
	gen       uint64       // the map's generation then (that of its last walk)
	marked    uint64       // the round of its last walk: mark[hc] == marked for each of its cells
	at        ecs.Position // where its body stood at its last walk
	cells     []int32      // this round's cells within interest
	prev      []int32      // last round's
	delta     []bool       // per hash cell, this frame: sent as a delta (not whole)
	partial   []bool       // per hash cell, this frame: in sight only in part (line of sight)
	held      []bool       // per hash cell: the client holds what it saw of it, not all of it
	los       losView      // line of sight: the last field of view

	handed  [handedFrames]handed // the last frames built, the newest at handed[(nHanded-1) % handedFrames]
	nHanded int
}

// handed is one frame built for the client: what a short snapshot after
// it is counted from, if it is the last the client got.
type handed struct {
	round, tick uint64
	ack         uint32
}

// handedFrames is how many of the last frames a View keeps: a frame can
// count on what came before it only if the writer reported one of these
// written (latest-wins keeps one frame pending, so two would mostly do).
const handedFrames = 4

// shortBase reports whether the next frame, of tick and ackSeq, can go in
// the short form: the frame the writer last reported written is among
// those kept, and from it and every frame built after it (any of which
// may be the last the client got: the writer reports a frame after
// writing it) the tick and ack_seq moved forward by less than
// wire.ShortReach (ack_seq in serial-number arithmetic). A View keeps the
// last frames built in order, so when the written one is kept, so is every
// one after it.
func (v *View) shortBase(tick uint64, ackSeq uint32) bool {
	w := v.Written.Load()
	found := false
	for _, h := range v.handed {
		found = found || (w != 0 && h.round == w)
	}
	if !found {
		return false // nothing written yet, or too long ago to know its tick
	}
	for _, h := range v.handed {
		if h.round < w || h.round == 0 {
			continue // before the written one: the client got something newer
		}
		// ack_seq in serial-number arithmetic: seqs wrap.
		if h.tick > tick || tick-h.tick >= wire.ShortReach || ackSeq-h.ack >= wire.ShortReach {
			return false
		}
	}
	return true
}

// sent is the last frame built for the client (its round, tick and
// ack_seq), zero before one.
func (v *View) sent() *handed {
	return &v.handed[(v.nHanded+handedFrames-1)%handedFrames]
}

// hand records a frame built for the client.
func (v *View) hand(round, tick uint64, ackSeq uint32) {
	v.handed[v.nHanded%handedFrames] = handed{round: round, tick: tick, ack: ackSeq}
	v.nHanded++
}

// unknown marks a cell whose content on the client is not known (the frame
// that carried it may not have arrived): sent whole if in view, forgotten
// if not.
const unknown = ^uint64(0)

// Reset forgets everything the client was sent (a new session): its next
// frame resets the client's view, sends every cell in view whole, and
// every cell's map again.
func (v *View) Reset() {
	clear(v.seen)
	v.upTo = 0
	clear(v.mark)
	clear(v.staticVer)
	v.inflight = v.inflight[:0]
	v.forgot = v.forgot[:0]
	v.cells = v.cells[:0]
	v.round = 0
	v.handed, v.nHanded = [handedFrames]handed{}, 0
	v.fresh = true
	v.los.at = ecs.NoCell
	clear(v.held)
}

// current records that every cell in view is current as of round rnd
// (a round in step or quiet): in upTo, which the next walk applies to
// the cells' seen, and not cell by cell (but while walkAlways is set, so
// that the in-step test's reference keeps every seen by itself).
func (v *View) current(rnd uint64) {
	if !stepping() {
		for _, hc := range v.cells {
			v.seen[hc] = rnd
		}
		return
	}
	v.upTo = rnd
}

// size makes v fit an Area of n hash cells (a view moves between Areas
// with its session's connection only through a new session, so this
// happens once per Area).
func (v *View) size(n int) {
	if len(v.seen) == n {
		return
	}
	v.seen = make([]uint64, n)
	v.mark = make([]uint64, n)
	v.staticVer = make([]uint32, n)
	v.delta = make([]bool, n)
	v.partial = make([]bool, n)
	v.held = make([]bool, n)
	v.Reset()
}

// Frame is one client's snapshot of a round, as Build leaves it: Parts
// are the message's pieces in order (the per-client header first, then
// slices of the round's shared arena and of Buf), to be written with one
// writev; Buf holds the bytes of this client's own (its header, and the
// records of the cells it sees only in part); Statics are the hash cells
// whose map the client must get (reliably) before this frame.
//
// The caller lends Parts and Buf (emptied by Build, their arrays reused)
// and owns them after; the parts pointing into the arena stay valid while
// the arena's array is not reused.
type Frame struct {
	Parts   [][]byte
	Buf     []byte
	Statics []int32
	// Round is the round the frame belongs to; Len its length in bytes.
	Round uint64
	Len   int
	// Quiet: the round had nothing new for the client, so Build made no
	// frame (Parts is empty).
	Quiet bool
}
