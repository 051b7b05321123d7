//go:build leytest

package director

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// Scripted runs of the simulated realm (modelsim_test.go): the crash
// points of a crossing, each with the outcome it must have, and the
// interleavings each fence of the protocol is there for, each of which
// must go wrong when its fences are removed. Player 0 (the crossing
// player) starts in A on host 0; A's and B's hosts have room for one Area
// each.

// scriptFailure is a model failure in a scripted run.
type scriptFailure string

// scriptTB fails a scripted run by panicking with a scriptFailure, which
// runScript recovers.
type scriptTB struct{}

func (scriptTB) Helper()           {}
func (scriptTB) Fatal(args ...any) { panic(scriptFailure(fmt.Sprint(args...))) }
func (scriptTB) Fatalf(format string, args ...any) {
	panic(scriptFailure(fmt.Sprintf(format, args...)))
}

// runScript runs script on a fresh model with slots host slots and the
// mutation's fences removed, then quiesces (which checks the end state);
// it returns the model's failure ("" if none), player 0's Area, and the
// run's counts.
func runScript(t *testing.T, template string, slots int, mutation string, script func(m *model)) (failure string, area store.AreaID, stats *modelStats, trace []string) {
	dir, cleanup := modelRun(t, "ley-script", mutation)
	defer cleanup()
	inBubble(t, func() {
		defer func() {
			if r := recover(); r != nil {
				f, ok := r.(scriptFailure)
				if !ok {
					panic(r)
				}
				failure = string(f)
			}
		}()
		m := newModel(scriptTB{}, dir, mutation)
		m.hosts = make([]*mHost, slots)
		stats = m.stats
		defer m.close()
		defer func() { trace = m.trace }()
		m.start(template)
		script(m)
		m.quiesce()
		area = store.AreaID(m.players[0].area)
	})
	return failure, area, stats, trace
}

// joinNow has an offline player join and say hello, everything in flight
// delivered.
func (m *model) joinNow(p *mPlayer) {
	m.startJoin(p)
	m.run(nil)
	m.hello(p)
	if p.state != pOnline {
		m.fatalf("script: %v did not get in", p)
	}
}

// beginCrossing has an online player walk onto its portal and lets the
// time pass for the step: its body is in transit, its portal_out queued.
func (m *model) beginCrossing(p *mPlayer) {
	m.walk(p)
	m.advance(time.Second)
	m.observe()
	if !p.transit {
		m.fatalf("script: %v did not start crossing", p)
	}
}

// crossNow has an online player cross its portal and say hello on the
// other side, everything in flight delivered.
func (m *model) crossNow(p *mPlayer) {
	from := p.area
	m.beginCrossing(p)
	m.run(nil)
	m.hello(p)
	if p.state != pOnline || p.area == from {
		m.fatalf("script: %v did not cross", p)
	}
}

// arm arms the running director to crash at the next call of the store
// write op, just before it takes effect or just after.
func (m *model) arm(op string, after bool) {
	m.dir.st.mu.Lock()
	m.dir.st.arm = &modelArm{op: op, n: 1, after: after}
	m.dir.st.mu.Unlock()
}

// recoverDirector restarts a crashed director and connects every live
// host to it; late first lets the source host's crossing time out.
func (m *model) recoverDirector(late bool) {
	if m.dir != nil {
		m.fatalf("script: the director did not crash")
	}
	if late {
		m.advance(modelTransferTimeout + time.Second)
	}
	m.startDirector()
	for _, h := range m.hosts {
		if h != nil && h.alive && h.link == nil {
			m.connect(h)
		}
	}
}

// joinBWhileCutOffCrossing has player 0 step onto its portal in A, then
// A's host lose its link and the player its connection, and the player
// join B by the door (started, not answered): the body in A still
// crosses, on a host the director cannot reach.
func (m *model) joinBWhileCutOffCrossing() *mPlayer {
	m.withB()
	p := m.players[0]
	m.beginCrossing(p)
	m.cut(m.hosts[0].link)
	m.drop(p)
	m.run(nil)
	m.startJoinElsewhere(p)
	return p
}

