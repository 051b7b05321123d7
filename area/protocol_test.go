package area

import (
	"reflect"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
)

// answers reads until every seq in want is answered (an intent_result, or
// a snapshot's ack_seq reaching it in serial order); it returns the
// rejections and fails on a seq answered twice.
func answers(t *testing.T, c *client, want ...uint32) map[uint32]wire.Code {
	t.Helper()
	got := map[uint32]wire.Code{}
	deadline := time.Now().Add(5 * time.Second)
	done := func() bool {
		for _, s := range want {
			if _, ok := got[s]; !ok && (c.v.AckSeq != s && !wire.SeqAfter(c.v.AckSeq, s)) {
				return false
			}
		}
		return true
	}
	for !done() {
		switch m := c.next(time.Until(deadline)).(type) {
		case *wire.IntentResult:
			if _, dup := got[m.Seq]; dup {
				t.Fatalf("seq %d answered twice", m.Seq)
			}
			got[m.Seq] = m.Code
		case *wire.Error:
			t.Fatalf("error %v (ref_seq %d): %s", m.Code, m.RefSeq, m.Detail)
		}
	}
	return got
}

// raw sends a CBOR value as one message.
func (cl *client) raw(v any) {
	cl.t.Helper()
	b, err := cbor.Marshal(v)
	if err != nil {
		cl.t.Fatal(err)
	}
	if err := cl.c.WriteMessage(b); err != nil {
		cl.t.Fatal(err)
	}
}

// TestIntentSeqRules: seqs start at 1 and go up in serial-number order
// (RFC 1982) through the wrap at 2^32; a repeated or older seq (0
// included) is refused STALE_SEQ and never applied; an intent too broken
// to decode but whose seq can be read is answered by its seq (MALFORMED,
// or VERSION_UNSUPPORTED for an envelope of another version), and one
// whose seq cannot be read is answered error{MALFORMED, ref_seq 0} and
// takes no seq.
func TestIntentSeqRules(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 32, 32)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 10, 10, time.Minute), 1)
	expectMsg[*wire.Snapshot](c, 5*time.Second)
	step := func(seq uint32, dir wire.Dir) {
		c.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: dir})
	}

	step(0, wire.DirE) // seq 0 is not after the session's start
	if r := expectMsg[*wire.IntentResult](c, 5*time.Second); r.Seq != 0 || r.Code != wire.CodeStaleSeq {
		t.Fatalf("seq 0: %+v; want STALE_SEQ", r)
	}
	step(1, wire.DirE)
	if got := answers(t, c, 1); len(got) != 0 || c.you().X != 11 {
		t.Fatalf("seq 1: refusals %v, x %d; want applied, x 11", got, c.you().X)
	}
	step(1, wire.DirE) // repeated
	if r := expectMsg[*wire.IntentResult](c, 5*time.Second); r.Seq != 1 || r.Code != wire.CodeStaleSeq {
		t.Fatalf("repeated seq 1: %+v; want STALE_SEQ", r)
	}
	// Wrong arity, seq readable: answered by its seq; the next seq goes on.
	c.raw([]any{wire.Version, wire.TypeIntent, []any{2, 0, 2}})
	step(3, wire.DirE)
	if got := answers(t, c, 2, 3); got[2] != wire.CodeMalformed || len(got) != 1 {
		t.Fatalf("seqs 2 (wrong arity) and 3: %v; want 2 MALFORMED, 3 applied", got)
	}
	if x := c.you().X; x != 12 {
		t.Fatalf("after seq 3 x = %d; want 12 (seq 1 and 3 applied, the stale and malformed ones not)", x)
	}
	// An intent in protocol version 1: answered by its seq.
	c.raw([]any{1, wire.TypeIntent, []any{4, 0, 2, []any{0, 0}}})
	if got := answers(t, c, 4); got[4] != wire.CodeVersionUnsupported {
		t.Fatalf("seq 4 in version 1: %v; want VERSION_UNSUPPORTED", got)
	}
	// A seq that cannot be read (a float): error{MALFORMED, 0}, no seq taken.
	c.raw([]any{wire.Version, wire.TypeIntent, []any{5.5, 0, 2, []any{0, 0}}})
	if e := expectMsg[*wire.Error](c, 5*time.Second); e.Code != wire.CodeMalformed || e.RefSeq != 0 {
		t.Fatalf("float seq: %+v; want error MALFORMED, ref_seq 0", e)
	}
	step(5, wire.DirS)
	if got := answers(t, c, 5); len(got) != 0 {
		t.Fatalf("seq 5 after an unreadable one: %v; want applied", got)
	}
	// Through the wrap: far ahead (within 2^31), then 2^32-1, 0, 1.
	dirs := []wire.Dir{wire.DirS, wire.DirN, wire.DirS, wire.DirN}
	for i, seq := range []uint32{5 + 1<<31 - 1, 1<<32 - 1, 0, 1} {
		time.Sleep(200 * time.Millisecond) // within the movement budget
		step(seq, dirs[i])
		if got := answers(t, c, seq); len(got) != 0 || c.v.AckSeq != seq {
			t.Fatalf("seq %d: refusals %v, ack_seq %d; want applied and acknowledged", seq, got, c.v.AckSeq)
		}
	}
	step(1<<32-1, wire.DirS) // now behind
	if r := expectMsg[*wire.IntentResult](c, 5*time.Second); r.Seq != 1<<32-1 || r.Code != wire.CodeStaleSeq {
		t.Fatalf("seq 2^32-1 after the wrap: %+v; want STALE_SEQ", r)
	}
}

