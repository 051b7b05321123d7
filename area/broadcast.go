package area

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/fov"
	"github.com/leyworks/ley/systems/spatial"
)

// peerView is what one peer holds, as the broadcaster knows it: for each hash
// cell the round as of which its view of the cell is current (0: not held;
// unknown: the frame that carried it may not have arrived), and the static
// map version it was sent. Owned by the goroutine of the Area the peer is
// bound to.
type peerView struct {
	seen      []uint64 // per hash cell: the round its view is current as of
	mark      []uint64 // per hash cell: the last round it was within interest
	staticVer []uint32 // per hash cell: the static version sent (0: none)
	inflight  []int32  // cells whose records the last frame carried
	forgot    []int32  // cells the last frame forgot (forgotten again if it never arrived)
	forgotNow []int32  // this frame's
	round     uint64   // the round of the last frame
	written   atomic.Uint64
	fresh     bool    // the next frame resets the client's view
	cells     []int32 // this round's cells within radius
	prev      []int32 // last round's
	delta     []bool  // per hash cell, this frame: sent as a delta (not whole)
	partial   []bool  // per hash cell, this frame: in sight only in part (line of sight)
	held      []bool  // per hash cell: the client holds what it saw of it, not all of it
	los       losView // line of sight: the last field of view
}

// unknown marks a cell whose content on the client is not known (the frame
// that carried it may not have arrived): sent whole if in view, forgotten
// if not.
const unknown = ^uint64(0)

// reset forgets everything the peer was sent (a new binding): its next
// frame resets the client's view and sends every cell in view whole.
func (v *peerView) reset() {
	clear(v.seen)
	clear(v.mark)
	clear(v.staticVer)
	v.inflight = v.inflight[:0]
	v.forgot = v.forgot[:0]
	v.cells = v.cells[:0]
	v.round = 0
	v.fresh = true
	v.los.at = ecs.NoCell
	clear(v.held)
}

// last is an entity as the peers in sync were last told of it.
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
)

// rec is one record of this round, encoded into the round's scratch.
type rec struct {
	cell     int32
	part     part
	off, len int32
	from     int32 // for an entrant: its origin cell
	next     int32 // the next record of the same cell and part, or -1
}

// broadcaster builds each round's snapshot frames for an Area. It is the
// Area's body index (ecs.BodyIndex): every spawn, move, despawn and change
// of state marks the entity touched as it happens. Once per round it turns
// the touched entities into records, each encoded once into the round's
// shared arena and grouped by hash cell: relative records (a step, a
// position, gone, a change of state) under the cell the entity stood in,
// whole entities under the cell they stand in now (spawns, and entrants
// from other cells). A peer in sync with a cell gets the cell's records; a
// peer that holds a cell it is not in sync with (or not at all) gets the
// cell whole; a cell that left its view is forgotten. Each peer's frame is
// its own header plus slices of the arena, written by the gate with writev;
// relative records come first, whole entities after, so that applying the
// records in order is always right.
//
// A frame that was replaced before being written (a slow reader) lost its
// records: the cells it carried are sent whole in the peer's next frame.
type broadcaster struct {
	ha     *hostArea
	hash   *spatial.Hash
	radius int32
	rnd    uint64 // the current round

	last     []last   // per entity ID
	touchRnd []uint64 // per entity ID: the round it was last touched in (+1 for the next)
	touched  []int32  // IDs touched since the last round

	changed   []uint64 // per hash cell: the round its content last changed
	relOff    []int32  // per hash cell: this round's relative records in the arena
	relLen    []int32
	absOff    []int32 // per hash cell: this round's whole entities (spawns, then entrants)
	spawnLen  []int32
	absLen    []int32
	entrFrom  []int32 // per hash cell: offset in origins of its entrants' origin cells
	entrN     []int32
	origins   []int32
	fullRnd   []uint64 // per hash cell: the round its whole form was encoded in
	fullOff   []int32
	fullLen   []int32
	forgetRnd []uint64
	forgetOff []int32
	forgetLen []int32
	staticVer []uint32 // per hash cell: the version of its map

	// Line of sight (los.go), in Areas whose rules ask for it.
	los      bool
	caster   *fov.Caster
	fov      *fov.View
	sightVer uint64   // bumped whenever the sight layer changes (a door)
	words    int      // uint64 words of a hash cell's square mask
	fullMask []uint64 // per hash cell: the mask of its squares on the grid
	cellsBuf []int32

	recs     []rec    // this round's records
	scratch  []byte   // this round's records as first encoded
	listHead []int32  // per (hash cell, part): first record, or -1
	listTail []int32  // per (hash cell, part): last record
	cellsNow []int32  // hash cells with records this round
	cellMark []uint64 // per hash cell: the round it joined cellsNow

	pos      ecs.Map[ecs.Position]
	player   ecs.Map[ecs.Player]
	creature ecs.Map[ecs.Creature]
	health   ecs.Map[ecs.Health]
	body     ecs.Map[ecs.Body]
	transit  ecs.Map[ecs.Transit]

	mu   sync.Mutex // guards free: OnFree runs on event loops
	free []*gate.Shared

	// deliver hands a peer its frame, static sends it a cell's map: the
	// gate's SendVolatile and the host's sendStatic unless a benchmark
	// stands in for the sockets.
	deliver func(p *peer, f *gate.Frame)
	static  func(p *peer, hc int32, ver uint32)
}

