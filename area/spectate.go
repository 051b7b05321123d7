package area

import (
	"bytes"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/interest"
)

// Spectators: the operator's console watches an Area live, read-only.
//
// The director registers a spectator grant (control.Spectate) for an
// admin; the hello that uses it binds a spectator: a peer with no body.
// It is answered hello_ack{entity 0, resume_token ""}, then area_info,
// presence and the map (static) of every cell, and a first snapshot
// (reset) of the whole Area; after that a snapshot every round. A
// spectator watches the whole Area: each round every cell of it is
// encoded once for all of the Area's spectators and compared with the
// round before, and each spectator's snapshot holds, whole, the cells
// that changed since the last of its snapshots written to its socket
// (all of them after a reset), so its bytes grow with what moves. Or,
// after watch{entity} of a player, that player's point of view: the very
// frames that player's session gets (systems/interest: its interest
// cells, its line of sight). watch{entity} of a creature adds, to the
// whole Area, the flow field that creature follows (wire.Flow): the field
// of the body it hunts, swept here over the window the creatures' reach
// covers around that body (a walk within the reach never leaves it, so
// the field is the one the creatures' registry sweeps; see sendFlow),
// sent when it changes. An intent from a spectator is answered
// intent_result{seq, SPECTATOR} and never applied; a leave ends its
// watching (left{}, then the close).
//
// A spectator never counts as a player: it is not in the Area's bound
// peers, its presence or the director's player counts, it holds no grant
// that keeps the Area awake, and an Area with only spectators freezes
// (they are sent nothing while it is frozen: nothing changes).

// The bounds on spectators: a spectator grant past either is refused, and
// so is a hello past the host's (AREA_FULL). A pending grant counts
// against its Area's bound until it is used or found expired.
const (
	// MaxSpectatorsPerArea bounds the spectators of one Area, grants
	// pending included.
	MaxSpectatorsPerArea = 4
	// MaxSpectatorsPerHost bounds the spectators bound on one host.
	MaxSpectatorsPerHost = 16
)

// spectatorGrant is a spectator grant the director registered: single
// use, expiring.
type spectatorGrant struct {
	joinID  uint64
	expires time.Time
	account uint64 // the admin's
}

// spectator is a peer watching an Area. ha and p never change; the rest
// belongs to the Area's goroutine, but for written, which the
// connection's writer sets.
type spectator struct {
	ha      *hostArea
	p       *peer
	account uint64

	// watch is the player whose point of view it is sent; the zero
	// entity: the whole Area.
	watch ecs.Entity
	// view is its interest view while it watches a player.
	view interest.View
	// staticVer is the map version of each hash cell it was sent (0:
	// none), while it watches the whole Area.
	staticVer []uint32
	// needReset: its next frame drops its view first (a new choice of
	// watch); resetAt is the round (tick, for the whole Area) of the last
	// frame that did, until one of them is written whole.
	needReset bool
	resetAt   uint64
	// written is the tick of the last whole-Area frame written whole to
	// its socket (the reliable first one counts as written): it holds
	// every cell as of then.
	written atomic.Uint64
	// hasPresence: it was sent the Area's presence list.
	hasPresence bool
	// flowOf is the creature whose flow field it is sent (the zero
	// entity: none); flowSent the last flow message sent it.
	flowOf   ecs.Entity
	flowSent []byte
	// flowKey is what the field sent was swept for: the target, its
	// square and the map's generation; a round that finds them unchanged
	// sweeps nothing.
	flowKey flowKey
}

// flowKey names what a flow field depends on.
type flowKey struct {
	target ecs.Entity
	square ecs.Cell
	gen    uint64
}

// watchers are an Area's spectators and their pending grants. Owned by
// the Area's goroutine.
type watchers struct {
	grants map[string]*spectatorGrant
	list   []*spectator
	// whole is the scratch of a whole-Area frame sent reliably (a first
	// frame).
	whole []byte
	// The cells as the last round encoded them: prev holds each cell's
	// record (at span[hc]; next is the spare buffer of the swap), changed
	// the tick of the round that found it different, cur where this
	// round's records are in the round's arena. fresh: nothing to compare
	// with (the first round watched), every cell counts as changed.
	prev, next []byte
	span, cur  []cellSpan
	changed    []uint64
	fresh      bool
	// The flow fields' scratch: the creatures' component map (made at
	// the first use), a window of the floor layer and its field.
	creatures *ecs.Map[ecs.Creature]
	flowFloor []int32
	flowField *flowfield.Field
	flowDirs  []byte
}

