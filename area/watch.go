package area

import (
	"bytes"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/flowfield"
)

// tellSpectators sends every spectator the Area's presence list msg when
// it changed (or it has not had it). Area goroutine.
func (ha *hostArea) tellSpectators(msg []byte, changed bool) {
	for _, sp := range ha.watchers.list {
		if changed || !sp.hasPresence {
			sp.hasPresence = true
			sp.p.sent(len(msg))
			_ = sp.p.conn.Send(msg)
		}
	}
}

// spectated reports whether the Area has spectators to send rounds to.
func (ha *hostArea) spectated() bool { return len(ha.watchers.list) > 0 }

// spectatorFrames sends this round's frame to every spectator: the whole
// Area's records (appended to the round's arena once, shared by all who
// watch the whole Area), or the frame of the player watched. It returns
// the arena, which may have grown. Area goroutine, in sendSnapshots.
func (ha *hostArea) spectatorFrames(arena []byte, sh *gate.Shared) []byte {
	w := &ha.watchers
	if len(w.list) == 0 {
		return arena
	}
	tick := ha.a.Tick
	encoded := false
	for _, sp := range w.list {
		if sp.watch != (ecs.Entity{}) {
			var ok bool
			if arena, ok = ha.povFrame(sp, arena, sh); ok {
				continue
			}
			// The player watched is gone: back to the whole Area.
			sp.watch, sp.needReset = ecs.Entity{}, true
			sp.p.sendError(wire.CodeEntityGone, 0, 0, "the player watched left the area; watching the whole area")
		}
		if sp.resetAt != 0 {
			if sp.written.Load() >= sp.resetAt {
				sp.resetAt = 0
			} else {
				sp.needReset = true // the frame that reset it was never written
			}
		}
		if !encoded {
			arena, encoded = ha.encodeCells(arena, tick), true
		}
		ha.spectatorStatics(sp)
		ha.wholeFrame(sp, arena, sh, tick)
		ha.sendFlow(sp)
	}
	return arena
}

// povFrame sends sp the frame of the player it watches, as that player's
// session gets it (its own view of the interest rounds); it reports false,
// sending nothing, when that player's body is gone.
func (ha *hostArea) povFrame(sp *spectator, arena []byte, sh *gate.Shared) ([]byte, bool) {
	if !ha.hasBody(sp.watch) {
		return arena, false
	}
	if sp.resetAt != 0 {
		if sp.view.Written.Load() >= sp.resetAt {
			sp.resetAt = 0
		} else {
			sp.needReset = true // the frame that reset it was never written
		}
	}
	if sp.needReset {
		sp.view.Reset() // its next frame has the reset flag, every cell whole
	}
	out := &ha.snaps.frame
	f, arena := ha.build(&sp.view, sp.watch, 0, arena)
	if f == nil {
		return arena, out.Quiet // quiet: nothing new this round
	}
	if sp.needReset {
		sp.needReset, sp.resetAt = false, out.Round
	}
	for _, hc := range out.Statics {
		ha.sendStatic(sp.p, hc)
	}
	f.Attach(sh)
	f.Delivered, f.Round = &sp.view.Written, out.Round
	ha.h.framesOut.Add(1)
	ha.h.bytesOut.Add(uint64(out.Len))
	sp.p.conn.SendVolatile(f)
	return arena, true
}

// sendWhole sends sp the maps it lacks and a snapshot of the whole Area
// with the reset flag, reliably. Area goroutine.
func (ha *hostArea) sendWhole(sp *spectator) {
	ha.spectatorStatics(sp)
	w := &ha.watchers
	w.whole = ha.appendWhole(w.whole[:0])
	msg := wire.AppendSnapshotHeader(make([]byte, 0, wire.MaxSnapshotHeaderSize+len(w.whole)), ha.a.Tick, 0, wire.SnapshotReset, len(w.whole))
	msg = append(msg, w.whole...)
	sp.p.sent(len(msg))
	_ = sp.p.conn.Send(msg)
	sp.needReset = false
	sp.resetAt = 0
	sp.written.Store(ha.a.Tick) // reliable: it reaches the client unless the connection ends
}

