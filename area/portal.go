package area

import (
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/items"
)

// portalResend is how often an unanswered portal_out is sent again
// (the director answers replays from its cache or the store).
const portalResend = 2 * time.Second

// settleFor is how long a timed-out crossing keeps asking the director
// for its outcome: if the director did move the player after all (its
// answer was delayed or lost), the player follows the store rather than
// being left behind as a ghost.
const settleFor = 10 * time.Minute

// setPortals indexes an Area's portal squares.
func (ha *hostArea) setPortals(ps []control.Portal) {
	ha.portals = ps
	ha.portalAt = nil
	if len(ps) == 0 {
		return
	}
	g := ha.a.Grid
	ha.portalAt = make([]int16, g.Len())
	for i := range ha.portalAt {
		ha.portalAt[i] = -1
	}
	for i, p := range ps {
		if g.In(p.X, p.Y) {
			ha.portalAt[g.Cell(p.X, p.Y)] = int16(i)
			g.SetStop(g.Cell(p.X, p.Y)) // a move-to never walks over one on its way
		}
	}
}

// checkPortals starts a crossing for every player body that stepped onto a
// portal this tick (from the Area's move log). After-tick, so no query runs.
func (ha *hostArea) checkPortals(now time.Time) {
	if ha.portalAt == nil || ha.closing != nil {
		return
	}
	for _, m := range ha.a.Moves {
		if m.To == ecs.NoCell || m.From == ecs.NoCell {
			continue // spawns and despawns never cross
		}
		i := ha.portalAt[m.To]
		if i < 0 {
			continue
		}
		id := m.Entity.ID()
		if int(id) >= len(ha.routes) || ha.routes[id].entity != m.Entity || ha.routes[id].b == nil {
			continue // not a player's body
		}
		b := ha.routes[id].b
		if ha.a.InTransit(b.entity) {
			continue
		}
		ha.startCrossing(b, m.From, ha.portals[i], now)
	}
}

func (ha *hostArea) startCrossing(b *body, from ecs.Cell, p control.Portal, now time.Time) {
	transfer := newToken()
	// A trade of its is void before its state is taken: what goes on with
	// it is what it has now, and nothing of it moves here after.
	ha.eng.Items.EndTrade(ha.a, b.entity, items.TradePortal)
	// What it carries, as the snapshot below has it: its body is in
	// transit from here, so nothing it holds changes until the crossing
	// settles, and the destination's grant carries exactly this.
	state, err := ha.eng.Items.SaveCharacter(b.entity)
	if err != nil {
		ha.h.log.Error("portal: the character's state", "area", ha.id, "account", b.account, "err", err)
		return
	}
	if err := ha.a.SetTransit(b.entity, 1, true); err != nil {
		ha.h.log.Error("portal: set transit", "area", ha.id, "err", err)
		return
	}
	fx, fy := ha.a.Grid.XY(from)
	c := &crossing{b: b, from: from, deadline: now.Add(ha.h.cfg.TransferTimeout), sentAt: now, out: &control.PortalOut{
		Transfer: transfer, Area: ha.id, Epoch: ha.epoch, Account: b.account,
		FromX: fx, FromY: fy, ToArea: p.ToArea, ToX: p.ToX, ToY: p.ToY,
		SentMS: now.UnixMilli(), DeadlineMS: now.Add(ha.h.cfg.TransferTimeout).UnixMilli(),
	}}
	putLazy(&ha.crossings, transfer, c)
	ha.persist(now, false) // the player's state at the portal, out of cadence
	c.out.Seq = ha.seq     // the move waits for this snapshot to be stored
	c.out.State = state
	failpoint.Hit(failpoint.HostPortalOut)
	ha.h.link.send(c.out)
	failpoint.Hit(failpoint.HostPortalSent)
	ha.scheduleChores(now.Add(portalResend))
}

