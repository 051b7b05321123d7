package area

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/items"
	"github.com/leyworks/ley/systems/tell"
)

// seqVerdict is what the event loop makes of an intent's seq.
type seqVerdict uint8

const (
	seqNext  seqVerdict = iota // after the last one accepted: taken
	seqStale                   // not after it: refused STALE_SEQ
	seqGone                    // the session no longer drives the body
)

// accept takes seq for the session marked session if it comes after the
// last one the session accepted (serial order). Any goroutine.
func (b *body) accept(session, seq uint32) seqVerdict {
	for {
		v := b.seqs.Load()
		if uint32(v>>32) != session {
			return seqGone
		}
		if !wire.SeqAfter(seq, uint32(v)) {
			return seqStale
		}
		if b.seqs.CompareAndSwap(v, uint64(session)<<32|uint64(seq)) {
			return seqNext
		}
	}
}

// sessions numbers sessions across the host.
var sessions atomic.Uint32

// addGrant registers a join grant and acks it to the director.
func (ha *hostArea) addGrant(m *control.Grant) {
	ack := &control.GrantAck{Area: ha.id, Token: m.Token}
	switch {
	case ha.unloaded: // the grant came in while the Area unloaded
		ack.Error = "area not on this host"
		ha.h.dropIndex(ha.h.grants, m.Token)
	case ha.closing != nil:
		ack.Error = "area is closing"
		ha.h.dropIndex(ha.h.grants, m.Token)
	default:
		ttl := time.Duration(m.TTLMS) * time.Millisecond
		if ttl <= 0 || ttl > 90*time.Second {
			ttl = 90 * time.Second
		}
		putLazy(&ha.grants, m.Token, &grant{token: m.Token, joinID: m.JoinID, expires: time.Now().Add(ttl), name: m.Name, char: m.Character})
		ha.scheduleChores(time.Now())
		// Awake before the ack leaves: the join that waits for it finds the
		// Area ticking (the link reader's Wake may not have run yet).
		ha.a.Wake()
	}
	ha.h.link.send(ack)
}

// resume rebinds p to the body its resume token names: the same session.
func (ha *hostArea) resume(p *peer, m *wire.Resume) {
	for _, b := range ha.order {
		if b.resume == m.Token && b.resume != "" {
			ha.bind(p, b, m.JoinID, false)
			return
		}
	}
	p.sendError(wire.CodeBadToken, 0, m.JoinID, "unknown or expired resume token")
}

// bind gives b to p; a peer still driving b is taken over first. A fresh
// session (a hello, not a resume) starts its own seqs: its ack_seq starts
// from 0, so its first seq is 1.
func (ha *hostArea) bind(p *peer, b *body, joinID uint64, fresh bool) {
	if p.closed.Load() { // it left while its hello waited: keep the body for a resume
		if b.peer == nil && b.droppedAt.IsZero() {
			b.droppedAt = time.Now()
		}
		return
	}
	if old := b.peer; old != nil && old != p {
		ha.takeOver(old, b)
	}
	if b.peer != p {
		ha.bound++
	}
	b.peer = p
	b.droppedAt = time.Time{}
	if fresh {
		ha.newSession(b)
	}
	if b.resume != "" {
		ha.h.dropIndex(ha.h.resumes, b.resume)
	}
	b.resume = newToken()
	ha.h.mu.Lock()
	ha.h.resumes[b.resume] = ha
	ha.h.mu.Unlock()
	ha.setRoute(b)
	ha.setAway(b, false)
	p.version = b.version
	p.view.Reset()
	p.hasPresence = false
	p.lost.Store(0)
	p.bind.Store(&binding{ha: ha, b: b, entity: b.entity, session: b.session})
	p.send(&wire.HelloAck{JoinID: joinID, Entity: b.entity.ID(), Tick: ha.a.Tick, Area: ha.id, ResumeToken: b.resume, Version: b.version})
	info := ha.areaInfo()
	if ha.eng.Items.MayBuild(b.entity) {
		info.Rules |= wire.RuleMayBuild
	}
	p.send(info)
	ha.sendInventory(b)
	ha.sendRecipes(b)
	ha.presence(time.Now())
}

// takeOver ends old's session on b because another login binds b: the
// intents it had queued are answered SUPERSEDED, a last snapshot (sent
// reliably) carries its final ack_seq, then taken_over, then the close.
// Intents of old still on their way are never applied (the intake refuses
// a session that no longer drives its body).
func (ha *hostArea) takeOver(old *peer, b *body) {
	ha.eng.Items.EndTrade(ha.a, b.entity, items.TradeTakenOver)
	old.bind.Store(nil)
	old.lost.Store(uint32(wire.CodeTakenOver))
	if q := ha.intents.Get(b.entity); q != nil {
		for q.Len() > 0 {
			it := q.Pop()
			old.sendResult(it.Seq, wire.CodeSuperseded)
		}
	}
	old.send(ha.finalSnapshot(b))
	old.send(&wire.TakenOver{})
	old.conn.Close(gate.CloseNormal, "taken over")
	b.peer = nil
	ha.bound--
}

