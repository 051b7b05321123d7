package area

import (
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
)

func newHostArea(h *Host, m *control.SpawnArea) (*hostArea, error) {
	spec := build.Spec{ID: ecs.AreaID(m.Area), Kind: m.Kind, Template: m.Template, W: m.W, H: m.H, Seed: m.Seed,
		TickRate: h.cfg.TickRate, CellSize: h.cfg.CellSize}
	for _, p := range m.Portals {
		spec.Portals = append(spec.Portals, build.Square{X: p.X, Y: p.Y})
	}
	ha := &hostArea{
		h: h, id: m.Area, epoch: m.Epoch, spec: spec,
		bodies: make(map[uint64]*body), departed: make(map[uint64]departure), // grants, crossings, settling: made on their first entry (putLazy)
		seq: m.Seq, acked: m.Seq, lastPersist: time.Now(), waiting: make(map[*peer]uint64),
	}
	if len(m.Blob) > 0 {
		ha.persistedSum = blobSum(m.Blob)
	}
	left, err := ha.assemble(nil, m.Blob)
	if err != nil {
		return nil, err
	}
	if left > 0 {
		h.log.Warn("creatures of the stored area have no place in its map now; their spawners make new ones", "area", m.Area, "left_out", left)
	}
	a, eng := ha.a, ha.eng
	ha.kind = eng.RuleSet.Name
	g := a.Grid
	ha.bytes = areaBytes(int(g.W()), int(g.H()), int(eng.Hash.Size()), len(m.Portals) > 0, eng.Creatures != nil, a.Rules.LineOfSight)
	ha.placed.Store(&placement{epoch: m.Epoch, credential: m.Placement})
	ha.ackedSeen.Store(m.Seq)
	ha.setPortals(m.Portals)
	a.AfterTick = ha.afterTick
	a.OnTimer = func(_ *ecs.Area, now time.Time) { ha.chores(now) }
	a.Rest = ha.rest
	a.OnPanic = func(_ *ecs.Area, p ecs.Panic) { ha.fail(p) }
	a.OnControl = ha.deliverAnswers
	ha.armPanicPoint()
	ha.parkAt = time.Now().Add(h.cfg.ParkAfter)
	ha.armPark() // nobody may come: it parks then
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
	ha.unrounded = true
	ha.tellItems(a)
	ha.checkPortals(now)
	if !now.Before(ha.nextChores) {
		ha.chores(now)
	}
	ha.deliverAnswers(a)
	from, run := roundAt(a.Tick, ha.snapTick, uint64(ha.h.cfg.SnapshotEvery))
	ha.snapTick = from
	if run {
		ha.sendSnapshots()
		ha.unrounded = false
	}
}

// roundAt decides an Area's snapshot round at tick, the last round's
// phase being last and the cadence every ticks: whether the round runs
// at tick, and the tick the next one counts from.
//
// By ticks since the last round, not a tick's residue: a late host's tick
// numbers skip (ecs.Area.Tick), and a round is never skipped with them.
// A round that comes late keeps its phase: it runs at once, and the next
// counts from where this one was due. Were it to take the late tick's
// phase, each slot its host's clock skips would gather the Areas of the
// other phases into this one, and a host a little behind would pile its
// rounds into every other slot and fall further behind. An Area woken
// off its phase after a rest longer than the cadence (an intent posted to
// it) is late the same way: its round runs in the tick that applied the
// intent, not a tick later on the phase. That tick is then the only one
// the intent costs the Area (a home's player stepping five times a second
// wakes it five times, not up to ten), and the step is seen a tick
// sooner; a burst of intents split by the tick may make two rounds a
// tick apart, once per rest.
func roundAt(tick, last, every uint64) (from uint64, run bool) {
	d := tick - last
	if d < every {
		return last, false
	}
	return tick - d%every, true
}

// rest is the Area's ecs.Area.Rest: the engine found nothing that can
// change in the Area from tick on; it returns the last tick through which
// the host has nothing to do either. A close, spectators (they get every
// round), crossings in flight or an armed failpoint rest nothing; the
// chores rest until they have something to do (choresDue) or were asked
// to run sooner (scheduleChores). Rounds: a round must run at its
// cadence when a tick ran since the last one (an applied intent moves
// ack_seq, which no record shows) or when a client is not at rest in
// the interest system's eyes (a new session, a frame not written whole,
// a map changed); else no round runs until the first keep-alive is due
// (interest.System.Rests, KeepAliveAt). Asked ahead (ecs.Area.Ahead),
// at the end of the tick whose round handed a client its frame, the rest
// counts on the frame being written whole by the next slot
// (ecs.Area.Expect): if it is not, the clock visits the Area then and
// this rule, asked again, runs a round at the cadence. Area goroutine.
func (ha *hostArea) rest(a *ecs.Area, tick uint64) (until uint64) {
	if ha.panicPoint != "" || ha.closing != nil || ha.spectated() || len(ha.crossings) > 0 || len(ha.settling) > 0 {
		return 0
	}
	due := ha.nextChores
	if !due.Before(ha.choresRan.Add(choresEvery)) { // on their cadence, not asked for sooner
		due = later(due, ha.choresDue(a.Now))
	}
	wait := due.Sub(a.Now)
	if wait <= 0 {
		return 0
	}
	period := ha.h.clock.Period()
	until = tick + uint64((wait+period-1)/period) - 1     // the chores' slot runs
	round := ha.snapTick + uint64(ha.h.cfg.SnapshotEvery) // the next round by the cadence
	mustRound := ha.unrounded
	keepAlive := uint64(0)
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		if round, ok := ha.interest.RestsOnceWritten(&p.view); !ok ||
			p.view.Written.Load() != round && !a.Expect(&p.view.Written, round) { // asked ahead, its frame may be written by the next slot
			mustRound = true
			continue
		}
		if at := ha.interest.KeepAliveAt(&p.view); keepAlive == 0 || at < keepAlive {
			keepAlive = at
		}
	}
	if keepAlive != 0 {
		until = min(until, keepAlive-1)
	}
	if mustRound {
		until = min(until, round-1)
	}
	return until
}