func (bc *broadcaster) init(ha *hostArea, h *spatial.Hash) error {
	bc.ha, bc.hash = ha, h
	bc.radius = int32(ha.h.cfg.InterestRadius)
	if bc.radius == 0 {
		bc.radius = -1 // everything
	}
	n := h.Cells()
	bc.changed = make([]uint64, n)
	bc.relOff, bc.relLen = make([]int32, n), make([]int32, n)
	bc.absOff, bc.spawnLen, bc.absLen = make([]int32, n), make([]int32, n), make([]int32, n)
	bc.entrFrom, bc.entrN = make([]int32, n), make([]int32, n)
	bc.fullRnd, bc.fullOff, bc.fullLen = make([]uint64, n), make([]int32, n), make([]int32, n)
	bc.forgetRnd, bc.forgetOff, bc.forgetLen = make([]uint64, n), make([]int32, n), make([]int32, n)
	bc.listHead, bc.listTail = make([]int32, 3*n), make([]int32, 3*n)
	for i := range bc.listHead {
		bc.listHead[i] = -1
	}
	bc.cellMark = make([]uint64, n)
	bc.staticVer = make([]uint32, n)
	for i := range bc.staticVer {
		bc.staticVer[i] = 1
	}
	w := &ha.a.World
	bc.pos = ecs.NewMap[ecs.Position](w)
	bc.player = ecs.NewMap[ecs.Player](w)
	bc.creature = ecs.NewMap[ecs.Creature](w)
	bc.health = ecs.NewMap[ecs.Health](w)
	bc.body = ecs.NewMap[ecs.Body](w)
	bc.transit = ecs.NewMap[ecs.Transit](w)
	bc.deliver = func(p *peer, f *gate.Frame) {
		ha.h.framesOut.Add(1)
		ha.h.bytesOut.Add(uint64(f.Len()))
		p.conn.SendVolatile(f)
	}
	bc.static = ha.sendStatic
	if ha.a.Rules.LineOfSight {
		if err := bc.initLOS(); err != nil {
			return err
		}
	}
	ha.a.AddIndex(bc)
	return nil
}

// Insert implements ecs.BodyIndex.
func (bc *broadcaster) Insert(e ecs.Entity, _ ecs.Cell) { bc.touch(e) }

// Move implements ecs.BodyIndex.
func (bc *broadcaster) Move(e ecs.Entity, _ ecs.Cell) { bc.touch(e) }

// Remove implements ecs.BodyIndex.
func (bc *broadcaster) Remove(e ecs.Entity) { bc.touch(e) }