// sendFlow sends sp the flow field of the creature it watches, if it
// changed since the last one sent: the field of the body the creature
// hunts, over the window of the creatures' reach (at most MaxFlowSide a
// side) around that body. It is swept again only when the target, its
// square or the map (its generation: a door, a placement) changed. The window is swept whole and squares past the
// reach are unreached, which is the field the creatures' registry keeps:
// a walk that costs no more than the reach steps at most that many
// squares from the target, so it never leaves the window. It costs at
// most one sweep of the window a round (at most 256 x 256 squares), for
// each spectator watching a creature (at most MaxSpectatorsPerArea).
func (ha *hostArea) sendFlow(sp *spectator) {
	if sp.flowOf == (ecs.Entity{}) {
		return
	}
	w := &ha.watchers
	e, c := ha.creature(sp.flowOf.ID())
	if e != sp.flowOf {
		sp.flowOf, sp.flowSent = ecs.Entity{}, sp.flowSent[:0]
		sp.p.sendError(wire.CodeEntityGone, 0, 0, "the creature watched left the world; watching the whole area")
		return
	}
	msg := wire.Flow{Creature: e.ID(), Dirs: []byte{}}
	hs := ha.interest.Hash()
	key := flowKey{gen: ha.eng.Map.Generation()}
	if t := c.Target; t != (ecs.Entity{}) && hs.Has(t) {
		key.target, key.square = t, hs.Square(int32(t.ID()))
	}
	if len(sp.flowSent) > 0 && key == sp.flowKey {
		return // the field sent is still the one
	}
	if t := key.target; t != (ecs.Entity{}) && ha.eng.Creatures != nil {
		g := ha.a.Grid
		reach := ha.eng.Creatures.Config.FieldReach
		r := min(reach, wire.MaxFlowSide/2-1)
		tx, ty := g.XY(key.square)
		x0, y0 := max(tx-r, 0), max(ty-r, 0)
		x1, y1 := min(tx+r, g.W()-1), min(ty+r, g.H()-1)
		ww, wh := x1-x0+1, y1-y0+1
		layer := g.Layer(ecs.LayerFloor)
		w.flowFloor = w.flowFloor[:0]
		for y := y0; y <= y1; y++ {
			row := int32(g.Cell(x0, y))
			w.flowFloor = append(w.flowFloor, layer[row:row+ww]...)
		}
		if f := w.flowField; f == nil || f.W != ww || f.H != wh {
			w.flowField = flowfield.NewField(int(ww), int(wh))
		}
		f := w.flowField
		target := (ty-y0)*ww + (tx - x0)
		if err := f.Sweep(w.flowFloor, target, ha.a.Rules.Diagonal); err != nil {
			ha.h.log.Error("flow field for a spectator", "area", ha.id, "err", err)
			return
		}
		w.flowDirs = w.flowDirs[:0]
		for i, d := range f.Dist {
			switch {
			case int32(i) == target:
				w.flowDirs = append(w.flowDirs, wire.FlowTarget)
			case d == flowfield.Unreached || (reach > 0 && d > reach) || f.Dir[i] == flowfield.NoDir:
				w.flowDirs = append(w.flowDirs, wire.FlowUnreached)
			default:
				w.flowDirs = append(w.flowDirs, f.Dir[i])
			}
		}
		msg.Target, msg.X, msg.Y, msg.W, msg.H, msg.Dirs = t.ID(), x0, y0, uint16(ww), uint16(wh), w.flowDirs
	}
	b, err := wire.Encode(&msg)
	if err != nil {
		ha.h.log.Error("encode a flow for a spectator", "area", ha.id, "err", err)
		return
	}
	sp.flowKey = key
	if bytes.Equal(b, sp.flowSent) {
		return
	}
	sp.flowSent = append(sp.flowSent[:0], b...)
	sp.p.sent(len(b))
	_ = sp.p.conn.Send(b)
}

// spectatorStatics sends sp the map of every hash cell whose version it
// was not sent (all of them at first).
func (ha *hostArea) spectatorStatics(sp *spectator) {
	versions := ha.eng.Map.Versions()
	if len(sp.staticVer) != len(versions) {
		sp.staticVer = make([]uint32, len(versions))
	}
	for hc, v := range versions {
		if sp.staticVer[hc] != v {
			ha.sendStatic(sp.p, int32(hc))
			sp.staticVer[hc] = v
		}
	}
}

// watch takes a spectator's choice (wire.Watch): entity 0, the whole
// Area; a player's entity, that player's point of view; a creature's, the
// whole Area and the creature's flow field. An entity that is neither in
// the Area is refused ENTITY_GONE and the choice stays. Area goroutine.
func (ha *hostArea) watch(sp *spectator, id uint32) {
	if sp.p.spec.Load() != sp {
		return // it closed meanwhile
	}
	for _, b := range ha.order {
		if id != 0 && b.entity.ID() == id {
			sp.flowOf, sp.flowSent = ecs.Entity{}, sp.flowSent[:0]
			if sp.watch != b.entity {
				sp.watch, sp.needReset, sp.resetAt = b.entity, true, 0
			}
			return
		}
	}
	var flowOf ecs.Entity
	if id != 0 {
		if flowOf, _ = ha.creature(id); flowOf == (ecs.Entity{}) {
			sp.p.sendError(wire.CodeEntityGone, 0, 0, "no player or creature with that entity in this area")
			return
		}
	}
	// The whole Area, and the creature's flow field if one is named.
	if sp.flowOf != flowOf {
		sp.flowOf, sp.flowSent = flowOf, sp.flowSent[:0]
	}
	if sp.watch == (ecs.Entity{}) {
		return
	}
	sp.watch = ecs.Entity{}
	clear(sp.staticVer) // its view was reset: every map again
	if ha.a.Mode() == ecs.Frozen {
		ha.sendWhole(sp) // no round comes
		return
	}
	sp.needReset, sp.resetAt = true, 0
}