// outOfTouch ends every bound session because the host lost touch with
// the director for its lease (Host.watchLink): the intents each had
// queued are answered UNAVAILABLE, a last snapshot (reliable) carries its
// final ack_seq, then rehello{UNAVAILABLE}, then the close. The bodies
// stay, away, as for a dropped connection: a resume (once the host is in
// touch again) or a join through the director finds them.
func (ha *hostArea) outOfTouch() {
	now := time.Now()
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		ha.eng.Items.EndTrade(ha.a, b.entity, items.TradeLeft)
		p.bind.Store(nil)
		p.lost.Store(uint32(wire.CodeUnavailable))
		if q := ha.intents.Get(b.entity); q != nil {
			for q.Len() > 0 {
				p.sendResult(q.Pop().Seq, wire.CodeUnavailable)
			}
		}
		p.send(ha.finalSnapshot(b))
		p.send(&wire.Rehello{Code: wire.CodeUnavailable, Detail: "this area's host is out of touch with the realm; your character waits here: join again"})
		p.conn.Close(gate.CloseGoingAway, "out of touch")
		b.peer = nil
		b.droppedAt = now
		ha.bound--
		ha.stopWalking(b)
		ha.setAway(b, true)
	}
	ha.presence(now)
	ha.scheduleChores(now)
}

