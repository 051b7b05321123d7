package area

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/control/failpoint"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/persist"
	"github.com/leyworks/ley/systems/spatial"
)

// grant is a join grant registered by the director: single use, expiring.
type grant struct {
	token   string
	joinID  uint64
	expires time.Time
	name    string
	char    control.Character
}

// body is a player's body in the Area and the peer driving it, if any.
type body struct {
	account   uint64
	name      string
	entity    ecs.Entity
	peer      *peer
	tag       uint32
	resume    string
	droppedAt time.Time // when its peer left; zero while bound
}

// route maps an entity ID to the body it was last given to, so answers
// reach the connection that sent the intent (see ecs.Intent.Tag).
type route struct {
	entity ecs.Entity
	b      *body
}

// closing is an Area's shutdown in progress.
type closing struct {
	reason   uint16
	graceEnd time.Time
	finalSeq uint64 // the final snapshot's seq, once sent
	ackBy    time.Time
}

// hostArea is one Area of the pool with its sessions and persistence.
// Everything but the atomics is owned by the goroutine ticking the Area.
type hostArea struct {
	h     *Host
	id    uint32
	epoch uint64
	kind  string
	a     *ecs.Area

	grants  map[string]*grant
	bodies  map[uint64]*body // by account
	order   []*body          // the same bodies, for iteration in a stable order
	routes  []route          // by entity ID
	bound   int
	seq     uint64
	acked   uint64
	unacked *control.Snapshot
	sentAt  time.Time // when unacked was last sent
	fenced  bool      // the director refused our epoch: never write again

	lastPersist  time.Time
	lastPresence time.Time
	nextChores   time.Time
	closing      *closing
	answerBuf    []byte
	bcast        broadcaster

	intents   ecs.Map[ecs.Intents]
	players   ecs.Map[ecs.Player]
	positions ecs.Map[ecs.Position]
	paths     ecs.Map[ecs.Path]

	portals   []control.Portal
	portalAt  []int16 // per square: index into portals, or -1
	crossings map[string]*crossing
	settling  map[string]*crossing // timed out, still asking the director for the outcome

	epochSeen atomic.Uint64 // for re-registration, read off the Area's goroutine
	ackedSeen atomic.Uint64

	// panicPoint names the armed failpoint that panics in this Area's tick
	// ("" when none is armed, the normal case).
	panicPoint string

	joinMu  sync.Mutex       // guards waiting: event loops add, the Area removes
	waiting map[*peer]uint64 // hellos and resumes posted to the Area, by join id
}

func newHostArea(h *Host, m *control.SpawnArea) (*hostArea, error) {
	kind, err := ecs.ParseKind(m.Kind)
	if err != nil {
		return nil, err
	}
	a, err := ecs.NewArea(ecs.Config{ID: ecs.AreaID(m.Area), Rules: ecs.RulesFor(kind), W: m.W, H: m.H, TickRate: h.cfg.TickRate})
	if err != nil {
		return nil, err
	}
	hash, err := spatial.Attach(a, h.cfg.CellSize)
	if err != nil {
		return nil, err
	}
	if err := a.Use(systems.Default()...); err != nil {
		return nil, err
	}
	if len(m.Blob) > 0 {
		if err := persist.Load(a, m.Blob); err != nil {
			return nil, err
		}
	} else {
		populate(a, m.Seed)
	}
	ha := &hostArea{
		h: h, id: m.Area, epoch: m.Epoch, kind: m.Kind, a: a,
		grants: make(map[string]*grant), bodies: make(map[uint64]*body), crossings: make(map[string]*crossing), settling: make(map[string]*crossing),
		seq: m.Seq, acked: m.Seq, lastPersist: time.Now(), waiting: make(map[*peer]uint64),
	}
	ha.epochSeen.Store(m.Epoch)
	ha.ackedSeen.Store(m.Seq)
	ha.setPortals(m.Portals)
	ha.intents = ecs.NewMap[ecs.Intents](&a.World)
	ha.players = ecs.NewMap[ecs.Player](&a.World)
	ha.positions = ecs.NewMap[ecs.Position](&a.World)
	ha.paths = ecs.NewMap[ecs.Path](&a.World)
	if err := ha.bcast.init(ha, hash); err != nil {
		return nil, err
	}
	a.AfterTick = ha.afterTick
	a.OnTimer = func(_ *ecs.Area, now time.Time) { ha.chores(now) }
	a.OnPanic = func(_ *ecs.Area, p ecs.Panic) { ha.fail(p) }
	ha.armPanicPoint()
	return ha, nil
}