// holding returns a hold for run: messages of type typ from (toDir) or to
// host h's connection stay in flight.
func holding(h *mHost, toDir bool, typ control.Type) func(*mLink, bool, control.Message) bool {
	return func(l *mLink, to bool, head control.Message) bool {
		return l.host == h && to == toDir && head.Type() == typ
	}
}

// withB has player 1 join A and cross to B first, so that B is live (on
// host 1) before player 0 crosses.
func (m *model) withB() {
	m.joinNow(m.players[1])
	m.crossNow(m.players[1])
}

// directorCrash is the script of a director crash at a store write of
// player 0's crossing, recovered promptly or after the source host's
// crossing timed out.
func directorCrash(op string, after, late, bLive bool) func(m *model) {
	return func(m *model) {
		if bLive {
			m.withB()
		}
		p := m.players[0]
		m.beginCrossing(p)
		m.arm(op, after)
		m.run(nil)
		m.recoverDirector(late)
	}
}

// refusedCrash is the script of a director crash at the refusal of
// player 0's crossing: B's host is dead, and no other has room for B.
func refusedCrash(after, late bool) func(m *model) {
	return func(m *model) {
		m.crashHost(m.hosts[1])
		m.beginCrossing(m.players[0])
		m.arm("RejectTransfer", after)
		m.run(nil)
		m.recoverDirector(late)
	}
}

type transferScript struct {
	name   string
	slots  int
	script func(m *model)
	want   string // "A" or "B": where player 0 must end up
	// expired is the number of pending transfers reconciliation must roll
	// back; breaks are the mutations (fences removed) under which the
	// script must fail, survives those under which it must still end
	// consistent (a fence the others back up).
	expired  int
	breaks   []string
	survives []string
}

