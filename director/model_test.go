package director

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
	"pgregory.net/rapid"
)

// This is a model test of the portal transfer protocol: the source host,
// the destination host and the director are small state machines with the
// implementation's rules (commit last within the host's deadline, resend
// until answered, restore on timeout and keep settling, follow a late
// success, fence stale incarnations), talking over a message bus that
// drops, duplicates, reorders and delays, while hosts and the director
// crash and restart. The store is the real SQLite store, so its
// idempotency, expiry and fencing are what is tested.

const (
	modelTimeout = 4000   // the hosts' transfer timeout, ms
	modelMargin  = 2000   // the director's margin before that deadline, ms
	modelSettle  = 600000 // the hosts' settleFor
	modelResend  = 2000
)

type modelMsg struct {
	kind    string // out, result, snap, ack
	tid     string
	acct    store.AccountID
	from    store.AreaID
	to      store.AreaID
	ok      bool
	epoch   store.Epoch
	seq     store.Seq
	chars   []store.AccountID
	deadlin int64
}

type modelCrossing struct {
	acct     store.AccountID
	to       store.AreaID
	deadline int64
	sentAt   int64
}

type modelHost struct {
	area     store.AreaID
	alive    bool
	epoch    store.Epoch
	seq      store.Seq
	bodies   map[store.AccountID]bool
	transit  map[store.AccountID]bool
	pending  map[string]*modelCrossing
	settling map[string]*modelCrossing
}

type model struct {
	t        *rapid.T
	ctx      context.Context
	st       store.Store
	now      int64
	hosts    map[store.AreaID]*modelHost
	dirAlive bool
	cache    map[string]bool // transfer -> ok
	bus      []modelMsg
	players  []store.AccountID
	nextTID  int
	areaSeq  map[store.AreaID]store.Seq
}

func (m *model) other(a store.AreaID) store.AreaID {
	for id := range m.hosts {
		if id != a {
			return id
		}
	}
	panic("one area")
}

func (m *model) at() time.Time { return time.UnixMilli(m.now) }

// bodyOf returns the area holding acct's body, if any.
func (m *model) bodyOf(acct store.AccountID) (store.AreaID, bool) {
	for id, h := range m.hosts {
		if h.alive && h.bodies[acct] {
			return id, true
		}
	}
	return 0, false
}

func (m *model) join(acct store.AccountID) {
	if !m.dirAlive {
		return
	}
	if _, ok := m.bodyOf(acct); ok {
		return
	}
	ch, err := m.st.Character(m.ctx, acct)
	if err != nil {
		m.t.Fatal(err)
	}
	if h := m.hosts[ch.Area]; h.alive {
		h.bodies[acct] = true
	}
}

func (m *model) cross(acct store.AccountID) {
	area, ok := m.bodyOf(acct)
	if !ok {
		return
	}
	h := m.hosts[area]
	if h.transit[acct] {
		return
	}
	m.nextTID++
	tid := fmt.Sprintf("t%d", m.nextTID)
	h.transit[acct] = true
	c := &modelCrossing{acct: acct, to: m.other(area), deadline: m.now + modelTimeout, sentAt: m.now}
	h.pending[tid] = c
	m.bus = append(m.bus, modelMsg{kind: "out", tid: tid, acct: acct, from: area, to: c.to, epoch: h.epoch, deadlin: c.deadline})
}

// director handles a portal_out as cross() does: commit last, in window.
func (m *model) directorOut(msg modelMsg) {
	if ok, hit := m.cache[msg.tid]; hit {
		m.bus = append(m.bus, modelMsg{kind: "result", tid: msg.tid, acct: msg.acct, from: msg.from, to: msg.to, ok: ok})
		return
	}
	if t, err := m.st.Transfer(m.ctx, store.TransferID(msg.tid)); err == nil && t.Status != store.TransferPending {
		ok := t.Status == store.TransferDone
		m.cache[msg.tid] = ok
		m.bus = append(m.bus, modelMsg{kind: "result", tid: msg.tid, acct: msg.acct, from: msg.from, to: msg.to, ok: ok})
		return
	}
	src := m.hosts[msg.from]
	if !src.alive || src.epoch != msg.epoch {
		m.reply(msg, false)
		return
	}
	expires := time.UnixMilli(msg.deadlin - modelMargin)
	t := store.Transfer{ID: store.TransferID(msg.tid), Account: msg.acct, From: msg.from, To: msg.to, X: 1, Y: 1, Created: m.at(), Expires: expires}
	if _, err := m.st.BeginTransfer(m.ctx, t); err != nil {
		m.t.Fatalf("begin transfer: %v", err)
	}
	if !m.hosts[msg.to].alive { // B cannot take the grant
		m.st.RejectTransfer(m.ctx, t.ID, "grant_failed")
		m.reply(msg, false)
		return
	}
	if m.at().After(expires) {
		m.st.RejectTransfer(m.ctx, t.ID, store.ResultTimeout)
		m.reply(msg, false)
		return
	}
	t.FromEpoch = msg.epoch
	t, err := m.st.MoveCharacter(m.ctx, t, m.at())
	if err != nil {
		m.t.Fatalf("move character: %v", err)
	}
	m.reply(msg, t.Result == store.ResultMoved)
}

