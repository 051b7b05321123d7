package interest

import (
	"slices"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/fov"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

// last is an entity as the clients in sync were last told of it.
type last struct {
	e    ecs.Entity // the entity under this ID; the zero Entity if none
	st   wire.EntityState
	cell int32
}

// part says which section of a frame a record goes in.
type part uint8

const (
	partRel   part = iota // relative to the origin cell (steps, positions, gone, state)
	partSpawn             // an entity new to the world, in its cell
	partEntr              // an entity that came from another cell, whole
	numParts
)

// rec is one record of this round, encoded into the round's scratch.
type rec struct {
	cell     int32
	part     part
	off, len int32
	from     int32 // for an entrant: its origin cell
	next     int32 // the next record of the same cell and part, or -1
}

// span is a run of the round's arena.
type span struct{ off, len int32 }

// cell is one hash cell's state in the rounds: when its content last
// changed, where this round's records of it are in the arena, and its
// whole and forget forms, each encoded at most once a round.
type cell struct {
	changed   uint64 // the round its content last changed
	rel       span   // this round's relative records
	abs       span   // this round's whole entities: spawns, then entrants
	spawnLen  int32  // the spawns' share of abs
	entrFrom  int32  // offset in origins of its entrants' origin cells
	entrN     int32
	fullRnd   uint64 // the round its whole form was encoded in
	full      span
	forgetRnd uint64 // the round its forget record was encoded in
	forget    span
	mark      uint64 // the round it joined cellsNow
	head      [numParts]int32
	tail      [numParts]int32
}

// System runs an Area's snapshot rounds: once a round it turns what
// changed into records, each encoded once into the round's shared arena
// and grouped by hash cell, and it builds each client's frame from them
// (Build). A client in sync with a cell gets the cell's records; one that
// holds a cell it is not in sync with (or does not hold) gets the cell
// whole; a cell that left its view is forgotten. Relative records come
// first, whole entities after, forgets last, so applying the records in
// order is always right (docs/protocol.md, "Snapshots").
//
// It is the Area's body index (ecs.BodyIndex): every spawn, move, despawn
// and change of state marks the entity touched as it happens. In Areas
// whose rules ask for line of sight, a client gets only what it can see
// (los.go).
//
// A System belongs to its Area's goroutine, like the Area.
type System struct {
	a      *ecs.Area
	hash   *spatial.Hash
	m      *statics.Map
	radius int32 // -1: everything
	rnd    uint64

	// keepAlive is the most ticks a client goes without a frame: a
	// round with nothing new for it sends none, unless this many ticks
	// passed since its last one.
	keepAlive uint64

	last     []last   // per entity ID
	touchRnd []uint64 // per entity ID: the round it was last touched in (+1 for the next)
	touched  []int32  // IDs touched since the last round

	cells      []cell // per hash cell
	origins    []int32
	changedRnd uint64 // the last round any cell's content changed in

	// Line of sight (los.go), in Areas whose rules ask for it.
	los      bool
	caster   *fov.Caster
	fov      *fov.View
	words    int      // uint64 words of a hash cell's square mask
	fullMask []uint64 // per hash cell: the mask of its squares on the grid
	cellsBuf []int32

	recs     []rec   // this round's records
	scratch  []byte  // this round's records as first encoded
	cellsNow []int32 // hash cells with records this round, ascending

	pos      ecs.Map[ecs.Position]
	player   ecs.Map[ecs.Player]
	creature ecs.Map[ecs.Creature]
	health   ecs.Map[ecs.Health]
	body     ecs.Map[ecs.Body]
	transit  ecs.Map[ecs.Transit]
}

// New readies the interest rounds of a: clients see the hash cells with a
// square within radius squares of their body (0: every cell), or what is
// in their line of sight within it where a's rules say so. It attaches
// itself to a as a body index.
func New(a *ecs.Area, h *spatial.Hash, m *statics.Map, radius int) (*System, error) {
	s := &System{a: a, hash: h, m: m, radius: int32(radius), keepAlive: DefaultKeepAlive}
	if s.radius == 0 {
		s.radius = -1 // everything
	}
	s.cells = make([]cell, h.Cells())
	for i := range s.cells {
		c := &s.cells[i]
		for p := range c.head {
			c.head[p] = -1
		}
	}
	w := &a.World
	s.pos = ecs.NewMap[ecs.Position](w)
	s.player = ecs.NewMap[ecs.Player](w)
	s.creature = ecs.NewMap[ecs.Creature](w)
	s.health = ecs.NewMap[ecs.Health](w)
	s.body = ecs.NewMap[ecs.Body](w)
	s.transit = ecs.NewMap[ecs.Transit](w)
	if a.Rules.LineOfSight {
		if err := s.initLOS(); err != nil {
			return nil, err
		}
	}
	a.AddIndex(s)
	return s, nil
}

// DefaultKeepAlive is the keep-alive of a new System, in ticks: one
// second at the default 20 ticks a second.
const DefaultKeepAlive = 20

// SetKeepAlive sets the most ticks a client goes without a frame (at
// least 1: a frame every round). A round that has nothing new for a client
// (no record, no map, the same ack_seq) sends it no frame, unless its last
// frame is this many ticks old (the Area's tick numbers, which go on
// through ticks rested, ecs.Area.Rest): then it gets a frame of the header
// alone, which keeps its tick, its ack_seq and its liveness honest.
func (s *System) SetKeepAlive(ticks int) {
	s.keepAlive = uint64(max(ticks, 1))
}

// Hash is the spatial hash whose cells the rounds are made of.
func (s *System) Hash() *spatial.Hash { return s.hash }

// Insert implements ecs.BodyIndex.
func (s *System) Insert(e ecs.Entity, _ ecs.Cell) { s.touch(e) }

// Move implements ecs.BodyIndex.
func (s *System) Move(e ecs.Entity, _ ecs.Cell) { s.touch(e) }

// Remove implements ecs.BodyIndex.
func (s *System) Remove(e ecs.Entity) { s.touch(e) }

// Changed implements ecs.BodyIndex.
func (s *System) Changed(e ecs.Entity) { s.touch(e) }

// touch marks entity e's ID for this round's records. O(1); it allocates
// only when e's ID is the largest yet.
func (s *System) touch(e ecs.Entity) {
	id := int(e.ID())
	for id >= len(s.touchRnd) {
		s.touchRnd = append(s.touchRnd, 0)
		s.last = append(s.last, last{cell: -1})
	}
	if s.touchRnd[id] == s.rnd+1 {
		return
	}
	s.touchRnd[id] = s.rnd + 1
	s.touched = append(s.touched, int32(id))
}

// State reads entity e's state as clients are shown it; e is alive and
// stands on sq. A body that is neither a player nor a creature (a
// wanderer) is shown as a creature of no listed kind.
func (s *System) State(e ecs.Entity, sq ecs.Cell) wire.EntityState {
	x, y := s.a.Grid.XY(sq)
	st := wire.EntityState{ID: e.ID(), Kind: wire.KindCreature, X: x, Y: y}
	if pl := s.player.Get(e); pl != nil {
		st.Kind = wire.KindPlayer
		if pl.Away {
			st.Flags |= wire.FlagAway
		}
	} else if c := s.creature.Get(e); c != nil {
		st.Look = c.Kind
	}
	if h := s.health.Get(e); h != nil {
		st.HP = h.HP
	}
	if b := s.body.Get(e); b != nil {
		st.Facing = wire.Dir(b.Facing)
	}
	if s.transit.Has(e) {
		st.Flags |= wire.FlagTransit
	}
	return st
}

// Round begins the next round: what changed since the last one becomes
// this round's records, appended to arena grouped by cell, and arena is
// returned. With a nil arena (no client to build a frame for) it only
// keeps what clients would be told in step, encoding nothing.
//
// Frames point into the arena; if it grows mid-round, the slices already
// handed out keep the old array alive and valid. It settles at the size a
// round needs, after which rounds allocate nothing.
func (s *System) Round(arena []byte) []byte {
	s.rnd++
	return s.diff(arena)
}

// Rests reports whether a round run now would have nothing for the client
// viewing through v until its keep-alive is due (KeepAliveAt), given its
// ack_seq did not change since its last frame (that is the owner's to
// know: no intent was applied since the last round): no entity was
// touched since the last round (nor, then, any cell's content), no map
// changed since the client's view was last brought up to date, its session
// is not new and its last frame was written whole. Never in an Area with
// line of sight. An owner that finds it for every client need not run
// rounds until the first keep-alive is due: rounds not run change
// nothing, and the next one run sends what this one would have.
func (s *System) Rests(v *View) bool {
	round, ok := s.RestsOnceWritten(v)
	return ok && v.Written.Load() == round
}

// RestsOnceWritten reports whether the client viewing through v rests
// (Rests) once its last frame is written whole, and that frame's round,
// which v.Written then reads (0: no frame built yet). An owner deciding
// a rest ahead of the round's write counts on it there (ecs.Area.Expect).
func (s *System) RestsOnceWritten(v *View) (round uint64, ok bool) {
	return v.sent().round, !s.los && len(s.touched) == 0 && s.m.Generation() == v.gen && !v.fresh
}

// KeepAliveAt is the tick from which a round sends the client viewing
// through v a frame even if it has nothing new (SetKeepAlive).
func (s *System) KeepAliveAt(v *View) uint64 { return v.sent().tick + s.keepAlive }

// diff turns the entities touched since the last round into this round's
// records, appended to arena grouped by cell (relative records by origin
// cell; whole entities by cell, spawns before entrants), and brings last
// up to date. With a nil arena it only brings last up to date.
func (s *System) diff(arena []byte) []byte {
	encode := arena != nil
	s.recs = s.recs[:0]
	s.scratch = s.scratch[:0]
	rnd := s.rnd
	for _, id := range s.touched {
		s.touchRnd[id] = rnd // touches from now on count for the next round
		l := &s.last[id]
		var cur ecs.Entity
		var st wire.EntityState
		cell := int32(-1)
		if s.hash.HasID(id) {
			cur = s.hash.Entity(id)
			sq := s.hash.Square(id)
			st = s.State(cur, sq)
			cell = s.hash.CellOf(sq)
		}
		switch {
		case l.e != (ecs.Entity{}) && cur == l.e: // the same entity, here before
			if st == l.st {
				break
			}
			s.cells[l.cell].changed = rnd
			s.cells[cell].changed = rnd
			s.changedRnd = rnd
			if encode {
				s.relRecord(l, &st)
				if cell != l.cell {
					s.addRec(cell, partEntr, l.cell, func(b []byte) []byte { return wire.AppendEnter(b, &st) })
				}
			}
		default:
			if l.e != (ecs.Entity{}) { // gone (or its ID reused)
				s.cells[l.cell].changed = rnd
				s.changedRnd = rnd
				if encode {
					s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendGone(b, uint32(id)) })
				}
			}
			if cur != (ecs.Entity{}) { // new to the world
				s.cells[cell].changed = rnd
				s.changedRnd = rnd
				if encode {
					s.addRec(cell, partSpawn, -1, func(b []byte) []byte { return wire.AppendEnter(b, &st) })
				}
			}
		}
		*l = last{e: cur, st: st, cell: cell}
	}
	s.touched = s.touched[:0]
	if !encode {
		return arena
	}
	return s.group(arena)
}