// populate gives a fresh Area its first content: a few wanderers, from the
// seed the director chose, so that a rebuilt Area is the same Area.
func populate(a *ecs.Area, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0xa5ea))
	n := a.Grid.Len() / 256
	for i := 0; i < n; i++ {
		x, y := rng.Int32N(a.Grid.W()), rng.Int32N(a.Grid.H())
		_, _ = a.SpawnWanderer(x, y, rng.Uint32(), 4, 3) // a taken square just means one fewer
	}
}

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
	now := time.Now()
	if now.After(g.expires) {
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
			code := wire.CodeInternal
			if err == ecs.ErrAreaFull {
				code = wire.CodeAreaFull
			}
			p.sendError(code, 0, m.JoinID, err.Error())
			return
		}
		b = &body{account: g.char.Account, name: g.name, entity: e}
		ha.bodies[b.account] = b
		ha.order = append(ha.order, b)
	}
	ha.bind(p, b, m.JoinID, version, true)
}

// resume rebinds p to the body its resume token names.
func (ha *hostArea) resume(p *peer, m *wire.Resume) {
	for _, b := range ha.order {
		if b.resume == m.Token && b.resume != "" {
			ha.bind(p, b, m.JoinID, p.version, false)
			return
		}
	}
	p.sendError(wire.CodeBadToken, 0, m.JoinID, "unknown or expired resume token")
}

// bind gives b to p; a peer still driving b is taken over first. A fresh
// session (a hello, not a resume) starts its own seq space: the body's
// queued intents (the old session's) are dropped as superseded and its
// ack_seq starts again from 0, so the new client's seq 1 is acknowledged.
func (ha *hostArea) bind(p *peer, b *body, joinID uint64, version uint16, fresh bool) {
	if p.closed.Load() { // it left while its hello waited: keep the body for a resume
		if b.peer == nil && b.droppedAt.IsZero() {
			b.droppedAt = time.Now()
		}
		return
	}
	if old := b.peer; old != nil && old != p {
		old.unbind(wire.CodeTakenOver, "another login took this session over")
		old.send(&wire.TakenOver{})
		old.conn.Close(gate.CloseNormal, "taken over")
		ha.bound--
	}
	if b.peer != p {
		ha.bound++
	}
	b.peer = p
	b.droppedAt = time.Time{}
	if fresh {
		ha.resetSeqs(b)
	}
	b.tag = bindTags.Add(1)
	if b.resume != "" {
		ha.h.dropIndex(ha.h.resumes, b.resume)
	}
	b.resume = newToken()
	ha.h.mu.Lock()
	ha.h.resumes[b.resume] = ha
	ha.h.mu.Unlock()
	ha.setRoute(b)
	p.version = version
	p.view.reset()
	p.lost.Store(0)
	p.bind.Store(&binding{ha: ha, b: b, entity: b.entity, tag: b.tag})
	p.send(&wire.HelloAck{JoinID: joinID, Entity: b.entity.ID(), Tick: ha.a.Tick, Area: ha.id, ResumeToken: b.resume, Version: version})
	ha.presence(time.Now())
}