var transferScripts = []transferScript{
	// A director crash at each store write of a crossing: before the write
	// takes effect, or just after it commits (the answer never sent).
	// Recovered at once, the source host's resends complete the crossing;
	// recovered after the host gave up, it must not complete, unless the
	// move had committed (then settling follows it).
	{name: "director crash before BeginTransfer, recovered at once", script: directorCrash("BeginTransfer", false, false, true), want: "B"},
	{name: "director crash before BeginTransfer, recovered late", script: directorCrash("BeginTransfer", false, true, true), want: "A"},
	{name: "director crash after BeginTransfer, recovered at once", script: directorCrash("BeginTransfer", true, false, true), want: "B"},
	{name: "director crash after BeginTransfer, recovered late", script: directorCrash("BeginTransfer", true, true, true), want: "A", expired: 1},
	{name: "director crash before B's BeginIncarnation, recovered at once", script: directorCrash("BeginIncarnation", false, false, false), want: "B"},
	{name: "director crash after B's BeginIncarnation, recovered at once", script: directorCrash("BeginIncarnation", true, false, false), want: "B"},
	{name: "director crash after B's BeginIncarnation, recovered late", script: directorCrash("BeginIncarnation", true, true, false), want: "A", expired: 1},
	{name: "director crash before MoveCharacter, recovered at once", script: directorCrash("MoveCharacter", false, false, true), want: "B"},
	{name: "director crash before MoveCharacter, recovered late", script: directorCrash("MoveCharacter", false, true, true), want: "A", expired: 1},
	{name: "director crash after MoveCharacter, recovered at once", script: directorCrash("MoveCharacter", true, false, true), want: "B"},
	// Recovered after the host gave up, the host restored the player in A:
	// settling asks on and follows the store's answer; and the host's
	// registration with the new director lets go of the body of a
	// character the store has in B. Without both, the player is a ghost.
	{name: "director crash after MoveCharacter, recovered late: settling", script: directorCrash("MoveCharacter", true, true, true), want: "B",
		breaks: []string{mutSettling + "+" + mutAdoptEvict}, survives: []string{mutSettling, mutAdoptEvict}},
	// A refused crossing (no host has room for B): the crash before the
	// refusal is recorded leaves the transfer pending, and a resend the next
	// director takes in time completes it (B can start by then); after the
	// window it is refused. Recorded, it stays refused.
	{name: "director crash before RejectTransfer, recovered at once", script: refusedCrash(false, false), want: "B"},
	{name: "director crash before RejectTransfer, recovered late", script: refusedCrash(false, true), want: "A", expired: 1},
	{name: "director crash after RejectTransfer, recovered at once", script: refusedCrash(true, false), want: "A"},
	{name: "director crash after RejectTransfer, recovered late", script: refusedCrash(true, true), want: "A"},
	// The director and the source host both die with the transfer pending:
	// nobody resends it, and reconciliation rolls it back.
	{name: "director and source host crash with the transfer pending: expiry", want: "A", expired: 1, script: func(m *model) {
		m.withB()
		m.beginCrossing(m.players[0])
		m.arm("BeginTransfer", true)
		m.run(nil)
		m.crashHost(m.hosts[0])
		m.recoverDirector(false)
	}},
	// Host crashes, the director staying up.
	{name: "source host crash before portal_out leaves", want: "A", script: func(m *model) {
		m.withB()
		m.beginCrossing(m.players[0])
		m.crashHost(m.hosts[0])
	}},
	{name: "source host crash after the move, before its answer", want: "B", script: func(m *model) {
		m.withB()
		m.beginCrossing(m.players[0])
		m.run(holding(m.hosts[0], false, control.TypePortalResult))
		m.crashHost(m.hosts[0])
	}},
	{name: "destination host crash before the grant's ack", want: "A", script: func(m *model) {
		m.withB()
		m.beginCrossing(m.players[0])
		m.run(holding(m.hosts[1], true, control.TypeGrantAck))
		m.crashHost(m.hosts[1])
	}},
	{name: "destination host crash after the move, before the player says hello", want: "B", script: func(m *model) {
		m.withB()
		p := m.players[0]
		m.beginCrossing(p)
		m.run(holding(m.hosts[0], false, control.TypePortalResult))
		m.crashHost(m.hosts[1])
		m.run(nil) // the answer reaches A: the player is sent to a dead host, and joins by the door
	}},
	// The fences. The source host dies while its crossing waits for B's
	// grant; the player comes back by the door into a new incarnation of
	// A. The account's lock holds the join until the crossing is decided;
	// without it, the store's epoch check refuses the stale incarnation's
	// move (the join made A's new incarnation before anything else), and
	// the join reads the character again after its evictions and refuses
	// to grant on a character that moved; and the store refuses a move
	// whose snapshot at the portal A never stored (whether A's crash came
	// before that write is the machine's timing, so the three alone may or
	// may not hold it). Without all four, the move commits under the
	// player's feet.
	{name: "stale incarnation's crossing against a player back in A", want: "A",
		breaks: []string{mutStoreEpoch + "+" + mutAccountLock + "+" + mutJoinRecheck + "+" + mutFromSeq},
		survives: []string{mutStoreEpoch, mutAccountLock, mutSourceEpoch, mutJoinRecheck, mutFromSeq,
			mutStoreEpoch + "+" + mutAccountLock, mutStoreEpoch + "+" + mutJoinRecheck, mutAccountLock + "+" + mutJoinRecheck},
		script: func(m *model) {
			m.withB()
			p := m.players[0]
			m.beginCrossing(p)
			hold := holding(m.hosts[1], true, control.TypeGrantAck)
			m.run(hold)
			m.crashHost(m.hosts[0])
			m.startHost(0)
			m.startJoin(p)
			m.run(hold)
			m.observe()
			m.hello(p)
			m.run(nil)
		}},
	// A host whose connection broke keeps the crossing player's body,
	// dropped, still crossing; the player joins B by the door meanwhile
	// (the director cannot reach A's host to evict it) and says hello
	// there; A's host registers again. Its adoption evicts the body of a
	// character the store has in B even while it crosses: answered Busy,
	// it would be restored in A once its crossing is refused, and the
	// player would have bodies in A and in B. The move by the door ended
	// A's cut-off incarnation too (the door fence), so its adoption is
	// refused by its epoch: either fence holds alone.
	{name: "crossing body of a player who joined B by the door while its host was cut off", want: "B",
		breaks: []string{mutCrossEvict + "+" + mutDoorFence}, survives: []string{mutCrossEvict, mutDoorFence},
		script: func(m *model) {
			p := m.joinBWhileCutOffCrossing()
			m.run(nil)
			m.hello(p)
			m.connect(m.hosts[0])
			m.advance(modelTransferTimeout + time.Second) // A's host resends its crossing, then gives up on it
			m.run(nil)
		}},
	// The same, with the host registering again while the join is under
	// way (its grant in B answered, the move not yet made): the adoption
	// finds the account's lock held (a join of it is under way) and lets
	// go of the body. Adopting without the locks, it reads the character
	// still in A, the join's evictions have already looked, and the
	// player has bodies in A and in B. The join's move ends A's cut-off
	// incarnation too, and no adoption of it is made while it does (the
	// door fence): either fence holds alone.
	{name: "crossing body adopted while its player's join of B by the door is under way", want: "B",
		breaks: []string{mutAdoptLock + "+" + mutDoorFence}, survives: []string{mutAdoptLock, mutDoorFence},
		script: func(m *model) {
			p := m.joinBWhileCutOffCrossing()
			hold := holding(m.hosts[1], true, control.TypeGrantAck)
			m.run(hold)
			m.connect(m.hosts[0])
			m.run(nil)
			m.hello(p)
			m.advance(modelTransferTimeout + time.Second)
			m.run(nil)
		}},
	// A host whose connection broke keeps its Area (a zombie incarnation)
	// with the crossing player's body, dropped, still crossing; the player
	// comes back by the door into a new incarnation elsewhere; the zombie
	// registers again and resends its crossing. The director refuses a
	// portal_out from anything but the source's live incarnation; without
	// that, the store's epoch check refuses the move, and the from-seq
	// fence too (the zombie's snapshot at the portal was never stored).
	// Without all three, it commits and the player in A is a ghost.
	{name: "zombie incarnation's crossing after the player came back", slots: 3, want: "A",
		breaks: []string{mutStoreEpoch + "+" + mutSourceEpoch + "+" + mutFromSeq},
		survives: []string{mutStoreEpoch, mutSourceEpoch, mutAccountLock, mutFromSeq,
			mutStoreEpoch + "+" + mutSourceEpoch, mutSourceEpoch + "+" + mutFromSeq, mutStoreEpoch + "+" + mutFromSeq},
		script: func(m *model) {
			m.withB()
			m.startHost(2)
			p := m.players[0]
			m.beginCrossing(p)
			m.cut(m.hosts[0].link)
			m.drop(p)
			m.run(nil)
			m.joinNow(p)
			m.connect(m.hosts[0])
			m.advance(60 * time.Millisecond) // the zombie's next tick resends its crossing
			m.run(nil)
		}},
}