// relRecord adds the relative record that takes a client from l to st.
func (s *System) relRecord(l *last, st *wire.EntityState) {
	dx, dy := st.X-l.st.X, st.Y-l.st.Y
	id := st.ID
	moved := dx != 0 || dy != 0
	step := moved && max(dx, -dx, dy, -dy) == 1
	switch {
	case step:
		d := wire.Dir(ecs.DirOf(dx, dy, 0))
		s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendStep(b, id, d) })
		if st.Facing != d || st.HP != l.st.HP || st.Flags != l.st.Flags {
			s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
		}
	case moved:
		s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendPos(b, id, st.X, st.Y) })
		if st.Facing != l.st.Facing || st.HP != l.st.HP || st.Flags != l.st.Flags {
			s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
		}
	default:
		s.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
	}
}

// addRec encodes one record into the round's scratch. The closures do not
// escape (enc is called at once), so they allocate nothing.
func (s *System) addRec(cell int32, p part, from int32, enc func([]byte) []byte) {
	off := len(s.scratch)
	s.scratch = enc(s.scratch)
	s.recs = append(s.recs, rec{cell: cell, part: p, off: int32(off), len: int32(len(s.scratch) - off), from: from})
}

// group copies this round's records into arena, contiguous per cell and
// part (relative records; then spawns and entrants, adjacent), and records
// where each cell's records and its entrants' origin cells are. It threads
// a list per (cell, part) through the records: O(records), no sort.
func (s *System) group(arena []byte) []byte {
	s.cellsNow = s.cellsNow[:0]
	for i := range s.recs {
		r := &s.recs[i]
		r.next = -1
		c := &s.cells[r.cell]
		if c.head[r.part] < 0 {
			c.head[r.part] = int32(i)
		} else {
			s.recs[c.tail[r.part]].next = int32(i)
		}
		c.tail[r.part] = int32(i)
		if c.mark != s.rnd {
			c.mark = s.rnd
			s.cellsNow = append(s.cellsNow, r.cell)
		}
	}
	// In the order of a view's cells, which a client in step gets them in
	// (stepOn).
	slices.Sort(s.cellsNow)
	s.origins = s.origins[:0]
	for _, hc := range s.cellsNow {
		c := &s.cells[hc]
		c.rel.off = int32(len(arena))
		arena = s.emit(arena, hc, partRel)
		c.rel.len = int32(len(arena)) - c.rel.off
		c.abs.off = int32(len(arena))
		arena = s.emit(arena, hc, partSpawn)
		c.spawnLen = int32(len(arena)) - c.abs.off
		c.entrFrom = int32(len(s.origins))
		arena = s.emit(arena, hc, partEntr)
		c.abs.len = int32(len(arena)) - c.abs.off
		c.entrN = int32(len(s.origins)) - c.entrFrom
	}
	return arena
}