// Changed implements ecs.BodyIndex.
func (bc *broadcaster) Changed(e ecs.Entity) { bc.touch(e) }

// touch marks entity e's ID for this round's records. O(1); it allocates
// only when e's ID is the largest yet.
func (bc *broadcaster) touch(e ecs.Entity) {
	id := int(e.ID())
	for id >= len(bc.touchRnd) {
		bc.touchRnd = append(bc.touchRnd, 0)
		bc.last = append(bc.last, last{cell: -1})
	}
	if bc.touchRnd[id] == bc.rnd+1 {
		return
	}
	bc.touchRnd[id] = bc.rnd + 1
	bc.touched = append(bc.touched, int32(id))
}

// newView sizes a peer's view for this Area.
func (bc *broadcaster) newView(v *peerView) {
	n := bc.hash.Cells()
	if len(v.seen) != n {
		v.seen = make([]uint64, n)
		v.mark = make([]uint64, n)
		v.staticVer = make([]uint32, n)
		v.delta = make([]bool, n)
		v.partial = make([]bool, n)
		v.held = make([]bool, n)
	}
	v.reset()
}

func (bc *broadcaster) getShared() *gate.Shared {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if n := len(bc.free); n > 0 {
		s := bc.free[n-1]
		bc.free = bc.free[:n-1]
		s.Rearm()
		return s
	}
	s := gate.NewShared(bc.recycle)
	s.Bufs = [][]byte{make([]byte, 0, 4096)}
	return s
}

// recycle takes a Shared back once no frame references it (any goroutine).
func (bc *broadcaster) recycle(s *gate.Shared) {
	bc.mu.Lock()
	bc.free = append(bc.free, s)
	bc.mu.Unlock()
}

// staticChanged bumps hash cell hc's map version: every peer that holds
// the cell gets its map again before the next snapshot that shows it.
func (bc *broadcaster) staticChanged(hc int32) {
	bc.staticVer[hc]++
	bc.sightVer++ // a door: what everyone sees may have changed
}

// state reads entity e's state as clients are shown it; e is alive (the
// hash holds only live entities). A body that is neither a player nor a
// creature (a wanderer) is shown as a creature of no listed kind.
func (bc *broadcaster) state(e ecs.Entity, sq ecs.Cell) wire.EntityState {
	x, y := bc.ha.a.Grid.XY(sq)
	st := wire.EntityState{ID: e.ID(), Kind: wire.KindCreature, X: x, Y: y}
	if bc.player.Has(e) {
		st.Kind = wire.KindPlayer
		if r := bc.ha.route(e); r != nil && r.peer == nil {
			st.Flags |= wire.FlagAway
		}
	} else if c := bc.creature.Get(e); c != nil {
		st.Look = c.Kind
	}
	if h := bc.health.Get(e); h != nil {
		st.HP = h.HP
	}
	if b := bc.body.Get(e); b != nil {
		st.Facing = wire.Dir(b.Facing)
	}
	if bc.transit.Has(e) {
		st.Flags |= wire.FlagTransit
	}
	return st
}

// send runs this round: the records of what changed since the last round,
// then every bound peer's frame.
func (bc *broadcaster) send() {
	bc.rnd++
	ha := bc.ha
	if ha.bound == 0 {
		bc.diff(nil) // no frame to build: only keep what peers would be told in step
		return
	}
	sh := bc.getShared()
	arena := bc.diff(sh.Bufs[0][:0])
	// Frames point into the arena; if it grows mid-round, the slices already
	// handed out keep the old array alive and valid. It settles at the
	// size a round needs, after which rounds allocate nothing.
	for _, b := range ha.order {
		if p := b.peer; p != nil {
			arena = bc.build(p, b, sh, arena)
		}
	}
	sh.Bufs[0] = arena
	sh.Release()
}