func (m *model) reply(msg modelMsg, ok bool) {
	m.cache[msg.tid] = ok
	m.bus = append(m.bus, modelMsg{kind: "result", tid: msg.tid, acct: msg.acct, from: msg.from, to: msg.to, ok: ok})
}

// hostResult handles a portal_result at the source host.
func (m *model) hostResult(msg modelMsg) {
	h := m.hosts[msg.from]
	if !h.alive {
		return
	}
	arrive := func() {
		delete(h.bodies, msg.acct)
		delete(h.transit, msg.acct)
		if dst := m.hosts[msg.to]; dst.alive {
			dst.bodies[msg.acct] = true // the client says hello with its grant
		}
	}
	if _, ok := h.pending[msg.tid]; ok {
		delete(h.pending, msg.tid)
		if msg.ok {
			arrive()
		} else {
			delete(h.transit, msg.acct)
		}
		return
	}
	if _, ok := h.settling[msg.tid]; !ok {
		return // a duplicate or an answer to a crossing long settled: ignored
	}
	delete(h.settling, msg.tid)
	if msg.ok && h.bodies[msg.acct] {
		// A late success: follow the store; a newer crossing is moot.
		for tid, c := range h.pending {
			if c.acct == msg.acct {
				delete(h.pending, tid)
			}
		}
		arrive()
	}
}

func (m *model) snapshot(area store.AreaID) {
	h := m.hosts[area]
	if !h.alive {
		return
	}
	h.seq++
	var chars []store.AccountID
	for a := range h.bodies {
		chars = append(chars, a)
	}
	m.bus = append(m.bus, modelMsg{kind: "snap", from: area, epoch: h.epoch, seq: h.seq, chars: chars})
}

func (m *model) directorSnap(msg modelMsg) {
	before := m.areaSeq[msg.from]
	var cs []store.CharacterState
	for _, a := range msg.chars {
		cs = append(cs, store.CharacterState{Account: a, X: 2, Y: 2})
	}
	res, err := m.st.WriteSnapshot(m.ctx, store.Snapshot{Area: msg.from, Epoch: msg.epoch, Seq: msg.seq, Blob: []byte{1}, Characters: cs, At: m.at()})
	_, seq, epoch, rerr := m.st.AreaSnapshot(m.ctx, msg.from)
	if rerr != nil {
		m.t.Fatal(rerr)
	}
	switch {
	case errors.Is(err, store.ErrFenced):
		if epoch == msg.epoch {
			m.t.Fatalf("snapshot of the current epoch %d fenced", epoch)
		}
	case err != nil:
		m.t.Fatal(err)
	case res.Applied != (msg.seq > before):
		m.t.Fatalf("snapshot seq %d over stored %d: applied=%v", msg.seq, before, res.Applied)
	}
	if seq < before {
		m.t.Fatalf("area %d's stored seq went back from %d to %d", msg.from, before, seq)
	}
	m.areaSeq[msg.from] = seq
}

// advance moves time on: hosts time out crossings (restore, then settle)
// and resend what is unanswered.
func (m *model) advance(ms int64) {
	m.now += ms
	for id, h := range m.hosts {
		if !h.alive {
			continue
		}
		for tid, c := range h.pending {
			if m.now > c.deadline {
				delete(h.pending, tid)
				delete(h.transit, c.acct)
				c.deadline = m.now + modelSettle
				h.settling[tid] = c
			}
		}
		for _, set := range []map[string]*modelCrossing{h.pending, h.settling} {
			for tid, c := range set {
				if m.now > c.deadline {
					delete(set, tid)
					continue
				}
				if m.now-c.sentAt >= modelResend {
					c.sentAt = m.now
					m.bus = append(m.bus, modelMsg{kind: "out", tid: tid, acct: c.acct, from: id, to: c.to, epoch: h.epoch, deadlin: c.deadline})
				}
			}
		}
	}
}

func (m *model) deliver(i int) {
	msg := m.bus[i]
	m.bus = append(m.bus[:i], m.bus[i+1:]...)
	switch msg.kind {
	case "out":
		if m.dirAlive {
			m.directorOut(msg)
		}
	case "result":
		m.hostResult(msg)
	case "snap":
		if m.dirAlive {
			m.directorSnap(msg)
		}
	}
}