// emit appends cell hc's records of part p to arena, in the order they
// were made, and empties the list; for entrants it notes their origin
// cells.
func (s *System) emit(arena []byte, hc int32, p part) []byte {
	c := &s.cells[hc]
	for i := c.head[p]; i >= 0; i = s.recs[i].next {
		r := &s.recs[i]
		arena = append(arena, s.scratch[r.off:r.off+r.len]...)
		if p == partEntr && !slices.Contains(s.origins[c.entrFrom:], r.from) {
			s.origins = append(s.origins, r.from)
		}
	}
	c.head[p] = -1
	return arena
}

// whole returns hash cell hc's whole form for this round (a cell record of
// everything in it), encoding it into the arena the first time it is
// needed.
func (s *System) whole(hc int32, arena []byte) ([]byte, []byte) {
	c := &s.cells[hc]
	if c.fullRnd == s.rnd {
		end := c.full.off + c.full.len
		return arena[c.full.off:end:end], arena
	}
	off := len(arena)
	arena = wire.AppendCell(arena, uint32(hc), s.hash.Count(hc))
	for id := s.hash.First(hc); id >= 0; id = s.hash.Next(id) {
		st := s.last[id].st // brought up to date by this round's diff
		arena = wire.AppendEntity(arena, &st)
	}
	c.fullRnd, c.full = s.rnd, span{int32(off), int32(len(arena) - off)}
	return arena[off:len(arena):len(arena)], arena
}

