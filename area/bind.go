package area

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// expiredKeep is how long a grant is remembered after it expired, so that
// a late hello is told GRANT_EXPIRED rather than BAD_GRANT; maxExpired
// bounds how many are remembered at once.
const (
	expiredKeep = 5 * time.Minute
	maxExpired  = 10000
)

// expire remembers that grant token expired unused (any goroutine).
func (h *Host) expire(token string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.expired) >= maxExpired {
		for tok, at := range h.expired {
			if now.Sub(at) > expiredKeep || len(h.expired) >= maxExpired {
				delete(h.expired, tok)
			}
		}
	}
	h.expired[token] = now
}

// expiredGrant reports whether token is a grant that expired unused not
// long ago (any goroutine).
func (h *Host) expiredGrant(token string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.expired[token]
	return ok && time.Since(at) <= expiredKeep
}

// grant is a join grant registered by the director: single use, expiring.
type grant struct {
	token   string
	joinID  uint64
	expires time.Time
	name    string
	char    control.Character
}

// body is a player's body in the Area and the peer driving it, if any.
//
// A session is what a hello starts and a resume continues: its seqs, its
// ack_seq and its mark (session, carried by its intents as ecs.Intent.Tag
// and checked against ecs.Player.Session). seqs packs the session's mark
// (high 32 bits) and the last intent seq the session accepted (low 32
// bits): the connection's event loop advances it with a compare-and-swap,
// so an intent of a session taken over meanwhile can never move the new
// session's seqs.
type body struct {
	account   uint64
	name      string
	entity    ecs.Entity
	peer      *peer
	session   uint32
	version   uint16 // the session's protocol version
	seqs      atomic.Uint64
	resume    string
	droppedAt time.Time // when its peer left; zero while bound
}

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

// route maps an entity ID to the body it was last given to, so answers
// reach the session that sent the intent (see ecs.Intent.Tag).
type route struct {
	entity ecs.Entity
	b      *body
}

// sessions numbers sessions across the host.
var sessions atomic.Uint32

// addGrant registers a join grant and acks it to the director.
func (ha *hostArea) addGrant(m *control.Grant) {
	ack := &control.GrantAck{Area: ha.id, Token: m.Token}
	if ha.closing != nil {
		ack.Error = "area is closing"
		ha.h.dropIndex(ha.h.grants, m.Token)
	} else {
		ttl := time.Duration(m.TTLMS) * time.Millisecond
		if ttl <= 0 || ttl > 90*time.Second {
			ttl = 90 * time.Second
		}
		ha.grants[m.Token] = &grant{token: m.Token, joinID: m.JoinID, expires: time.Now().Add(ttl), name: m.Name, char: m.Character}
		ha.scheduleChores(time.Now())
		// Awake before the ack leaves: the join that waits for it finds the
		// Area ticking (the link reader's Wake may not have run yet).
		ha.a.Wake()
	}
	ha.h.link.send(ack)
}

// hello binds p to its grant's body, spawning it or taking it over.
func (ha *hostArea) hello(p *peer, m *wire.Hello, version uint16) {
	g := ha.grants[m.Grant]
	switch {
	case g == nil:
		p.sendError(wire.CodeBadGrant, 0, m.JoinID, "unknown or used grant")
		return
	case g.joinID != m.JoinID:
		p.sendError(wire.CodeBadGrant, 0, m.JoinID, "grant belongs to another join")
		return
	}
	delete(ha.grants, m.Grant)
	ha.h.dropIndex(ha.h.grants, m.Grant)
	if time.Now().After(g.expires) {
		ha.h.expire(m.Grant)
		p.sendError(wire.CodeGrantExpired, 0, m.JoinID, "grant expired")
		return
	}
	if ha.closing != nil {
		p.sendError(wire.CodeAreaClosing, 0, m.JoinID, "area is closing")
		return
	}
	b := ha.bodies[g.char.Account]
	if b == nil {
		e, err := ha.spawnPlayer(g.char)
		if err != nil {
			code, detail := wire.CodeInternal, "no room for your body"
			if err == ecs.ErrAreaFull {
				code, detail = wire.CodeAreaFull, "the area holds its maximum of players"
			}
			ha.h.log.Warn("spawn player", "area", ha.id, "account", g.char.Account, "err", err)
			p.sendError(code, 0, m.JoinID, detail)
			return
		}
		b = &body{account: g.char.Account, name: g.name, entity: e}
		ha.bodies[b.account] = b
		ha.order = append(ha.order, b)
	}
	b.version = version
	ha.bind(p, b, m.JoinID, true)
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
	ha.a.Touch(b.entity) // no longer away
	p.version = b.version
	p.view.reset()
	p.hasPresence = false
	p.lost.Store(0)
	p.bind.Store(&binding{ha: ha, b: b, entity: b.entity, session: b.session})
	p.send(&wire.HelloAck{JoinID: joinID, Entity: b.entity.ID(), Tick: ha.a.Tick, Area: ha.id, ResumeToken: b.resume, Version: b.version})
	p.send(ha.areaInfo())
	ha.presence(time.Now())
}