// diff turns the entities touched since the last round into this round's
// records, appended to arena grouped by cell (relative records by origin
// cell; whole entities by cell, spawns before entrants), and brings last
// up to date. With a nil arena it only brings last up to date.
func (bc *broadcaster) diff(arena []byte) []byte {
	encode := arena != nil
	bc.recs = bc.recs[:0]
	bc.scratch = bc.scratch[:0]
	rnd := bc.rnd
	for _, id := range bc.touched {
		bc.touchRnd[id] = rnd // touches from now on count for the next round
		l := &bc.last[id]
		var cur ecs.Entity
		var st wire.EntityState
		cell := int32(-1)
		if bc.hash.HasID(id) {
			cur = bc.hash.Entity(id)
			sq := bc.hash.Square(id)
			st = bc.state(cur, sq)
			cell = bc.hash.CellOf(sq)
		}
		switch {
		case l.e != (ecs.Entity{}) && cur == l.e: // the same entity, here before
			if st == l.st {
				break
			}
			bc.changed[l.cell] = rnd
			bc.changed[cell] = rnd
			if encode {
				bc.relRecord(l, &st)
				if cell != l.cell {
					bc.addRec(cell, partEntr, l.cell, func(b []byte) []byte { return wire.AppendEnter(b, &st) })
				}
			}
		default:
			if l.e != (ecs.Entity{}) { // gone (or its ID reused)
				bc.changed[l.cell] = rnd
				if encode {
					bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendGone(b, uint32(id)) })
				}
			}
			if cur != (ecs.Entity{}) { // new to the world
				bc.changed[cell] = rnd
				if encode {
					bc.addRec(cell, partSpawn, -1, func(b []byte) []byte { return wire.AppendEnter(b, &st) })
				}
			}
		}
		*l = last{e: cur, st: st, cell: cell}
	}
	bc.touched = bc.touched[:0]
	if !encode {
		return arena
	}
	return bc.group(arena)
}

// relRecord adds the relative record that takes a peer from l to st.
func (bc *broadcaster) relRecord(l *last, st *wire.EntityState) {
	dx, dy := st.X-l.st.X, st.Y-l.st.Y
	id := st.ID
	moved := dx != 0 || dy != 0
	step := moved && max(dx, -dx, dy, -dy) == 1
	switch {
	case step:
		d := wire.Dir(ecs.DirOf(dx, dy, 0))
		bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendStep(b, id, d) })
		if st.Facing != d || st.HP != l.st.HP || st.Flags != l.st.Flags {
			bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
		}
	case moved:
		bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendPos(b, id, st.X, st.Y) })
		if st.Facing != l.st.Facing || st.HP != l.st.HP || st.Flags != l.st.Flags {
			bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
		}
	default:
		bc.addRec(l.cell, partRel, -1, func(b []byte) []byte { return wire.AppendState(b, id, st.HP, st.Flags, st.Facing) })
	}
}

// addRec encodes one record into the round's scratch. The closures do not
// escape (enc is called at once), so they allocate nothing.
func (bc *broadcaster) addRec(cell int32, p part, from int32, enc func([]byte) []byte) {
	off := len(bc.scratch)
	bc.scratch = enc(bc.scratch)
	bc.recs = append(bc.recs, rec{cell: cell, part: p, off: int32(off), len: int32(len(bc.scratch) - off), from: from})
}