// forget returns the record that makes a client forget hash cell hc.
func (s *System) forget(hc int32, arena []byte) ([]byte, []byte) {
	c := &s.cells[hc]
	if c.forgetRnd == s.rnd {
		end := c.forget.off + c.forget.len
		return arena[c.forget.off:end:end], arena
	}
	off := len(arena)
	arena = wire.AppendForget(arena, uint32(hc))
	c.forgetRnd, c.forget = s.rnd, span{int32(off), int32(len(arena) - off)}
	return arena[off:len(arena):len(arena)], arena
}

// Build builds the frame of the client viewing through v whose body is e,
// for this round (after Round): its records from the round's arena,
// header first, in f (see Frame). It returns the arena, which may have
// grown (a cell's whole form or a forget record encoded for the first
// time this round). ackSeq is the session's ack_seq the header carries.
// A body that is gone gets no frame (f.Parts empty); nor does a client
// with nothing new this round (f.Parts empty, f.Quiet set: no record, no
// map, the same ack_seq as its last frame, which was written whole), until
// its last frame is the keep-alive's ticks old (SetKeepAlive). A client in
// step with the rounds (inStep) gets the frame a walk of its cells would
// make from the cells that changed this round alone (stepOn).
func (s *System) Build(v *View, e ecs.Entity, ackSeq uint32, arena []byte, f *Frame) []byte {
	v.size(s.hash.Cells())
	f.Parts, f.Buf, f.Statics, f.Len, f.Quiet = f.Parts[:0], f.Buf[:0], f.Statics[:0], 0, false
	rnd := s.rnd
	f.Round = rnd
	written := v.Written.Load()
	if v.round != 0 && written != v.round {
		// The last frame may never arrive: what the client holds of the
		// cells it carried is unknown (sent whole if in view, forgotten if
		// not).
		for _, hc := range v.inflight {
			v.seen[hc] = unknown
		}
	}
	pos := s.pos.Get(e)
	if pos == nil {
		return arena
	}
	if s.unchanged(v, ackSeq) {
		// What a walk of the cells would find, without it: nothing new.
		// Every cell in view is still current as of this round.
		v.current(rnd)
		f.Quiet = true
		v.inflight = v.inflight[:0]
		v.round = rnd
		return arena
	}
	f.Parts = append(f.Parts, nil) // the header, filled last
	var n, seenAt int
	if s.inStep(v, pos, written) {
		n, seenAt = s.stepOn(v, f, arena), -1
	} else {
		arena, n, seenAt = s.walk(v, pos, f, arena)
	}
	if n == 0 && !v.fresh && len(f.Statics) == 0 && ackSeq == v.sent().ack &&
		v.Written.Load() == v.sent().round && s.a.Tick < s.KeepAliveAt(v) {
		// Nothing new for this client, and its last frame was written
		// whole: no frame. Nothing is in flight, so the next round has no
		// frame of this one to doubt.
		f.Parts, f.Quiet = f.Parts[:0], true
		v.inflight = v.inflight[:0]
		v.round = rnd
		return arena
	}
	var flags wire.SnapshotFlags
	if v.fresh {
		flags |= wire.SnapshotReset
		v.fresh = false
	}
	own := len(f.Buf)
	n += own
	if flags == 0 && v.shortBase(s.a.Tick, ackSeq) {
		f.Buf = wire.AppendShortSnapshotHeader(f.Buf, s.a.Tick, ackSeq, n)
	} else {
		f.Buf = wire.AppendSnapshotHeader(f.Buf, s.a.Tick, ackSeq, flags, n)
	}
	v.hand(rnd, s.a.Tick, ackSeq)
	f.Parts[0] = f.Buf[own:]
	if seenAt >= 0 {
		f.Parts[seenAt] = f.Buf[:own:own]
	}
	f.Len = n + len(f.Parts[0])
	v.round = rnd
	return arena
}