// cellSpan is where one cell's record is in a buffer.
type cellSpan struct{ off, len int32 }

// spectate registers a spectator grant (link reader goroutine); the Area
// answers it.
func (h *Host) spectate(m *control.Spectate) {
	ha := h.indexGrant(m.Area, m.Token)
	if ha == nil {
		return
	}
	// Taken in at once; a frozen Area stays frozen.
	ha.a.PostNow(func(*ecs.Area) { ha.addSpectatorGrant(m) })
}

// addSpectatorGrant registers m in the Area, within the bounds, and acks
// it to the director. Area goroutine.
func (ha *hostArea) addSpectatorGrant(m *control.Spectate) {
	w := &ha.watchers
	now := time.Now()
	for tok, g := range w.grants { // expired ones stop counting
		if now.After(g.expires) {
			delete(w.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
			ha.h.expire(tok)
		}
	}
	ack := &control.GrantAck{Area: ha.id, Token: m.Token}
	switch {
	case ha.unloaded:
		ack.Error = "area not on this host"
	case ha.closing != nil:
		ack.Error = "area is closing"
	case len(w.list)+len(w.grants) >= MaxSpectatorsPerArea, int(ha.h.spectators.Load()) >= MaxSpectatorsPerHost:
		ack.Error = control.ErrorSpectatorsFull
	}
	if ack.Error != "" {
		ha.h.dropIndex(ha.h.grants, m.Token)
		ha.h.link.send(ack)
		return
	}
	ttl := time.Duration(m.TTLMS) * time.Millisecond
	if ttl <= 0 || ttl > 90*time.Second {
		ttl = 90 * time.Second
	}
	if w.grants == nil {
		w.grants = make(map[string]*spectatorGrant)
	}
	w.grants[m.Token] = &spectatorGrant{joinID: m.JoinID, expires: now.Add(ttl), account: m.Account}
	ha.h.link.send(ack)
}

// spectatorHello binds p as a spectator with the grant of m, if m names
// one (reporting true: the hello is answered). Area goroutine.
func (ha *hostArea) spectatorHello(p *peer, m *wire.Hello, version uint16) bool {
	w := &ha.watchers
	g := w.grants[m.Grant]
	if g == nil {
		return false
	}
	if g.joinID != m.JoinID {
		p.sendError(wire.CodeBadGrant, 0, m.JoinID, "grant belongs to another join")
		return true
	}
	delete(w.grants, m.Grant)
	ha.h.dropIndex(ha.h.grants, m.Grant)
	switch {
	case time.Now().After(g.expires):
		ha.h.expire(m.Grant)
		p.sendError(wire.CodeGrantExpired, 0, m.JoinID, "grant expired")
		return true
	case ha.closing != nil:
		p.sendError(wire.CodeAreaClosing, 0, m.JoinID, "area is closing")
		return true
	case p.closed.Load(): // it left while its hello waited
		return true
	}
	if ha.h.spectators.Add(1) > MaxSpectatorsPerHost {
		ha.h.spectators.Add(-1)
		p.sendError(wire.CodeAreaFull, 0, m.JoinID, "this host has its maximum of spectators")
		return true
	}
	sp := &spectator{ha: ha, p: p, account: g.account}
	w.list = append(w.list, sp)
	p.version = version
	p.spec.Store(sp)
	p.send(&wire.HelloAck{JoinID: m.JoinID, Tick: ha.a.Tick, Area: ha.id, Version: version})
	p.send(ha.areaInfo())
	ha.tellPresence()
	// The first frame goes at once and reliably, whether the Area ticks
	// or is frozen (a frozen one sends no rounds).
	ha.sendWhole(sp)
	ha.h.log.Info("spectator watching", "area", ha.id, "admin", g.account, "peer", p.conn.RemoteAddr())
	return true
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

// appendWhole appends the records of the whole Area to dst: a cell record
// of every hash cell, entities as clients are shown them.
func (ha *hostArea) appendWhole(dst []byte) []byte {
	for hc := range int32(ha.interest.Hash().Cells()) {
		dst = ha.appendCell(dst, hc)
	}
	return dst
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

// spectated reports whether the Area has spectators to send rounds to.
func (ha *hostArea) spectated() bool { return len(ha.watchers.list) > 0 }

// spectatorsFreeze sends the spectators a last round as the Area
// freezes: what changed since the round before (the last players leaving)
// is not left unsaid while no round comes. Area goroutine.
func (ha *hostArea) spectatorsFreeze() {
	if ha.spectated() {
		ha.sendSnapshots()
	}
}

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
	f := gate.NewFrame()
	out.Parts, out.Buf = f.Parts[:0], f.Buf[:0]
	arena = ha.interest.Build(&sp.view, sp.watch, 0, arena, out)
	f.Parts, f.Buf = out.Parts, out.Buf
	if len(f.Parts) == 0 {
		f.Release()
		return arena, false
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

// hasBody reports whether e is the body of a player in the Area.
func (ha *hostArea) hasBody(e ecs.Entity) bool {
	for _, b := range ha.order {
		if b.entity == e {
			return true
		}
	}
	return false
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

// dropSpectator forgets sp, whose connection closed. Area goroutine.
func (ha *hostArea) dropSpectator(sp *spectator) {
	w := &ha.watchers
	for i, x := range w.list {
		if x == sp {
			w.list = append(w.list[:i], w.list[i+1:]...)
			ha.h.spectators.Add(-1)
			if len(w.list) == 0 {
				w.fresh = true // rounds unwatched are not compared: the next watched one starts afresh
			}
			return
		}
	}
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

// onWatch takes a watch message to the spectator's Area; from a peer that
// is not a spectator it is refused UNKNOWN_TYPE. Event loop.
func (p *peer) onWatch(payload []byte) {
	msg, err := wire.DecodeClient(payload)
	if err != nil {
		p.malformedMsg(wire.CodeOf(err), 0, 0, wire.Detail(err))
		return
	}
	sp := p.spec.Load()
	if sp == nil {
		p.sendError(wire.CodeUnknownType, 0, 0, "watch is for spectators")
		if p.unbound++; p.unbound >= p.h.cfg.UnboundClose {
			p.conn.Close(gate.ClosePolicyViolation, "messages a player may not send")
		}
		return
	}
	if !p.take() {
		if p.refused() >= float64(p.h.cfg.FloodClose) {
			p.conn.Close(gate.ClosePolicyViolation, "message flood")
			return
		}
		p.sendError(wire.CodeRateLimited, 0, 0, "too many messages; slow down")
		return
	}
	id := msg.(*wire.Watch).Entity
	sp.ha.a.PostControl(func(*ecs.Area) { sp.ha.watch(sp, id) })
}

// spectatorIntent answers an intent of a spectator: refused SPECTATOR,
// never applied. A flood of them closes the connection as any flood
// does. Event loop.
func (p *peer) spectatorIntent(seq uint32) {
	if !p.take() && p.refused() >= float64(p.h.cfg.FloodClose) {
		p.conn.Close(gate.ClosePolicyViolation, "intent flood")
		return
	}
	p.sendResult(seq, wire.CodeSpectator)
}

// spectatorLeave ends a spectator's watching: left{}, then the close.
// Event loop.
func (p *peer) spectatorLeave() {
	p.send(&wire.Left{})
	p.conn.Close(gate.CloseNormal, "left")
}

// spectatorClosed forgets the spectator of a closed connection, if it was
// one. Any goroutine.
func (p *peer) spectatorClosed() {
	if sp := p.spec.Swap(nil); sp != nil {
		sp.ha.a.PostControl(func(*ecs.Area) { sp.ha.dropSpectator(sp) })
	}
}