// group copies this round's records into arena, contiguous per cell and
// part (relative records; then spawns and entrants, adjacent), and records
// where each cell's records and its entrants' origin cells are. It threads
// a list per (cell, part) through the records: O(records), no sort.
func (bc *broadcaster) group(arena []byte) []byte {
	bc.cellsNow = bc.cellsNow[:0]
	for i := range bc.recs {
		r := &bc.recs[i]
		r.next = -1
		k := int(r.cell)*3 + int(r.part)
		if bc.listHead[k] < 0 {
			bc.listHead[k] = int32(i)
		} else {
			bc.recs[bc.listTail[k]].next = int32(i)
		}
		bc.listTail[k] = int32(i)
		if bc.cellMark[r.cell] != bc.rnd {
			bc.cellMark[r.cell] = bc.rnd
			bc.cellsNow = append(bc.cellsNow, r.cell)
		}
	}
	bc.origins = bc.origins[:0]
	for _, c := range bc.cellsNow {
		k := int(c) * 3
		bc.relOff[c] = int32(len(arena))
		arena = bc.emit(arena, k+int(partRel), false)
		bc.relLen[c] = int32(len(arena)) - bc.relOff[c]
		bc.absOff[c] = int32(len(arena))
		arena = bc.emit(arena, k+int(partSpawn), false)
		bc.spawnLen[c] = int32(len(arena)) - bc.absOff[c]
		bc.entrFrom[c] = int32(len(bc.origins))
		arena = bc.emit(arena, k+int(partEntr), true)
		bc.absLen[c] = int32(len(arena)) - bc.absOff[c]
		bc.entrN[c] = int32(len(bc.origins)) - bc.entrFrom[c]
	}
	return arena
}

// emit appends list k's records to arena, in the order they were made,
// and empties the list; for entrants it notes their origin cells.
func (bc *broadcaster) emit(arena []byte, k int, origins bool) []byte {
	for i := bc.listHead[k]; i >= 0; i = bc.recs[i].next {
		r := &bc.recs[i]
		arena = append(arena, bc.scratch[r.off:r.off+r.len]...)
		if origins {
			first := bc.entrFrom[r.cell]
			if !slices.Contains(bc.origins[first:], r.from) {
				bc.origins = append(bc.origins, r.from)
			}
		}
	}
	bc.listHead[k] = -1
	return arena
}

// whole returns hash cell hc's whole form for this round (a cell record of
// everything in it), encoding it into the arena the first time it is
// needed.
func (bc *broadcaster) whole(hc int32, arena []byte) ([]byte, []byte) {
	if bc.fullRnd[hc] == bc.rnd {
		off, end := bc.fullOff[hc], bc.fullOff[hc]+bc.fullLen[hc]
		return arena[off:end:end], arena
	}
	off := len(arena)
	arena = wire.AppendCell(arena, uint32(hc), bc.hash.Count(hc))
	for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
		st := bc.last[id].st // brought up to date by this round's diff
		arena = wire.AppendEntity(arena, &st)
	}
	bc.fullRnd[hc], bc.fullOff[hc], bc.fullLen[hc] = bc.rnd, int32(off), int32(len(arena)-off)
	return arena[off:len(arena):len(arena)], arena
}

// forget returns the record that makes a client forget hash cell hc.
func (bc *broadcaster) forget(hc int32, arena []byte) ([]byte, []byte) {
	if bc.forgetRnd[hc] == bc.rnd {
		off, end := bc.forgetOff[hc], bc.forgetOff[hc]+bc.forgetLen[hc]
		return arena[off:end:end], arena
	}
	off := len(arena)
	arena = wire.AppendForget(arena, uint32(hc))
	bc.forgetRnd[hc], bc.forgetOff[hc], bc.forgetLen[hc] = bc.rnd, int32(off), int32(len(arena)-off)
	return arena[off:len(arena):len(arena)], arena
}