// walk brings the client viewing through v, whose body stands at pos, up
// to date cell by cell: which cells are in view now, which of them it is
// in sync with (their records) and which not (whole), which maps it
// lacks, and which cells left its view (forgotten). It appends the parts
// to f and returns the arena, the parts' length and the index in f.Parts
// of the part that f.Buf's records go in (-1: none).
func (s *System) walk(v *View, pos *ecs.Position, f *Frame, arena []byte) ([]byte, int, int) {
	rnd := s.rnd
	marked := v.marked
	v.walked, v.gen, v.marked, v.at = rnd, s.m.Generation(), rnd, *pos
	v.prev, v.cells = v.cells, v.prev
	if s.los {
		s.sightCells(v, pos.X, pos.Y)
	} else {
		v.cells = s.hash.CellsWithin(pos.X, pos.Y, s.radius, v.cells[:0])
	}
	versions := s.m.Versions()
	for i, hc := range v.cells {
		seen := v.seen[hc]
		if v.mark[hc] == marked && seen < v.upTo {
			// In view at the last walk, so current since as of upTo
			// (View.current); unknown, above every round, stays.
			seen = v.upTo
			v.seen[hc] = seen
		}
		v.mark[hc] = rnd
		v.partial[hc] = s.los && !s.wholeInSight(hc, s.sightMask(v, i))
		ch := s.cells[hc].changed
		v.delta[hc] = !v.partial[hc] && !v.held[hc] && seen != 0 && seen != unknown && (ch <= seen || (ch == rnd && seen == rnd-1))
		if v.staticVer[hc] != versions[hc] {
			f.Statics = append(f.Statics, hc)
			v.staticVer[hc] = versions[hc]
		}
	}
	v.inflight = v.inflight[:0]
	n := 0
	add := func(part []byte) {
		if len(part) > 0 {
			f.Parts = append(f.Parts, part)
			n += len(part)
		}
	}
	// Relative records of the cells the client is in sync with.
	for _, hc := range v.cells {
		if c := &s.cells[hc]; v.delta[hc] && c.changed == rnd {
			end := c.rel.off + c.rel.len
			add(arena[c.rel.off:end:end])
		}
	}
	// Whole entities: each cell out of sync whole; each cell in sync with
	// its spawns, and its entrants unless the client gets every one of
	// them by a step from an origin cell it is in sync with. A cell in
	// sight only in part: what the client sees of it, encoded for it
	// alone, and never in sync (whole again next round, or forgotten).
	seenAt := -1
	for i, hc := range v.cells {
		c := &s.cells[hc]
		switch {
		case v.partial[hc]:
			// What it saw of the cell is still what it holds if it got it,
			// the cell has not changed since and its sight was not cast
			// again since.
			if seen := v.seen[hc]; v.held[hc] && seen != unknown && seen >= c.changed && seen >= v.los.castRnd {
				continue
			}
			if seenAt < 0 {
				f.Parts = append(f.Parts, nil) // f.Buf's records, set below
				seenAt = len(f.Parts) - 1
			}
			f.Buf = s.appendSeen(f.Buf, hc, s.sightMask(v, i))
			v.inflight = append(v.inflight, hc)
			v.seen[hc], v.held[hc] = rnd, true
			continue
		case !v.delta[hc]:
			var whole []byte
			whole, arena = s.whole(hc, arena)
			add(whole)
			v.inflight = append(v.inflight, hc)
			v.held[hc] = false
		case c.changed == rnd:
			end := c.abs.off + c.spawnLen
			if s.needsEntrants(v, hc) {
				end = c.abs.off + c.abs.len
			}
			add(arena[c.abs.off:end:end])
			v.inflight = append(v.inflight, hc)
		}
		v.seen[hc] = rnd
	}
	// Cells that left the view: forget them, once; again if the frame
	// that forgot them never arrived (their seen is unknown then).
	v.forgotNow = v.forgotNow[:0]
	for _, list := range [2][]int32{v.prev, v.forgot} {
		for _, hc := range list {
			if v.mark[hc] == rnd || v.seen[hc] == 0 {
				continue
			}
			var fg []byte
			fg, arena = s.forget(hc, arena)
			add(fg)
			v.inflight = append(v.inflight, hc)
			v.seen[hc], v.held[hc] = 0, false
			v.forgotNow = append(v.forgotNow, hc)
		}
	}
	v.forgot, v.forgotNow = v.forgotNow, v.forgot
	return arena, n, seenAt
}