// portalChores resends unanswered crossings and times out stale ones.
func (ha *hostArea) portalChores(now time.Time) {
	for tr, c := range ha.crossings {
		if now.After(c.deadline) {
			delete(ha.crossings, tr)
			ha.restore(c, wire.TypePortalBlocked, wire.CodeTimeout)
			if !settling() {
				continue
			}
			c.deadline = now.Add(settleFor)
			putLazy(&ha.settling, tr, c)
			ha.holdItems(c.b)
			continue
		}
		if now.Sub(c.sentAt) >= portalResend {
			c.sentAt = now
			ha.h.link.send(c.out)
		}
	}
	for tr, c := range ha.settling {
		if now.After(c.deadline) {
			delete(ha.settling, tr)
			ha.holdItems(c.b)
			continue
		}
		if now.Sub(c.sentAt) >= portalResend {
			c.sentAt = now
			ha.h.link.send(c.out)
		}
	}
	dropEmpty(&ha.crossings)
	dropEmpty(&ha.settling)
}

// onPortalResult acts on the director's answer to a crossing.
func (ha *hostArea) onPortalResult(m *control.PortalResult) {
	failpoint.Hit(failpoint.HostPortalResult)
	c := ha.crossings[m.Transfer]
	if c == nil {
		// An answer to a crossing that timed out (settling): if the move
		// happened after all, the player follows the store rather than
		// linger as a ghost. Answers to crossings this host does not know
		// (duplicates, crossings long settled) change nothing: acting on an
		// old success could move a player who has come back since.
		s := ha.settling[m.Transfer]
		if s == nil {
			return
		}
		delete(ha.settling, m.Transfer)
		ha.holdItems(s.b)
		if b := ha.bodies[m.Account]; m.OK && b == s.b {
			// The store has the player in the other Area: a newer crossing
			// the body may have started since is moot (the director will
			// find the character not in this Area and refuse it).
			ha.dropCrossings(b)
			ha.moveOut(b, m)
		}
		return
	}
	delete(ha.crossings, m.Transfer)
	if !m.OK {
		ha.restore(c, wire.TypePortalTransferRejected, wire.Code(m.Code))
		return
	}
	ha.moveOut(c.b, m)
}

// moveOut removes the body of a player who crossed and sends their client
// to the destination.
func (ha *hostArea) moveOut(b *body, m *control.PortalResult) {
	if p := b.peer; p != nil {
		p.bind.Store(nil)
		p.lost.Store(uint32(wire.CodeRehello))
		// A last snapshot, sent reliably: it carries the session's final
		// ack_seq, which the volatile ones might not deliver before the close.
		p.send(ha.finalSnapshot(b))
		p.send(&wire.PortalMoved{Area: m.ToArea, WSURL: m.WSURL, Grant: m.Grant, JoinID: m.JoinID})
		p.conn.Close(gate.CloseNormal, "moved to another area")
		// The peer is no longer this body's: a drop it reports later (its
		// close raced this crossing) must find nothing to do.
		b.peer = nil
		ha.bound--
	}
	ha.a.Despawn(b.entity)
	ha.dropBody(b)
	// A join grant for this player registered here before the crossing is
	// stale now: used, it would put the player back in an Area the store
	// says they left.
	for tok, g := range ha.grants {
		if g.char.Account == b.account {
			delete(ha.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
		}
	}
	ha.presence(time.Now())
	ha.h.log.Debug("player crossed a portal", "area", ha.id, "account", b.account, "to", m.ToArea)
}

// restore puts a player whose crossing failed back on its from-square (or
// the nearest free one), out of transit, and tells the client why.
func (ha *hostArea) restore(c *crossing, t wire.Type, code wire.Code) {
	b := c.b
	if ha.bodies[b.account] != b || !ha.a.Alive(b.entity) {
		return
	}
	_ = ha.a.SetTransit(b.entity, 0, false)
	g := ha.a.Grid
	if p := ha.positions.Get(b.entity); p != nil {
		x, y := g.XY(c.from)
		if fx, fy, ok := ha.nearestFree(x, y); ok {
			ha.a.MoveBody(b.entity, p, fx, fy)
		}
	}
	if b.peer != nil {
		switch t {
		case wire.TypePortalBlocked:
			b.peer.send(&wire.PortalBlocked{Reason: code})
		default:
			b.peer.send(&wire.PortalTransferRejected{Reason: code})
		}
	}
}