// choresEvery is the chores' cadence in an Area that ticks.
const choresEvery = 250 * time.Millisecond

// chores is the Area's housekeeping: expire grants and dropped bodies,
// persist on cadence, resend an unacked snapshot, report presence, close,
// and freeze when nobody is here or coming. Active Areas run it every
// choresEvery from afterTick (an Area at rest only when choresDue says
// there is something to do), frozen ones from their timer.
func (ha *hostArea) chores(now time.Time) {
	cfg := &ha.h.cfg
	ha.choresRan, ha.nextChores = now, now.Add(choresEvery)
	for tok, g := range ha.grants {
		if now.After(g.expires) {
			delete(ha.grants, tok)
			ha.h.dropIndex(ha.h.grants, tok)
			ha.h.expire(tok)
		}
	}
	dropEmpty(&ha.grants)
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
	if ha.a.Mode() == ecs.Active && !now.Before(onSlot(ha.lastPersist, cfg.PersistEvery)) {
		ha.persist(now, false)
	}
	if ha.unacked != nil && now.Sub(ha.sentAt) >= 2*cfg.PersistEvery {
		ha.resend(now)
	}
	if ha.a.Mode() == ecs.Active && !now.Before(onSlot(ha.lastPresence, cfg.PresenceEvery)) {
		ha.presence(now)
	}
	if ha.freezes() {
		ha.persist(now, false) // what it was when it froze is what it comes back as
		ha.spectatorsFreeze()
		ha.a.Freeze()
		ha.parkAt = now.Add(cfg.ParkAfter)
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
		if ha.mayPark() && !now.Before(ha.parkAt) && ha.park(now) {
			ha.a.SetTimer(time.Time{})
			return
		}
		if ha.unacked == nil && len(ha.grants) == 0 {
			ha.a.SetTimer(ha.parkTime())
			return
		}
		ha.a.SetTimer(next)
	}
}

// freezes reports whether the chores freeze the Area: it is active, and
// nobody is here or coming, and nothing is in flight.
func (ha *hostArea) freezes() bool {
	return ha.closing == nil && ha.bound == 0 && len(ha.grants) == 0 && len(ha.bodies) == 0 && len(ha.crossings) == 0 && len(ha.settling) == 0 && ha.a.Mode() == ecs.Active
}

// choresDue is the first time the chores of an active Area have
// something to do, from its state as it is (now when they would freeze
// it): a grant expires, a dropped body's grace ends, the persist, the
// resend of an unacked snapshot, the presence report. An Area at rest
// sleeps until then, not through every choresEvery (hostArea.rest, which
// rests nothing with a close, crossings or settling in flight: their
// chores are not counted here). Area goroutine.
func (ha *hostArea) choresDue(now time.Time) time.Time {
	if ha.freezes() {
		return now
	}
	cfg := &ha.h.cfg
	due := earlier(onSlot(ha.lastPersist, cfg.PersistEvery), onSlot(ha.lastPresence, cfg.PresenceEvery))
	if ha.unacked != nil {
		due = earlier(due, ha.sentAt.Add(2*cfg.PersistEvery))
	}
	for _, g := range ha.grants {
		due = earlier(due, g.expires)
	}
	for _, b := range ha.order {
		if b.peer == nil && !b.droppedAt.IsZero() {
			due = earlier(due, b.droppedAt.Add(cfg.ResumeGrace))
		}
	}
	return due
}

// cadenceSlots is how many slots the cadence of a chore that reports to
// the director (Config.PersistEvery, Config.PresenceEvery) holds (onSlot).
const cadenceSlots = 32

// onSlot is when a chore last run at last is due again on a cadence of
// every: every after last, put off to the next boundary of the host's
// slots of that chore (every/cadenceSlots long, placed on the wall
// clock). The Areas due in one slot run it together, so that their
// snapshots reach the director in one burst, to be written in one
// transaction (a group commit), and their presence reports with one
// wake-up, rather than one each. The wall clock only places the
// boundary: the time keeps last's monotonic reading.
func onSlot(last time.Time, every time.Duration) time.Time {
	return slotAfter(last.Add(every), every/cadenceSlots)
}

// slotAfter is t put off to the next multiple of slot since the Unix
// epoch (t itself when it is one, or slot is not positive).
func slotAfter(t time.Time, slot time.Duration) time.Time {
	if slot <= 0 {
		return t
	}
	if off := time.Duration(t.UnixNano() % int64(slot)); off != 0 {
		return t.Add(slot - off)
	}
	return t
}

// earlier and later return the earlier and the later of two times.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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

// finalResendEvery is how often a closing Area sends its final snapshot
// again while no ack has come (within Config.FinalAckTimeout).
const finalResendEvery = time.Second

// closeStep advances a close: after the grace, send the final snapshot,
// and again every finalResendEvery until it is acked (a full outbox, or a
// director's full backlog, may have dropped it); once it is acked (or the
// wait timed out), unload.
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
		if ha.unacked != nil && now.Sub(ha.sentAt) >= finalResendEvery {
			ha.sentAt = now
			ha.h.link.send(ha.unacked)
		}
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
	ha.armPark() // its resend is off and its departures written: it parks when due
}