// TestJoinTellsTheArea: after hello_ack a client is told the Area
// (area_info: size, cells, rules, pacing), each cell's map in view
// (static, with the walls), and who is there (presence, with names), and
// told again of presence when someone joins or leaves; a resume's
// hello_ack carries the session's protocol version.
func TestJoinTellsTheArea(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.InterestRadius = 0; c.ResumeGrace = 500 * time.Millisecond })
	d.spawn(1, 20, 12)
	ha := h.area(1)
	walled := make(chan struct{})
	ha.a.PostControl(func(a *ecs.Area) {
		for y := int32(0); y < 12; y++ {
			a.Grid.SetWall(a.Grid.Cell(15, y))
		}
		close(walled)
	})
	<-walled
	ada := dial(t, h)
	d.Send(&control.Grant{Area: 1, Token: "g-ada", JoinID: 1, TTLMS: 60000, Name: "ada", Character: control.Character{Account: 100, X: 2, Y: 2, Placed: true}})
	expect[*control.GrantAck](d, 5*time.Second)
	ack := ada.hello("g-ada", 1)
	info := expectMsg[*wire.AreaInfo](ada, 5*time.Second)
	want := wire.AreaInfo{Area: 1, Kind: "village", W: 20, H: 12, CellSize: 8, TickHz: 20, SnapshotHz: 10, StepMS: 200, QueueLen: ecs.QueueLen,
		InterestRadius: 0, ResumeGraceMS: uint32(h.cfg.ResumeGrace.Milliseconds()), Rules: wire.RuleDiagonal | wire.RuleMayBuild, PlayerHP: 100, Creatures: []wire.CreatureKind{},
		Items: tell.ItemKinds(content.Default().Items()), Plots: []wire.Plot{}}
	if len(want.Items) == 0 || want.Items[0].Name != "chair" || want.Items[0].Flags != wire.ItemBlocks {
		t.Fatalf("the item kinds told: %+v", want.Items)
	}
	if !reflect.DeepEqual(*info, want) {
		t.Fatalf("area_info %+v; want %+v", *info, want)
	}
	// 20x12 in cells of 8: 3 x 2 cells, every one in view (radius 0).
	waitSnapshot(t, ada, func(*wire.Snapshot) bool { return len(ada.v.Statics) == 6 && len(ada.v.Players) == 1 })
	if ada.v.Players[ack.Entity] != "ada" {
		t.Fatalf("presence %v; want ada as entity %d", ada.v.Players, ack.Entity)
	}
	// Cell 1 holds x 8..15 of rows 0..7: x 15 is a wall.
	if f := ada.v.Statics[1].Floor; len(f) != 8*2*2 || f[0] != uint32(wire.FloorGrass) || f[1] != 7 || f[2] != uint32(wire.FloorWall) || f[3] != 1 {
		t.Fatalf("cell 1's floor runs %v; want 7 open, 1 wall, per row", f)
	}
	// Cell 2 is the narrow one at the right edge: x 16..19.
	if f := ada.v.Statics[2].Floor; len(f) != 2 || f[1] != 4*8 {
		t.Fatalf("cell 2's floor runs %v; want one run of 32 open squares", f)
	}
	bo := dial(t, h)
	d.Send(&control.Grant{Area: 1, Token: "g-bo", JoinID: 2, TTLMS: 60000, Name: "bo", Character: control.Character{Account: 101, X: 4, Y: 4, Placed: true}})
	expect[*control.GrantAck](d, 5*time.Second)
	bo.hello("g-bo", 2)
	p := expectMsg[*wire.Presence](ada, 5*time.Second)
	if len(p.Players) != 2 {
		t.Fatalf("presence after bo joined: %+v; want ada and bo", p)
	}
	bo.c.Close(1000, "")
	// Bo is away (its body waits out the resume grace, named in presence,
	// flagged away); when the grace ends the body goes, and presence says so.
	waitSnapshot(t, ada, func(*wire.Snapshot) bool {
		for _, e := range ada.v.Entities {
			if e.Kind == wire.KindPlayer && e.ID != ack.Entity && e.Flags&wire.FlagAway != 0 {
				return ada.v.Players[e.ID] == "bo"
			}
		}
		return false
	})
	if p := expectMsg[*wire.Presence](ada, 5*time.Second); len(p.Players) != 1 {
		t.Fatalf("presence after bo's body left: %+v; want ada alone", p)
	}
	// A resume: the same session, its version in hello_ack.
	ada.c.NetConn().Close()
	again := dial(t, h)
	again.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 9})
	if r := expectMsg[*wire.HelloAck](again, 5*time.Second); r.Version != wire.Version || r.JoinID != 9 {
		t.Fatalf("resume's hello_ack %+v; want version %d, join_id 9", r, wire.Version)
	}
}

