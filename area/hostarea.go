package area

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/interest"
)

// closing is an Area's shutdown in progress.
type closing struct {
	reason   uint16
	graceEnd time.Time
	released bool   // the peers were let go (the grace is over)
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
	// eng is the Area as the engine built it (systems/build): its world,
	// static map, creature and action systems; a is its ecs.Area.
	eng      *build.Built
	a        *ecs.Area
	interest *interest.System
	snaps    snapshots
	static   wire.Static // scratch of sendStatic
	// joins counts bodies spawned for a join (it picks the spawn point of
	// the next one with no place of its own).
	joins uint32

	grants  map[string]*grant
	bodies  map[uint64]*body // by account
	order   []*body          // the same bodies, for iteration in a stable order
	routes  []route          // by entity ID
	bound   int
	seq     uint64
	acked   uint64
	unacked *control.Snapshot
	sentAt  time.Time // when unacked was last sent
	// departed holds the final state of each character whose body left
	// other than through a portal (it quit, its resume grace ended, it was
	// evicted), from the snapshot that first held it until one holding it
	// is acked: every snapshot until then holds it too (a newer snapshot
	// replaces an unacked older one, which must not take the state with
	// it), and an eviction of the account names that snapshot
	// (docs/items.md, "Departures, rejoins, doubt and cut-off hosts").
	departed map[uint64]departure
	fenced   bool // the director refused our epoch: never write again
	// bytes is the estimate of the memory the Area holds (areaBytes),
	// fixed at its spawn; read by the heartbeat from any goroutine.
	bytes int64
	// unloaded is set when the host forgot the Area (Host.unload): work
	// that reaches it after (a grant posted in the meantime) is refused.
	unloaded bool

	lastPersist  time.Time
	lastPresence time.Time
	// snapTick is the tick of the last snapshot round.
	snapTick uint64
	// lastPresenceMsg is the encoded presence list last sent to peers.
	lastPresenceMsg string
	nextChores      time.Time
	closing         *closing
	answerBuf       []byte

	intents   ecs.Map[ecs.Intents]
	players   ecs.Map[ecs.Player]
	positions ecs.Map[ecs.Position]
	paths     ecs.Map[ecs.Path]

	portals   []control.Portal
	portalAt  []int16 // per square: index into portals, or -1
	crossings map[string]*crossing
	settling  map[string]*crossing // timed out, still asking the director for the outcome

	// placed is the incarnation the director placed here last, with its
	// placement credential; ackedSeen the last snapshot seq it acked: for
	// re-registration, read off the Area's goroutine.
	placed    atomic.Pointer[placement]
	ackedSeen atomic.Uint64
	// bodiesSeen are the accounts of the Area's bodies as of its last
	// presence report, for re-registration.
	bodiesSeen atomic.Pointer[[]uint64]

	// panicPoint names the armed failpoint that panics in this Area's tick
	// ("" when none is armed, the normal case).
	panicPoint string

	// watchers are the Area's spectators (spectate.go).
	watchers watchers

	joinMu  sync.Mutex       // guards waiting: event loops add, the Area removes
	waiting map[*peer]uint64 // hellos and resumes posted to the Area, by join id
}