// endSpectators tells every spectator the Area is gone (area_closing,
// grace 0), closes their connections (1001) and drops the pending
// spectator grants: the Area is leaving the host. Area goroutine.
func (ha *hostArea) endSpectators() {
	w := &ha.watchers
	for _, sp := range w.list {
		sp.p.spec.Store(nil)
		sp.p.send(&wire.AreaClosing{Reason: wire.CodeAreaClosing})
		sp.p.conn.Close(gate.CloseGoingAway, "area closed")
		ha.h.spectators.Add(-1)
	}
	w.list = nil
	w.fresh = true
	for tok := range w.grants {
		ha.h.dropIndex(ha.h.grants, tok)
	}
	clear(w.grants)
}

// appendWhole appends the records of the whole Area to dst: a cell record
// of every hash cell, entities as clients are shown them.
func (ha *hostArea) appendWhole(dst []byte) []byte {
	for hc := range int32(ha.interest.Hash().Cells()) {
		dst = ha.appendCell(dst, hc)
	}
	return dst
}

// creature returns the creature whose entity id is id, if one stands in
// the Area, with its component.
func (ha *hostArea) creature(id uint32) (ecs.Entity, *ecs.Creature) {
	w := &ha.watchers
	if w.creatures == nil {
		m := ecs.NewMap[ecs.Creature](&ha.a.World)
		w.creatures = &m
	}
	hs := ha.interest.Hash()
	if id == 0 || !hs.HasID(int32(id)) {
		return ecs.Entity{}, nil
	}
	e := hs.Entity(int32(id))
	if c := w.creatures.Get(e); c != nil {
		return e, c
	}
	return ecs.Entity{}, nil
}

// encodeCells appends this round's record of every cell to arena (noting
// where in w.cur) and marks the cells whose record differs from the last
// round's changed at tick. It returns the arena. Once per round watched.
func (ha *hostArea) encodeCells(arena []byte, tick uint64) []byte {
	w := &ha.watchers
	n := ha.interest.Hash().Cells()
	if len(w.changed) != n {
		w.span, w.cur, w.changed = make([]cellSpan, n), make([]cellSpan, n), make([]uint64, n)
		w.prev, w.fresh = w.prev[:0], true
	}
	w.next = w.next[:0]
	for hc := range int32(n) {
		off := len(arena)
		arena = ha.appendCell(arena, hc)
		rec := arena[off:]
		p := w.span[hc]
		if w.fresh || !bytes.Equal(rec, w.prev[p.off:p.off+p.len]) {
			w.changed[hc] = tick
		}
		w.cur[hc] = cellSpan{int32(off), int32(len(rec))}
		w.span[hc] = cellSpan{int32(len(w.next)), int32(len(rec))}
		w.next = append(w.next, rec...)
	}
	w.prev, w.next = w.next, w.prev
	w.fresh = false
	return arena
}

// hasBody reports whether e is the body of a player in the Area.
func (ha *hostArea) hasBody(e ecs.Entity) bool {
	for _, b := range ha.order {
		if b.entity == e {
			return true
		}
	}
	return false
}

// wholeFrame sends sp its snapshot of the whole Area this round (after
// encodeCells): every cell after a reset, else the cells that changed
// since its last snapshot written whole. The records are copied into the
// frame's own buffer, but for a reset's, which point into the arena.
func (ha *hostArea) wholeFrame(sp *spectator, arena []byte, sh *gate.Shared, tick uint64) {
	w := &ha.watchers
	var flags wire.SnapshotFlags
	since := sp.written.Load()
	if sp.needReset {
		flags, since = wire.SnapshotReset, 0
		sp.needReset, sp.resetAt = false, tick
	}
	f := gate.NewFrame()
	if since == 0 {
		first, last := w.cur[0], w.cur[len(w.cur)-1]
		from, to := first.off, last.off+last.len
		f.Buf = wire.AppendSnapshotHeader(f.Buf[:0], tick, 0, flags, int(to-from))
		f.Parts = append(f.Parts[:0], f.Buf, arena[from:to:to])
	} else {
		n := 0
		for hc, at := range w.changed {
			if at > since {
				n += int(w.cur[hc].len)
			}
		}
		f.Buf = wire.AppendSnapshotHeader(f.Buf[:0], tick, 0, flags, n)
		for hc, at := range w.changed {
			if at > since {
				c := w.cur[hc]
				f.Buf = append(f.Buf, arena[c.off:c.off+c.len]...)
			}
		}
		f.Parts = append(f.Parts[:0], f.Buf)
	}
	f.Attach(sh)
	f.Delivered, f.Round = &sp.written, tick
	n := 0
	for _, part := range f.Parts {
		n += len(part)
	}
	ha.h.framesOut.Add(1)
	ha.h.bytesOut.Add(uint64(n))
	sp.p.conn.SendVolatile(f)
}

// appendCell appends hash cell hc's record to dst: its whole content.
func (ha *hostArea) appendCell(dst []byte, hc int32) []byte {
	is := ha.interest
	hs := is.Hash()
	dst = wire.AppendCell(dst, uint32(hc), hs.Count(hc))
	for id := hs.First(hc); id >= 0; id = hs.Next(id) {
		st := is.State(hs.Entity(id), hs.Square(id))
		dst = wire.AppendEntity(dst, &st)
	}
	return dst
}