// inStep reports whether the client viewing through v, whose body stands
// at pos and whose last frame written whole is of round written, is in
// step with the rounds: a walk of its cells now would find every cell in
// view in sync as of the last round, nothing to forget and no map to
// send, so only the cells whose content changed this round have anything
// for it (stepOn). That holds when its last frame was built for the last
// round and written whole (or that round was quiet for it), its session
// is not new, its cells are those of its last walk (every cell, or its
// body has not moved since) and the map has not changed since. Never
// with line of sight.
//
// A last frame not (yet) written whole leaves the cells it carried
// unknown (Build); a quiet round carries none, and is found quiet only
// when the frame before it was written whole.
func (s *System) inStep(v *View, pos *ecs.Position, written uint64) bool {
	return stepping() && !s.los && !v.fresh && v.round == s.rnd-1 && (written == v.round || len(v.inflight) == 0) &&
		s.m.Generation() == v.gen && (s.radius < 0 || *pos == v.at)
}

// stepOn builds what a walk would for a client in step (inStep) without
// walking its cells: each cell in view that changed this round, in the
// order of the view's cells, gives its relative records, then its spawns
// (and its entrants, where one came from a cell out of view); every cell
// in view is then current as of this round. It appends the parts to f
// and returns their length.
func (s *System) stepOn(v *View, f *Frame, arena []byte) int {
	rnd := s.rnd
	v.walked = rnd
	v.inflight = v.inflight[:0]
	v.forgot = v.forgot[:0] // the last frame's forgets arrived
	n := 0
	for _, hc := range s.cellsNow {
		if c := &s.cells[hc]; v.mark[hc] == v.marked && c.rel.len > 0 {
			end := c.rel.off + c.rel.len
			f.Parts = append(f.Parts, arena[c.rel.off:end:end])
			n += int(c.rel.len)
		}
	}
	for _, hc := range s.cellsNow {
		if v.mark[hc] != v.marked {
			continue // out of view
		}
		c := &s.cells[hc]
		l := c.spawnLen
		if s.entrantsFromOutside(v, hc) {
			l = c.abs.len
		}
		if l > 0 {
			end := c.abs.off + l
			f.Parts = append(f.Parts, arena[c.abs.off:end:end])
			n += int(l)
		}
		v.inflight = append(v.inflight, hc)
	}
	v.current(rnd)
	return n
}