func (m *model) restartHost(area store.AreaID) {
	ep, err := m.st.BeginIncarnation(m.ctx, area)
	if err != nil {
		m.t.Fatal(err)
	}
	m.hosts[area] = &modelHost{area: area, alive: true, epoch: ep, bodies: map[store.AccountID]bool{},
		transit: map[store.AccountID]bool{}, pending: map[string]*modelCrossing{}, settling: map[string]*modelCrossing{}}
}

// check holds after every step: every character is in exactly one of the
// two Areas, and no player has a body in two Areas.
func (m *model) check() {
	for _, p := range m.players {
		ch, err := m.st.Character(m.ctx, p)
		if err != nil {
			m.t.Fatalf("player %d lost: %v", p, err)
		}
		if _, ok := m.hosts[ch.Area]; !ok {
			m.t.Fatalf("player %d in unknown area %d", p, ch.Area)
		}
		n := 0
		for _, h := range m.hosts {
			if h.alive && h.bodies[p] {
				n++
			}
		}
		if n > 1 {
			m.t.Fatalf("player %d has bodies in %d areas", p, n)
		}
	}
}

func TestTransferModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), fmt.Sprintf("m%d.db", time.Now().UnixNano())))
		if err != nil {
			rt.Fatal(err)
		}
		defer st.Close()
		m := &model{t: rt, ctx: ctx, st: st, now: 1_000_000, hosts: map[store.AreaID]*modelHost{}, dirAlive: true,
			cache: map[string]bool{}, areaSeq: map[store.AreaID]store.Seq{}}
		owner, err := st.CreateAccount(ctx, store.NewAccount{Email: "o@m", Name: "o", Created: m.at()})
		if err != nil {
			rt.Fatal(err)
		}
		var areas []store.AreaID
		for i := 0; i < 2; i++ {
			a, err := st.CreateArea(ctx, store.NewArea{Owner: owner.ID, Kind: "home", Name: fmt.Sprint(i), W: 8, H: 8, Created: m.at()})
			if err != nil {
				rt.Fatal(err)
			}
			areas = append(areas, a.ID)
			m.restartHost(a.ID)
		}
		for i := 0; i < 3; i++ {
			p, err := st.CreateAccount(ctx, store.NewAccount{Email: fmt.Sprintf("p%d@m", i), Name: "p", Created: m.at()})
			if err != nil {
				rt.Fatal(err)
			}
			for _, a := range areas {
				st.AddMember(ctx, a, p.ID, store.RoleMember, m.at())
			}
			if _, _, err := st.EnsureCharacter(ctx, p.ID, areas[0], m.at()); err != nil {
				rt.Fatal(err)
			}
			m.players = append(m.players, p.ID)
		}
		steps := rapid.IntRange(10, 120).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			p := m.players[rapid.IntRange(0, len(m.players)-1).Draw(rt, "player")]
			area := areas[rapid.IntRange(0, 1).Draw(rt, "area")]
			switch rapid.IntRange(0, 11).Draw(rt, "action") {
			case 0:
				m.join(p)
			case 1, 2:
				m.cross(p)
			case 3, 4, 5:
				if len(m.bus) > 0 {
					m.deliver(rapid.IntRange(0, len(m.bus)-1).Draw(rt, "msg")) // any order
				}
			case 6:
				if len(m.bus) > 0 {
					i := rapid.IntRange(0, len(m.bus)-1).Draw(rt, "dup")
					m.bus = append(m.bus, m.bus[i])
				}
			case 7:
				if len(m.bus) > 0 {
					i := rapid.IntRange(0, len(m.bus)-1).Draw(rt, "drop")
					m.bus = append(m.bus[:i], m.bus[i+1:]...)
				}
			case 8:
				m.advance(int64(rapid.IntRange(100, 5000).Draw(rt, "ms")))
			case 9:
				m.snapshot(area)
			case 10:
				m.hosts[area].alive = false // a crash: all it held in memory is gone
				m.restartHost(area)
			case 11:
				m.dirAlive = !m.dirAlive
				if !m.dirAlive {
					m.cache = map[string]bool{} // its memory is gone
				}
				if _, err := st.ExpireTransfers(ctx, m.at()); err != nil { // reconciliation at restart
					rt.Fatal(err)
				}
			}
			m.check()
		}
		// Quiescence: the director up, no more faults; let every resend and
		// answer through, past every deadline and settling period.
		m.dirAlive = true
		for i := 0; i < 40; i++ { // 80 s: well inside every settling period
			m.advance(modelResend)
			for len(m.bus) > 0 {
				m.deliver(0)
			}
			m.check()
		}
		// Now every body is where the store says its player is.
		for _, p := range m.players {
			ch, _ := st.Character(ctx, p)
			if area, ok := m.bodyOf(p); ok && area != ch.Area {
				rt.Fatalf("player %d's body is in area %d but the store says %d after quiescence", p, area, ch.Area)
			}
		}
	})
}