// takeOver ends old's session on b because another login binds b: the
// intents it had queued are answered SUPERSEDED, a last snapshot (sent
// reliably) carries its final ack_seq, then taken_over, then the close.
// Intents of old still on their way are never applied (the intake refuses
// a session that no longer drives its body).
func (ha *hostArea) takeOver(old *peer, b *body) {
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

// finalSnapshot is the last snapshot of b's session, sent reliably just
// before its connection ends: no records, the final ack_seq.
func (ha *hostArea) finalSnapshot(b *body) *wire.Snapshot {
	s := &wire.Snapshot{Tick: ha.a.Tick, Records: []byte{}}
	if pl := ha.players.Get(b.entity); pl != nil {
		s.AckSeq = pl.AckSeq
	}
	return s
}

// areaInfo is what a bound client is told of the Area.
func (ha *hostArea) areaInfo() *wire.AreaInfo {
	cfg := &ha.h.cfg
	r := ha.a.Rules
	info := &wire.AreaInfo{
		Area: ha.id, Kind: ha.kind, W: uint32(ha.a.Grid.W()), H: uint32(ha.a.Grid.H()),
		CellSize: uint16(ha.bcast.hash.Size()), TickHz: uint16(ha.a.TickRate),
		SnapshotHz: uint16(ha.a.TickRate / cfg.SnapshotEvery),
		StepMS:     uint32(int(r.StepPeriod(ha.a.TickRate)) * 1000 / ha.a.TickRate),
		QueueLen:   ecs.QueueLen, InterestRadius: uint16(cfg.InterestRadius),
		ResumeGraceMS: uint32(cfg.ResumeGrace.Milliseconds()),
	}
	if r.Diagonal {
		info.Rules |= wire.RuleDiagonal
	}
	if r.PvP {
		info.Rules |= wire.RulePvP
	}
	if r.CreaturesHuntPlayers {
		info.Rules |= wire.RuleCreaturesHunt
	}
	if r.LineOfSight {
		info.Rules |= wire.RuleLineOfSight
	}
	info.PlayerHP = r.FullHP()
	for _, k := range ha.world.kinds {
		info.Creatures = append(info.Creatures, wire.CreatureKind{Name: k.Name, HP: uint16(k.HP)})
	}
	return info
}

func (ha *hostArea) setRoute(b *body) {
	id := b.entity.ID()
	for int(id) >= len(ha.routes) {
		ha.routes = append(ha.routes, route{})
	}
	ha.routes[id] = route{entity: b.entity, b: b}
}

// route returns the body of player entity e, or nil.
func (ha *hostArea) route(e ecs.Entity) *body {
	id := e.ID()
	if int(id) >= len(ha.routes) || ha.routes[id].entity != e {
		return nil
	}
	return ha.routes[id].b
}

// dropped records that p, which drove b, is gone; b stays for a resume.
// A report about a body that is no longer this Area's (it crossed a
// portal, or went after its grace) or that another peer drives now changes
// nothing.
func (ha *hostArea) dropped(p *peer, b *body) {
	if b.peer != p || ha.bodies[b.account] != b {
		return
	}
	b.peer = nil
	b.droppedAt = time.Now()
	ha.bound--
	ha.stopWalking(b)
	ha.a.Touch(b.entity) // away
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
		if sx, sy, ok := ha.world.spawnPoint(g, int(ha.joins)); ok {
			x, y = sx, sy
			ha.joins++
		}
	}
	fx, fy, ok := ha.nearestFree(x, y)
	if !ok {
		return ecs.Entity{}, fmt.Errorf("no free square in area %d", ha.id)
	}
	return ha.a.SpawnPlayer(c.Account, fx, fy)
}

// nearestFree finds the free square nearest (x, y) that is not a portal
// (a player put down on a portal would be stuck there: only a step onto
// one crosses).
func (ha *hostArea) nearestFree(x, y int32) (int32, int32, bool) {
	return nearestFree(ha.a.Grid, x, y, func(c ecs.Cell) bool { return ha.portalAt == nil || ha.portalAt[c] < 0 })
}

// nearestFree searches rings around (x, y) for a free square that ok
// accepts (nil accepts any).
func nearestFree(g *ecs.Grid, x, y int32, ok func(ecs.Cell) bool) (int32, int32, bool) {
	maxR := max(g.W(), g.H())
	for r := int32(0); r <= maxR; r++ {
		for dy := -r; dy <= r; dy++ {
			for dx := -r; dx <= r; dx++ {
				if max(abs(dx), abs(dy)) != r {
					continue
				}
				nx, ny := x+dx, y+dy
				if !g.In(nx, ny) {
					continue
				}
				if c := g.Cell(nx, ny); g.Free(c) && (ok == nil || ok(c)) {
					return nx, ny, true
				}
			}
		}
	}
	return 0, 0, false
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// sendStatic sends p the map of hash cell hc at version ver: the floor of
// its squares as runs, and its static objects.
func (ha *hostArea) sendStatic(p *peer, hc int32, ver uint32) {
	g := ha.a.Grid
	h := ha.bcast.hash
	size := h.Size()
	x0, y0 := (hc%h.CellsAcross())*size, (hc/h.CellsAcross())*size
	x1, y1 := min(x0+size, g.W()), min(y0+size, g.H())
	w := ha.world
	st := &wire.Static{Cell: uint32(hc), Version: ver, Floor: make([]uint32, 0, 4), Objects: make([]wire.Object, 0, len(w.cellObjs[hc]))}
	run, kind := uint32(0), uint32(0)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			c := g.Cell(x, y)
			k := uint32(w.ground[c])
			if w.objAt[c] == 0 && g.At(ecs.LayerFloor, c) == ecs.FloorWall && g.At(ecs.LayerSight, c) == 0 {
				k = uint32(wire.FloorWall) // a wall made after the map was laid
			}
			if run > 0 && k != kind {
				st.Floor = append(st.Floor, kind, run)
				run = 0
			}
			kind = k
			run++
		}
	}
	if run > 0 {
		st.Floor = append(st.Floor, kind, run)
	}
	for _, i := range w.cellObjs[hc] {
		o := &w.objects[i]
		st.Objects = append(st.Objects, wire.Object{ID: o.id, Kind: o.kind, X: o.x, Y: o.y, State: o.state(), Text: o.text})
	}
	p.send(st)
}