// build builds and sends p's frame for this round.
func (bc *broadcaster) build(p *peer, b *body, sh *gate.Shared, arena []byte) []byte {
	v := &p.view
	if len(v.seen) != bc.hash.Cells() {
		bc.newView(v)
	}
	rnd := bc.rnd
	if v.round != 0 && v.written.Load() != v.round {
		// The last frame may never arrive: what the client holds of the
		// cells it carried is unknown (sent whole if in view, forgotten if
		// not).
		for _, hc := range v.inflight {
			v.seen[hc] = unknown
		}
	}
	pos := bc.pos.Get(b.entity)
	if pos == nil {
		return arena
	}
	v.prev, v.cells = v.cells, v.prev
	if bc.los {
		bc.sightCells(v, pos.X, pos.Y)
	} else {
		v.cells = bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, v.cells[:0])
	}
	for i, hc := range v.cells {
		v.mark[hc] = rnd
		v.partial[hc] = bc.los && !bc.wholeInSight(hc, bc.sightMask(v, i))
		s := v.seen[hc]
		v.delta[hc] = !v.partial[hc] && !v.held[hc] && s != 0 && s != unknown && (bc.changed[hc] <= s || (bc.changed[hc] == rnd && s == rnd-1))
		if v.staticVer[hc] != bc.staticVer[hc] {
			bc.static(p, hc, bc.staticVer[hc])
			v.staticVer[hc] = bc.staticVer[hc]
		}
	}
	f := gate.NewFrame()
	f.Parts = append(f.Parts, nil) // the header, filled last
	f.Buf = f.Buf[:0]              // this peer's own records (line of sight), then its header
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
		if v.delta[hc] && bc.changed[hc] == rnd {
			add(arena[bc.relOff[hc] : bc.relOff[hc]+bc.relLen[hc] : bc.relOff[hc]+bc.relLen[hc]])
		}
	}
	// Whole entities: each cell out of sync whole; each cell in sync with
	// its spawns, and its entrants unless the client gets every one of
	// them by a step from an origin cell it is in sync with. A cell in
	// sight only in part: what the peer sees of it, encoded for it alone,
	// and never in sync (whole again next round, or forgotten).
	seenAt := -1
	for i, hc := range v.cells {
		switch {
		case v.partial[hc]:
			// What it saw of the cell is still what it holds if it got it,
			// the cell has not changed since and its sight was not cast
			// again since.
			if s := v.seen[hc]; v.held[hc] && s != unknown && s >= bc.changed[hc] && s >= v.los.castRnd {
				continue
			}
			if seenAt < 0 {
				f.Parts = append(f.Parts, nil) // f.Buf's records, set below
				seenAt = len(f.Parts) - 1
			}
			f.Buf = bc.appendSeen(f.Buf, hc, bc.sightMask(v, i))
			v.inflight = append(v.inflight, hc)
			v.seen[hc], v.held[hc] = rnd, true
			continue
		case !v.delta[hc]:
			var whole []byte
			whole, arena = bc.whole(hc, arena)
			add(whole)
			v.inflight = append(v.inflight, hc)
			v.held[hc] = false
		case bc.changed[hc] == rnd:
			end := bc.absOff[hc] + bc.spawnLen[hc]
			if bc.needsEntrants(v, hc) {
				end = bc.absOff[hc] + bc.absLen[hc]
			}
			add(arena[bc.absOff[hc]:end:end])
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
			fg, arena = bc.forget(hc, arena)
			add(fg)
			v.inflight = append(v.inflight, hc)
			v.seen[hc], v.held[hc] = 0, false
			v.forgotNow = append(v.forgotNow, hc)
		}
	}
	v.forgot, v.forgotNow = v.forgotNow, v.forgot
	var flags wire.SnapshotFlags
	if v.fresh {
		flags |= wire.SnapshotReset
		v.fresh = false
	}
	var ack uint32
	if pl := bc.player.Get(b.entity); pl != nil {
		ack = pl.AckSeq
	}
	own := len(f.Buf)
	n += own
	f.Buf = wire.AppendSnapshotHeader(f.Buf, bc.ha.a.Tick, ack, flags, n)
	f.Parts[0] = f.Buf[own:]
	if seenAt >= 0 {
		f.Parts[seenAt] = f.Buf[:own:own]
	}
	f.Attach(sh)
	f.Delivered, f.Round = &v.written, rnd
	v.round = rnd
	bc.deliver(p, f)
	return arena
}

// needsEntrants reports whether the client must get hash cell hc's
// entrants whole: some came from a cell it does not get this round's
// records of (out of view, or sent whole).
func (bc *broadcaster) needsEntrants(v *peerView, hc int32) bool {
	for _, o := range bc.origins[bc.entrFrom[hc] : bc.entrFrom[hc]+bc.entrN[hc]] {
		if v.mark[o] != bc.rnd || !v.delta[o] {
			return true
		}
	}
	return false
}