// resetSeqs answers b's queued intents SUPERSEDED (under the old
// session's tag, so they reach nobody new) and zeroes its ack_seq.
func (ha *hostArea) resetSeqs(b *body) {
	if q := ha.intents.Get(b.entity); q != nil {
		for q.Len() > 0 {
			it := q.Pop()
			ha.a.Answer(b.entity, &it, ecs.OutcomeSuperseded)
		}
	}
	if pl := ha.players.Get(b.entity); pl != nil {
		pl.AckSeq = 0
	}
	ha.stopWalking(b)
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
	b.peer = nil
	b.droppedAt = time.Now()
	ha.bound--
	ha.stopWalking(b)
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
	if c.Placed && g.In(c.X, c.Y) {
		x, y = c.X, c.Y
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

// afterTick runs at the end of every tick: deliver rejections, send
// snapshots on their cadence, do the chores when due.
func (ha *hostArea) afterTick(a *ecs.Area) {
	for i := range a.Outbox {
		ans := &a.Outbox[i]
		if ans.Outcome == ecs.OutcomeApplied {
			continue // acknowledged by the snapshot's ack_seq
		}
		id := ans.Entity.ID()
		if int(id) >= len(ha.routes) {
			continue
		}
		r := ha.routes[id]
		if r.entity != ans.Entity || r.b == nil || r.b.peer == nil || r.b.tag != ans.Tag {
			continue // its connection is gone; nobody is left to tell
		}
		ha.answerBuf = wire.AppendIntentResult(ha.answerBuf[:0], ans.Seq, outcomeCode[ans.Outcome])
		r.b.peer.sent(len(ha.answerBuf))
		_ = r.b.peer.conn.Send(ha.answerBuf)
	}
	if a.Mode() == ecs.Frozen { // a frozen Area's stray answers: no snapshot, no chores here
		return
	}
	if ha.panicPoint != "" && ha.bound > 0 {
		failpoint.Panic(ha.panicPoint)
	}
	now := time.Now()
	ha.checkPortals(now)
	// Chores first: a restore or a removal they make shows in this very
	// snapshot, never after the message announcing it.
	if !now.Before(ha.nextChores) {
		ha.chores(now)
	}
	if a.Tick%uint64(ha.h.cfg.SnapshotEvery) == 0 {
		ha.bcast.send()
	}
}

// outcomeCode maps the engine's outcomes to wire codes.
var outcomeCode = [...]wire.Code{
	ecs.OutcomeApplied:          wire.CodeOK,
	ecs.OutcomeSuperseded:       wire.CodeSuperseded,
	ecs.OutcomeTooFast:          wire.CodeTooFast,
	ecs.OutcomeEntityGone:       wire.CodeEntityGone,
	ecs.OutcomePortalInProgress: wire.CodePortalInProgress,
	ecs.OutcomeBlocked:          wire.CodeBlocked,
	ecs.OutcomeOutOfBounds:      wire.CodeOutOfBounds,
	ecs.OutcomeNoPath:           wire.CodeNoPath,
	ecs.OutcomeInvalid:          wire.CodeMalformed,
	ecs.OutcomeNotAllowed:       wire.CodeNotAllowed,
}

func (ha *hostArea) scheduleChores(t time.Time) {
	if ha.nextChores.IsZero() || t.Before(ha.nextChores) {
		ha.nextChores = t
	}
	ha.a.SetTimer(ha.nextChores)
}

// chores is the Area's housekeeping: expire grants and dropped bodies,
// persist on cadence, resend an unacked snapshot, report presence, close,
// and freeze when nobody is here or coming. Active Areas run it a few times
// a second from afterTick, frozen ones from their timer.
func (ha *hostArea) chores(now time.Time) {
	cfg := &ha.h.cfg
	ha.nextChores = now.Add(250 * time.Millisecond)
	for tok, g := range ha.grants {
		if now.After(g.expires) {
			delete(ha.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
		}
	}
	var gone []*body
	for _, b := range ha.order {
		if b.peer == nil && !b.droppedAt.IsZero() && now.Sub(b.droppedAt) >= cfg.ResumeGrace {
			gone = append(gone, b)
		}
	}
	if len(gone) > 0 {
		ha.persist(now, false) // their last state goes out with this snapshot
		for _, b := range gone {
			ha.a.Despawn(b.entity)
			ha.dropBody(b)
		}
		ha.presence(now)
	}
	ha.portalChores(now)
	if c := ha.closing; c != nil {
		ha.closeStep(now)
		if ha.closing == nil {
			return // unloaded
		}
	}
	if ha.a.Mode() == ecs.Active && now.Sub(ha.lastPersist) >= cfg.PersistEvery {
		ha.persist(now, false)
	}
	if ha.unacked != nil && now.Sub(ha.sentAt) >= 2*cfg.PersistEvery {
		ha.resend(now)
	}
	if ha.a.Mode() == ecs.Active && now.Sub(ha.lastPresence) >= cfg.PresenceEvery {
		ha.presence(now)
	}
	if ha.closing == nil && ha.bound == 0 && len(ha.grants) == 0 && len(ha.bodies) == 0 && len(ha.crossings) == 0 && len(ha.settling) == 0 && ha.a.Mode() == ecs.Active {
		ha.persist(now, false) // what it was when it froze is what it comes back as
		ha.a.Freeze()
		ha.h.log.Debug("area frozen", "area", ha.id)
	}
	next := ha.nextChores
	for _, g := range ha.grants {
		if g.expires.Before(next) {
			next = g.expires
		}
	}
	if ha.unacked != nil {
		next = ha.sentAt.Add(2 * cfg.PersistEvery)
	}
	if ha.a.Mode() == ecs.Frozen {
		if ha.unacked == nil && len(ha.grants) == 0 {
			ha.a.SetTimer(time.Time{})
			return
		}
		ha.a.SetTimer(next)
	}
}

// persist sends a snapshot of the Area and its characters to the director
// and keeps it until acked (a newer one replaces an older unacked one: the
// director's write is idempotent and monotonic on seq).
func (ha *hostArea) persist(now time.Time, final bool) {
	ha.lastPersist = now
	if ha.fenced {
		return
	}
	blob, err := persist.Save(ha.a)
	if err != nil {
		ha.h.log.Error("persist area", "area", ha.id, "err", err)
		return
	}
	chars := make([]control.Character, 0, len(ha.bodies))
	for _, b := range ha.order {
		p := ha.positions.Get(b.entity)
		if p == nil {
			continue
		}
		x, y := p.X, p.Y
		// A player mid-crossing is stored on its from-square: if this
		// incarnation dies before the crossing settles, the player comes
		// back beside the portal, not on it.
		for _, c := range ha.crossings {
			if c.b == b {
				x, y = ha.a.Grid.XY(c.from)
			}
		}
		chars = append(chars, control.Character{Account: b.account, X: x, Y: y, Placed: true})
	}
	ha.seq++
	ha.unacked = &control.Snapshot{Area: ha.id, Epoch: ha.epoch, Seq: ha.seq, Blob: blob, Characters: chars, Final: final}
	ha.sentAt = now
	ha.h.link.send(ha.unacked)
	ha.presence(now)
}

// resend sends the unacked snapshot again (timer or reconnect), and the
// presence, which the director rebuilds from what hosts report.
func (ha *hostArea) resend(now time.Time) {
	ha.presence(now)
	for _, c := range ha.crossings {
		c.sentAt = now
		ha.h.link.send(c.out)
	}
	for _, c := range ha.settling {
		c.sentAt = now
		ha.h.link.send(c.out)
	}
	if ha.unacked == nil {
		return
	}
	ha.sentAt = now
	ha.h.link.send(ha.unacked)
}

// onAck handles the director's ack of a snapshot.
func (ha *hostArea) onAck(m *control.SnapshotAck) {
	if m.Error != "" {
		ha.h.log.Error("director refused this area's snapshots; closing it", "area", ha.id, "epoch", ha.epoch, "err", m.Error)
		ha.fenced = true
		ha.unacked = nil
		ha.beginClose(uint16(wire.CodeAreaClosing), 0)
		return
	}
	if m.Seq > ha.acked {
		ha.acked = m.Seq
		ha.ackedSeen.Store(m.Seq)
	}
	if ha.unacked != nil && m.Seq >= ha.unacked.Seq {
		ha.unacked = nil
	}
}

// presence reports the Area's connected peers and bound accounts.
func (ha *hostArea) presence(now time.Time) {
	ha.lastPresence = now
	accounts := make([]uint64, 0, ha.bound)
	for _, b := range ha.order {
		if b.peer != nil {
			accounts = append(accounts, b.account)
		}
	}
	ha.h.link.send(&control.Presence{Area: ha.id, Peers: ha.bound, Accounts: accounts})
}

// beginClose tells every peer the Area closes after grace; the Area keeps
// running through it.
func (ha *hostArea) beginClose(reason uint16, grace time.Duration) {
	now := time.Now()
	if ha.closing != nil {
		if end := now.Add(grace); end.Before(ha.closing.graceEnd) {
			ha.closing.graceEnd = end
		}
		return
	}
	ha.closing = &closing{reason: reason, graceEnd: now.Add(grace)}
	for _, b := range ha.order {
		if b.peer != nil {
			b.peer.send(&wire.AreaClosing{Reason: wire.Code(reason), GraceMS: uint32(grace.Milliseconds())})
		}
	}
	ha.h.log.Info("area closing", "area", ha.id, "reason", wire.Code(reason), "grace", grace)
	ha.scheduleChores(now)
	ha.closeStep(now)
}

// closeStep advances a close: after the grace, send the final snapshot;
// once it is acked (or the wait timed out), unload.
func (ha *hostArea) closeStep(now time.Time) {
	c := ha.closing
	if now.Before(c.graceEnd) {
		ha.scheduleChores(c.graceEnd)
		return
	}
	if c.finalSeq == 0 && !ha.fenced {
		ha.persist(now, true)
		c.finalSeq = ha.seq
		c.ackBy = now.Add(ha.h.cfg.FinalAckTimeout)
	}
	ackedFinal := ha.fenced || ha.acked >= c.finalSeq
	if !ackedFinal && now.Before(c.ackBy) {
		ha.scheduleChores(now.Add(100 * time.Millisecond))
		return
	}
	if !ackedFinal {
		ha.h.log.Warn("final snapshot not acked in time; unloading anyway", "area", ha.id, "seq", c.finalSeq)
	}
	for _, b := range ha.order {
		if p := b.peer; p != nil {
			p.unbind(wire.Code(c.reason), "area closed")
			p.conn.Close(gate.CloseGoingAway, "area closed")
		}
		ha.h.dropIndex(ha.h.resumes, b.resume)
	}
	ha.bodies = map[uint64]*body{}
	ha.order = nil
	ha.bound = 0
	ha.closing = nil
	ha.a.Freeze()
	ha.a.SetTimer(time.Time{})
	ha.h.unload(ha)
	ha.h.link.send(&control.AreaClosed{Area: ha.id, Seq: c.finalSeq, Acked: ackedFinal})
	ha.h.log.Info("area unloaded", "area", ha.id, "final_seq", c.finalSeq, "acked", ackedFinal)
}

// dropIndex removes token from one of the host's indexes.
func (h *Host) dropIndex(index map[string]*hostArea, token string) {
	h.mu.Lock()
	delete(index, token)
	h.mu.Unlock()
}