// TestTransferScripts runs each scripted interleaving on the real code:
// it must end consistent, with player 0 where the script says (and
// reconciliation having rolled back the pending transfers it says); with
// the fences it names removed, it must fail; and with one fence of a
// pair removed, the other must still hold.
//
// This is the mutation check of make test (under the race detector); the
// random model's (TestTransferModelMutations) runs without it.
func TestTransferScripts(t *testing.T) {
	template := modelTemplate(t)
	for _, sc := range transferScripts {
		t.Run(strings.ReplaceAll(sc.name, " ", "_"), func(t *testing.T) {
			slots := max(sc.slots, modelHostSlots)
			failure, area, stats, trace := runScript(t, template, slots, "", sc.script)
			if failure != "" {
				t.Fatalf("the realm ends inconsistent: %s", failure)
			}
			if want := map[string]store.AreaID{"A": 1, "B": 2}[sc.want]; area != want {
				t.Errorf("player 0 ends in area %d; want %s; the run:\n  %s", area, sc.want, strings.Join(trace, "\n  "))
			}
			if stats.expired != sc.expired {
				t.Errorf("reconciliation rolled back %d pending transfers; want %d", stats.expired, sc.expired)
			}
			for _, mut := range sc.breaks {
				failure, _, _, trace := runScript(t, template, slots, mut, sc.script)
				if failure == "" {
					t.Errorf("with %s removed, the script still ends consistent; the run:\n  %s", mut, strings.Join(trace, "\n  "))
					continue
				}
				if i := strings.Index(failure, "\nstate:"); i >= 0 {
					failure = failure[:i]
				}
				t.Logf("as expected, without %s: %s", mut, failure)
			}
			for _, mut := range sc.survives {
				if failure, _, _, _ := runScript(t, template, slots, mut, sc.script); failure != "" {
					t.Errorf("with %s removed alone, the script fails (the other fences no longer back it up): %s", mut, failure)
				}
			}
		})
	}
}