// TestClosingSequence: area_closing{reason, grace}; during the grace play
// goes on (intents applied); at its end every intent still waiting is
// refused AREA_CLOSING, a last snapshot carries the final ack_seq, then
// rehello{reason}, then the close (1001); and the final snapshot the
// director gets holds the last applied step.
func TestClosingSequence(t *testing.T) {
	h, d := testHost(t, nil)
	d.AutoAck.Store(true)
	d.spawn(1, 32, 32)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 5, 5, time.Minute), 1)
	expectMsg[*wire.Snapshot](c, 5*time.Second)
	d.send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeRealmClosed), GraceMS: 1500})
	ac := expectMsg[*wire.AreaClosing](c, 5*time.Second)
	if ac.Reason != wire.CodeRealmClosed || ac.GraceMS != 1500 {
		t.Fatalf("area_closing %+v; want REALM_CLOSED, 1500 ms", ac)
	}
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	if got := answers(t, c, 1); len(got) != 0 {
		t.Fatalf("a step in the grace: %v; want applied", got)
	}
	// A walk that cannot finish before the grace ends: its steps after the
	// end are refused, and every seq is answered.
	for s := uint32(2); s <= 9; s++ {
		c.send(&wire.Intent{Seq: s, Kind: wire.IntentStep, Dir: wire.DirS})
	}
	var final *wire.Snapshot
	refused := map[uint32]wire.Code{}
	var order []string
	for {
		m, ok := <-c.msgs
		if !ok {
			break
		}
		switch m := m.(type) {
		case *wire.Snapshot:
			final = m
		case *wire.IntentResult:
			refused[m.Seq] = m.Code
		case *wire.Rehello:
			if m.Code != wire.CodeRealmClosed {
				t.Fatalf("rehello %v; want REALM_CLOSED", m.Code)
			}
			order = append(order, "rehello")
		default:
			order = append(order, m.Type().String())
		}
	}
	if len(order) != 1 || order[0] != "rehello" {
		t.Fatalf("after the grace: %v; want rehello alone", order)
	}
	for s := uint32(2); s <= 9; s++ {
		if code, ok := refused[s]; ok {
			if code != wire.CodeAreaClosing {
				t.Fatalf("seq %d refused %v; want AREA_CLOSING", s, code)
			}
		} else if final == nil || wire.SeqAfter(s, final.AckSeq) {
			t.Fatalf("seq %d never answered (final ack_seq %v, refusals %v)", s, final, refused)
		}
	}
	snap := expect[*control.Snapshot](d, 5*time.Second)
	for !snap.Final {
		snap = expect[*control.Snapshot](d, 5*time.Second)
	}
	if len(snap.Characters) != 1 || snap.Characters[0].X != 6 || snap.Characters[0].Y != 5+int32(final.AckSeq)-1 {
		t.Fatalf("final snapshot's character %+v; want (6, %d): the steps acknowledged, no more", snap.Characters, 5+int32(final.AckSeq)-1)
	}
}