// evict lets go of the character of m.Account because its account joins
// another Area, or this one again (control.Evict): a session driving its
// body ends as in a takeover (taken_over, then the close), its resume
// token dies, its grants here are dropped, a snapshot carries its final
// state, and the body leaves the world. A body crossing a portal is answered Busy: the
// crossing settles first; unless the character already lives elsewhere
// (m.Elsewhere), when no crossing of it can commit: the crossing is
// dropped and the body leaves. The answer names the snapshot that holds
// the character's final state (for a body already gone, the one holding
// its departed state, if not acked yet), which the director makes
// durable before the character may be anywhere else.
func (ha *hostArea) evict(m *control.Evict) {
	ans := &control.Evicted{Area: ha.id, Account: m.Account}
	for tok, g := range ha.grants {
		if g.char.Account == m.Account {
			delete(ha.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
		}
	}
	b := ha.bodies[m.Account]
	switch {
	case b == nil:
		ans.Absent = true
		if d, ok := ha.departed[m.Account]; ok {
			ans.Seq = d.since // its final state: durable before it is anywhere again
		}
	case ha.crossingOf(b) != nil && !m.Elsewhere:
		ans.Busy = true
	default:
		ha.eng.Items.EndTrade(ha.a, b.entity, items.TradeTakenOver)
		ha.dropCrossings(b)
		if old := b.peer; old != nil {
			ha.takeOver(old, b)
		}
		now := time.Now()
		ha.persist(now, false) // its last state goes out with this snapshot
		ans.Seq = ha.seq
		ha.depart(b)
		ha.a.Despawn(b.entity)
		ha.dropBody(b)
		ha.presence(now)
		ha.scheduleChores(now)
		ha.h.log.Debug("character evicted: its account joined another area", "area", ha.id, "account", m.Account)
	}
	ha.h.link.send(ans)
}

// leave ends p's session on b because its player quit (wire.Leave): its
// queued intents are answered SUPERSEDED, a last snapshot carries its
// final ack_seq, then left{} and the close; the body leaves the world in
// this tick, its state goes out in a snapshot and its resume token dies.
// A body crossing a portal stays (PORTAL_IN_PROGRESS): the crossing is
// decided first. A session that ended meanwhile (taken over, moved, the
// Area closing) got its own end: nothing more happens.
func (ha *hostArea) leave(p *peer, b *body) {
	if b.peer != p || ha.bodies[b.account] != b {
		return
	}
	if ha.crossingOf(b) != nil {
		p.sendError(wire.CodePortalInProgress, 0, 0, "a portal crossing is under way: leave once it is decided")
		return
	}
	ha.eng.Items.EndTrade(ha.a, b.entity, items.TradeLeft)
	p.bind.Store(nil)
	if q := ha.intents.Get(b.entity); q != nil {
		for q.Len() > 0 {
			p.sendResult(q.Pop().Seq, wire.CodeSuperseded)
		}
	}
	p.send(ha.finalSnapshot(b))
	p.send(&wire.Left{})
	p.conn.Close(gate.CloseNormal, "left")
	b.peer = nil
	ha.bound--
	now := time.Now()
	ha.persist(now, false) // its last state goes out with this snapshot
	ha.depart(b)
	ha.a.Despawn(b.entity)
	ha.dropBody(b)
	ha.presence(now)
	ha.scheduleChores(now)
	ha.h.log.Debug("player left", "area", ha.id, "account", b.account)
}

// dropCrossings forgets b's crossings under way or settling: none of them
// is resent or answered any more.
func (ha *hostArea) dropCrossings(b *body) {
	for tr, c := range ha.crossings {
		if c.b == b {
			delete(ha.crossings, tr)
		}
	}
	for tr, c := range ha.settling {
		if c.b == b {
			delete(ha.settling, tr)
		}
	}
	ha.holdItems(b)
}

// newSession starts a fresh session on b: a new mark, ack_seq 0, no seq
// taken yet, and no walk left over from the session before.
func (ha *hostArea) newSession(b *body) {
	b.session = sessions.Add(1)
	b.seqs.Store(uint64(b.session) << 32)
	if q := ha.intents.Get(b.entity); q != nil {
		for q.Len() > 0 { // an earlier session's, nobody to answer
			q.Pop()
		}
	}
	if pl := ha.players.Get(b.entity); pl != nil {
		pl.AckSeq, pl.Session = 0, b.session
	}
	ha.stopWalking(b)
}

// areaInfo is what a bound client is told of the Area.
func (ha *hostArea) areaInfo() *wire.AreaInfo {
	cfg := &ha.h.cfg
	return tell.AreaInfo(ha.eng, ha.id, tell.Pacing{SnapshotEvery: cfg.SnapshotEvery, InterestRadius: cfg.InterestRadius, ResumeGrace: cfg.ResumeGrace})
}

func (ha *hostArea) setRoute(b *body) {
	id := b.entity.ID()
	for int(id) >= len(ha.routes) {
		ha.routes = append(ha.routes, route{})
	}
	ha.routes[id] = route{entity: b.entity, b: b}
}

// dropped records that p, which drove b, is gone; b stays for a resume.
// A report about a body that is no longer this Area's (it crossed a
// portal, or went after its grace) or that another peer drives now changes
// nothing.
func (ha *hostArea) dropped(p *peer, b *body) {
	if b.peer != p || ha.bodies[b.account] != b {
		return
	}
	ha.eng.Items.EndTrade(ha.a, b.entity, items.TradeLeft)
	b.peer = nil
	b.droppedAt = time.Now()
	ha.bound--
	ha.stopWalking(b)
	ha.setAway(b, true)
	ha.presence(b.droppedAt)
	ha.scheduleChores(b.droppedAt)
}

// stopWalking drops a body's move-to target: a body nobody steers (its
// peer left) or a new session has just taken must not walk on, least of
// all into a portal its player did not choose now.
func (ha *hostArea) stopWalking(b *body) {
	if p := ha.paths.Get(b.entity); p != nil {
		p.Clear()
	}
}

// spawnPlayer puts a character's body on its square, or on the nearest
// free square to it (or to the Area's middle for a new character).
func (ha *hostArea) spawnPlayer(c control.Character) (ecs.Entity, error) {
	g := ha.a.Grid
	x, y := g.W()/2, g.H()/2
	switch {
	case c.Placed && g.In(c.X, c.Y) && g.Walkable(g.Cell(c.X, c.Y)):
		x, y = c.X, c.Y
	default: // a newcomer, or a place the map has no room on now: a spawn point
		if sx, sy, ok := ha.eng.Map.SpawnPoint(int(ha.joins)); ok {
			x, y = sx, sy
			ha.joins++
		}
	}
	fx, fy, ok := ha.nearestFree(x, y)
	if !ok {
		return ecs.Entity{}, fmt.Errorf("no free square in area %d", ha.id)
	}
	e, err := ha.a.SpawnPlayer(c.Account, fx, fy)
	if err != nil {
		return e, err
	}
	if err := ha.eng.Items.LoadCharacter(e, c.State); err != nil {
		ha.a.Despawn(e)
		return ecs.Entity{}, fmt.Errorf("character of account %d: %w", c.Account, err)
	}
	ha.players.Get(e).Builder = c.Builder
	if c.New && len(c.State) == 0 && !ha.eng.Items.GiveStarter(ha.a, e) {
		ha.h.log.Warn("the starter kit does not fit a new character's inventory", "area", ha.id, "account", c.Account)
	}
	return e, nil
}

// nearestFree finds the free square nearest (x, y) that is not a portal
// (a player put down on a portal would be stuck there: only a step onto
// one crosses).
func (ha *hostArea) nearestFree(x, y int32) (int32, int32, bool) {
	return action.NearestFree(ha.a.Grid, x, y)
}

// dropBody forgets a body (it left the Area).
func (ha *hostArea) dropBody(b *body) {
	if ha.bodies[b.account] == b {
		delete(ha.bodies, b.account)
	}
	ha.h.dropIndex(ha.h.resumes, b.resume)
	kept := ha.order[:0]
	for _, x := range ha.order {
		if x != b {
			kept = append(kept, x)
		}
	}
	clear(ha.order[len(kept):])
	ha.order = kept
}

// holdItems sets body b's Settling (its items held) while a crossing of
// it is settling, and clears it once none is.
func (ha *hostArea) holdItems(b *body) {
	pl := ha.players.Get(b.entity)
	if pl == nil || ha.bodies[b.account] != b {
		return
	}
	pl.Settling = false
	for _, c := range ha.settling {
		if c.b == b && holdingItems() {
			pl.Settling = true
		}
	}
}