func newHostArea(h *Host, m *control.SpawnArea) (*hostArea, error) {
	lib := h.cfg.Content
	if lib == nil {
		lib = content.Default()
	}
	spec := build.Spec{ID: ecs.AreaID(m.Area), Kind: m.Kind, Template: m.Template, W: m.W, H: m.H, Seed: m.Seed,
		TickRate: h.cfg.TickRate, CellSize: h.cfg.CellSize}
	for _, p := range m.Portals {
		spec.Portals = append(spec.Portals, build.Square{X: p.X, Y: p.Y})
	}
	eng, err := build.Area(lib, spec)
	if err != nil {
		return nil, err
	}
	a := eng.Area
	ha := &hostArea{
		h: h, id: m.Area, epoch: m.Epoch, kind: eng.RuleSet.Name, eng: eng, a: a,
		grants: make(map[string]*grant), bodies: make(map[uint64]*body), departed: make(map[uint64]departure), crossings: make(map[string]*crossing), settling: make(map[string]*crossing),
		seq: m.Seq, acked: m.Seq, lastPersist: time.Now(), waiting: make(map[*peer]uint64),
	}
	if len(m.Blob) > 0 {
		left, err := eng.Load(m.Blob)
		if err != nil {
			return nil, err
		}
		if left > 0 {
			h.log.Warn("creatures of the stored area have no place in its map now; their spawners make new ones", "area", m.Area, "left_out", left)
		}
	} else {
		eng.Populate()
	}
	g := a.Grid
	ha.bytes = areaBytes(int(g.W()), int(g.H()), int(eng.Hash.Size()), len(m.Portals) > 0, eng.Creatures != nil, a.Rules.LineOfSight)
	ha.placed.Store(&placement{epoch: m.Epoch, credential: m.Placement})
	ha.ackedSeen.Store(m.Seq)
	ha.setPortals(m.Portals)
	ha.intents = ecs.NewMap[ecs.Intents](&a.World)
	ha.players = ecs.NewMap[ecs.Player](&a.World)
	ha.positions = ecs.NewMap[ecs.Position](&a.World)
	ha.paths = ecs.NewMap[ecs.Path](&a.World)
	if ha.interest, err = interest.New(a, eng.Hash, eng.Map, h.cfg.InterestRadius); err != nil {
		return nil, err
	}
	a.AfterTick = ha.afterTick
	a.OnTimer = func(_ *ecs.Area, now time.Time) { ha.chores(now) }
	a.OnPanic = func(_ *ecs.Area, p ecs.Panic) { ha.fail(p) }
	a.OnControl = ha.deliverAnswers
	ha.armPanicPoint()
	return ha, nil
}

// afterTick runs at the end of every tick, on the Area's goroutine: the
// host's steps after the engine's, in this order.
//
//  0. items: players whose inventories changed this tick, and those next
//     to a container that changed or that they opened, are told;
//  1. crossings: bodies that stepped onto a portal this tick begin their
//     crossing (their queued intents are refused PORTAL_IN_PROGRESS);
//  2. chores, when due: grants and graces expire, persistence, presence,
//     closing, freezing (a restore or a removal they make shows in this
//     very snapshot, never after the message announcing it);
//  3. answers: every refusal the tick made (the engine's and the steps
//     above) goes to the session that sent the intent;
//  4. snapshots, on their cadence: answers are written before the snapshot
//     whose ack_seq passes them.
//
// A frozen Area only delivers stray answers.
func (ha *hostArea) afterTick(a *ecs.Area) {
	if a.Mode() == ecs.Frozen {
		ha.deliverAnswers(a)
		return
	}
	if ha.panicPoint != "" && ha.bound > 0 {
		failpoint.Panic(ha.panicPoint)
	}
	now := a.Now
	ha.tellItems(a)
	ha.checkPortals(now)
	if !now.Before(ha.nextChores) {
		ha.chores(now)
	}
	ha.deliverAnswers(a)
	// By ticks since the last round, not a tick's residue: a late host's
	// tick numbers skip (ecs.Area.Tick), and a round is never skipped with
	// them.
	if a.Tick-ha.snapTick >= uint64(ha.h.cfg.SnapshotEvery) {
		ha.snapTick = a.Tick
		ha.sendSnapshots()
	}
}