// unchanged reports whether a round is quiet for the client viewing
// through v, from the round alone, without walking its cells: nothing in
// the Area changed since its cells were last walked or found in step (no
// cell's content, which a body that moved changes, and no map), and Build's
// quiet conditions hold (not a new session, the same ack_seq, its last
// frame written whole, the keep-alive not due). A walk would find every
// cell in view in sync and unchanged, nothing to forget (a frame written
// whole leaves nothing to forget again) and no map to send. Views with
// line of sight always walk: what they see of a cell in part is not
// covered by this reasoning, and an arena is seldom at rest.
func (s *System) unchanged(v *View, ackSeq uint32) bool {
	// After Round, nothing is touched: Rests holds the view's own
	// conditions (no line of sight, the map, the session, the last frame).
	return s.Rests(v) && s.changedRnd <= v.walked && ackSeq == v.sent().ack && s.a.Tick < s.KeepAliveAt(v)
}

// entrantsFromOutside reports whether some of hash cell hc's entrants
// came from a cell out of the view of a client in step (inStep), which
// must then get them whole.
func (s *System) entrantsFromOutside(v *View, hc int32) bool {
	c := &s.cells[hc]
	for _, o := range s.origins[c.entrFrom : c.entrFrom+c.entrN] {
		if v.mark[o] != v.marked {
			return true
		}
	}
	return false
}

// needsEntrants reports whether the client must get hash cell hc's
// entrants whole: some came from a cell it does not get this round's
// records of (out of view, or sent whole).
func (s *System) needsEntrants(v *View, hc int32) bool {
	c := &s.cells[hc]
	for _, o := range s.origins[c.entrFrom : c.entrFrom+c.entrN] {
		if v.mark[o] != s.rnd || !v.delta[o] {
			return true
		}
	}
	return false
}
