package area

import (
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
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

// spectatorsFreeze sends the spectators a last round as the Area
// freezes: what changed since the round before (the last players leaving)
// is not left unsaid while no round comes. Area goroutine.
func (ha *hostArea) spectatorsFreeze() {
	if ha.spectated() {
		ha.sendSnapshots()
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
				ha.armPark()   // a frozen Area its last spectator kept whole parks when due
			}
			return
		}
	}
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