// deliverAnswers sends the rejections in the Outbox to the sessions that
// sent those intents (applied ones are acknowledged by the snapshots'
// ack_seq), then empties it.
func (ha *hostArea) deliverAnswers(a *ecs.Area) {
	for i := range a.Outbox {
		ans := &a.Outbox[i]
		if ans.Outcome == ecs.OutcomeApplied {
			continue // acknowledged by the snapshot's ack_seq
		}
		b := ha.route(ans.Entity)
		if b == nil || b.peer == nil || b.session != ans.Tag {
			continue // its session is over; nobody is left to tell
		}
		ha.answerBuf = wire.AppendIntentResult(ha.answerBuf[:0], ans.Seq, outcomeCode[ans.Outcome])
		b.peer.sent(len(ha.answerBuf))
		_ = b.peer.conn.Send(ha.answerBuf)
	}
	a.Outbox = a.Outbox[:0]
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
	ecs.OutcomeClosing:          wire.CodeAreaClosing,
	ecs.OutcomeNothingThere:     wire.CodeNothingThere,
	ecs.OutcomeInventoryFull:    wire.CodeInventoryFull,
	ecs.OutcomeNotBuilder:       wire.CodeNotBuilder,
	ecs.OutcomeBudget:           wire.CodeBudget,
	ecs.OutcomeCooldown:         wire.CodeCooldown,
	ecs.OutcomeItemCap:          wire.CodeItemCap,
	ecs.OutcomeOccupied:         wire.CodeOccupied,
	ecs.OutcomeNotEmpty:         wire.CodeNotEmpty,
	ecs.OutcomeOffPlot:          wire.CodeOffPlot,
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
			ha.h.expire(tok)
		}
	}
	var gone []*body
	for _, b := range ha.order {
		// A body crossing a portal stays until its crossing settles: it goes
		// on to the next Area without its player, or is back here (and goes
		// then, its grace long past).
		if b.peer == nil && !b.droppedAt.IsZero() && now.Sub(b.droppedAt) >= cfg.ResumeGrace && ha.crossingOf(b) == nil {
			gone = append(gone, b)
		}
	}
	if len(gone) > 0 {
		ha.persist(now, false) // their last state goes out with this snapshot
		for _, b := range gone {
			ha.depart(b)
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
		ha.spectatorsFreeze()
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
	blob, err := ha.eng.Save()
	if err != nil {
		ha.h.log.Error("persist area", "area", ha.id, "err", err)
		return
	}
	chars, err := ha.characters()
	if err != nil {
		ha.h.log.Error("persist character", "area", ha.id, "err", err)
		return // nothing half: the whole snapshot waits for the next try
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

// placement is one incarnation of an Area as the director placed it on
// this host: its epoch and placement credential (control.SpawnArea).
type placement struct {
	epoch      uint64
	credential string
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
	for acct, d := range ha.departed {
		if m.Seq >= d.since {
			delete(ha.departed, acct)
		}
	}
}

// characters returns the states a snapshot taken now writes: every body's
// (a player mid-crossing on its from-square: if this incarnation dies
// before the crossing settles, the player comes back beside the portal,
// not on it), and every departed character's not yet acked.
func (ha *hostArea) characters() ([]control.Character, error) {
	chars := make([]control.Character, 0, len(ha.bodies)+len(ha.departed))
	for _, b := range ha.order {
		p := ha.positions.Get(b.entity)
		if p == nil {
			continue
		}
		x, y := p.X, p.Y
		for _, c := range ha.crossings {
			if c.b == b {
				x, y = ha.a.Grid.XY(c.from)
			}
		}
		state, err := ha.eng.Items.SaveCharacter(b.entity)
		if err != nil {
			return nil, fmt.Errorf("account %d: %w", b.account, err)
		}
		chars = append(chars, control.Character{Account: b.account, X: x, Y: y, State: state, Placed: true})
	}
	if len(ha.departed) == 0 {
		return chars, nil // the usual case: no key list to sort
	}
	for _, acct := range slices.Sorted(maps.Keys(ha.departed)) {
		if ha.bodies[acct] == nil {
			chars = append(chars, ha.departed[acct].char)
		}
	}
	return chars, nil
}

// departure is a departed character's final state and the seq of the
// first snapshot that held it.
type departure struct {
	char  control.Character
	since uint64
}

// depart records the final state of body b, which leaves now other than
// through a portal, right after the snapshot that holds it (persist):
// see hostArea.departed.
func (ha *hostArea) depart(b *body) {
	if !departures() || ha.unacked == nil || ha.unacked.Seq != ha.seq {
		return // no snapshot was made (fenced, or a state failed to save): nothing can be written
	}
	for _, c := range ha.unacked.Characters {
		if c.Account == b.account {
			ha.departed[b.account] = departure{char: c, since: ha.seq}
			return
		}
	}
}

// presence reports the Area's connected peers and the accounts whose
// bodies are here: bound, and away (dropped within the grace, or crossing
// without a connection).
func (ha *hostArea) presence(now time.Time) {
	ha.lastPresence = now
	accounts := make([]uint64, 0, ha.bound)
	var away []uint64
	for _, b := range ha.order {
		if b.peer != nil {
			accounts = append(accounts, b.account)
		} else {
			away = append(away, b.account)
		}
	}
	all := make([]uint64, 0, len(accounts)+len(away))
	all = append(append(all, accounts...), away...)
	ha.bodiesSeen.Store(&all)
	ha.h.link.send(&control.Presence{Area: ha.id, Peers: ha.bound, Accounts: accounts, Away: away})
	ha.tellPresence()
}

// tellPresence sends every bound peer the players bound in the Area with
// their names, when that list changed since it was last sent (and to a
// peer bound since, which has not had it).
func (ha *hostArea) tellPresence() {
	list := &wire.Presence{Area: ha.id, Players: make([]wire.Player, 0, len(ha.order))}
	for _, b := range ha.order { // bound and away alike: an away body has a name too
		list.Players = append(list.Players, wire.Player{Entity: b.entity.ID(), Name: b.name})
	}
	msg, err := wire.Encode(list)
	if err != nil {
		ha.h.log.Error("encode presence", "area", ha.id, "err", err)
		return
	}
	changed := string(msg) != ha.lastPresenceMsg
	ha.lastPresenceMsg = string(msg)
	for _, b := range ha.order {
		if p := b.peer; p != nil && (changed || !p.hasPresence) {
			p.hasPresence = true
			p.sent(len(msg))
			_ = p.conn.Send(msg)
		}
	}
	ha.tellSpectators(msg, changed)
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

// release ends every session at the end of a close's grace: every intent
// still waiting is refused (code), every answer delivered, then each peer
// gets a last snapshot (reliable: its final ack_seq), rehello{code} and
// the close (1001). Nothing is applied after: the final snapshot persisted
// next holds everything every peer was told.
func (ha *hostArea) release(code wire.Code) {
	ha.a.RefuseAll(ecs.OutcomeClosing)
	ha.deliverAnswers(ha.a)
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		p.bind.Store(nil)
		p.lost.Store(uint32(code))
		p.send(ha.finalSnapshot(b))
		p.send(&wire.Rehello{Code: code, Detail: "the area closed"})
		p.conn.Close(gate.CloseGoingAway, "area closed")
		b.peer = nil
	}
	ha.bound = 0
}

// closeStep advances a close: after the grace, send the final snapshot;
// once it is acked (or the wait timed out), unload.
func (ha *hostArea) closeStep(now time.Time) {
	c := ha.closing
	if now.Before(c.graceEnd) {
		ha.scheduleChores(c.graceEnd)
		return
	}
	if !c.released {
		ha.release(wire.Code(c.reason))
		c.released = true
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
	ha.forgetBodies()
	ha.a.Freeze()
	ha.a.SetTimer(time.Time{})
	ha.h.unload(ha)
	ha.h.link.send(&control.AreaClosed{Area: ha.id, Seq: c.finalSeq, Acked: ackedFinal, Epoch: ha.epoch})
	ha.h.log.Info("area unloaded", "area", ha.id, "final_seq", c.finalSeq, "acked", ackedFinal)
}

// dropIndex removes token from one of the host's indexes.
func (h *Host) dropIndex(index map[string]*hostArea, token string) {
	h.mu.Lock()
	delete(index, token)
	h.mu.Unlock()
}
