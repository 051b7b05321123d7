package engine

import (
	"bytes"
	"sync"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/wire"
)

// streams holds each offline Area's wire.Stream: its client's short
// snapshots count from the snapshot before.
var streams sync.Map // *Offline -> *wire.Stream

// take decodes every frame the offline Area has for its client.
func take(t *testing.T, o *Offline) []wire.Message {
	t.Helper()
	var out []wire.Message
	st, _ := streams.LoadOrStore(o, new(wire.Stream))
	for _, f := range o.Take() {
		m, err := st.(*wire.Stream).Decode(f)
		if err != nil {
			t.Fatalf("a frame the client cannot read: %v (% x)", err, f)
		}
		out = append(out, m)
	}
	return out
}

// hello binds a client to o and returns its entity and first snapshot's
// view of it.
func hello(t *testing.T, o *Offline) uint32 {
	t.Helper()
	f, err := wire.Encode(&wire.Hello{Grant: "offline", JoinID: 9, Versions: wire.Versions})
	if err != nil {
		t.Fatal(err)
	}
	o.Receive(f)
	msgs := take(t, o)
	if len(msgs) < 4 {
		t.Fatalf("hello answered with %d messages: %v", len(msgs), msgs)
	}
	ack, ok := msgs[0].(*wire.HelloAck)
	if !ok || ack.JoinID != 9 || ack.Version != wire.Version {
		t.Fatalf("first answer %#v; want hello_ack of join 9", msgs[0])
	}
	if info, ok := msgs[1].(*wire.AreaInfo); !ok || info.Kind != "offline" || info.Rules&wire.RuleMayBuild == 0 {
		t.Fatalf("second answer %#v; want area_info of the offline rules, the player a builder", msgs[1])
	}
	return ack.Entity
}

// pose steps o until a snapshot came and returns the body's square as
// the Sim has it.
func pose(t *testing.T, o *Offline, id uint32) (x, y int32) {
	t.Helper()
	e, ok := o.Sim().Entity(id)
	if !ok {
		t.Fatalf("body %d is gone", id)
	}
	p, _ := o.Sim().Area().PositionOf(e)
	return p.X, p.Y
}

// TestOfflinePlaysAndKeeps: a client says hello, is told the Area, its
// things, the map it sees and snapshots; its steps move it (or are
// refused, and told so); the save builds the same Area again, with the
// body where it stood and its things as they were.
func TestOfflinePlaysAndKeeps(t *testing.T) {
	o, err := NewOffline(content.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := hello(t, o)
	statics, snaps := 0, 0
	for range 4 {
		o.Step()
		for _, m := range take(t, o) {
			switch m.(type) {
			case *wire.Static:
				statics++
			case *wire.Snapshot:
				snaps++
			}
		}
	}
	if statics == 0 || snaps == 0 {
		t.Fatalf("4 ticks after hello: %d statics, %d snapshots", statics, snaps)
	}
	x0, y0 := pose(t, o, id)
	moved, refused := 0, 0
	for seq := uint32(1); seq <= 40; seq++ {
		f := wire.AppendIntent(nil, &wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.Dir(seq % 8)})
		o.Receive(f)
		for range 4 {
			o.Step()
		}
		for _, m := range take(t, o) {
			if r, ok := m.(*wire.IntentResult); ok && r.Seq == seq {
				refused++
			}
		}
		if x, y := pose(t, o, id); x != x0 || y != y0 {
			moved++
			x0, y0 = x, y
		}
	}
	if moved == 0 {
		t.Fatalf("40 steps: none moved the body (%d refused)", refused)
	}
	// Placing the first slot's item (the starter kit's) tells the player its
	// inventory again, with one item fewer, or refuses the intent.
	e0, _ := o.Sim().Entity(id)
	before := o.Sim().Area().InventoryOf(e0).Slots[0]
	told := false
	for d := wire.Dir(0); d < 8 && !told; d++ {
		seq := uint32(100 + d)
		o.Receive(wire.AppendIntent(nil, &wire.Intent{Seq: seq, Kind: wire.IntentPlace, Dir: d, Item: wire.ItemSlots{From: 0}}))
		for range 4 {
			o.Step()
		}
		for _, m := range take(t, o) {
			if inv, ok := m.(*wire.Inventory); ok {
				if inv.Slots[0].Count != before.Count-1 {
					t.Fatalf("after a place, the inventory's first slot holds %d; it held %d", inv.Slots[0].Count, before.Count)
				}
				told = true
			}
		}
	}
	if !told {
		t.Fatal("8 places around the body: none told the player its inventory")
	}
	e1, _ := o.Sim().Entity(id)
	inv := *o.Sim().Area().InventoryOf(e1)
	saved, err := o.Save()
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewOffline(content.Default(), saved)
	if err != nil {
		t.Fatal(err)
	}
	id2 := hello(t, again)
	if x, y := pose(t, again, id2); x != x0 || y != y0 {
		t.Fatalf("the save put the body on (%d, %d); it stood on (%d, %d)", x, y, x0, y0)
	}
	e2, _ := again.Sim().Entity(id2)
	if got := again.Sim().Area().InventoryOf(e2); got.Slots != inv.Slots {
		t.Fatalf("the save's inventory %v; it was %v", got.Slots, inv.Slots)
	}
	if resaved, err := again.Save(); err != nil || !bytes.Equal(resaved, saved) {
		t.Fatalf("saving the restored Area at once gives another save (%v)", err)
	}
	if _, err := NewOffline(content.Default(), []byte("not a save")); err == nil {
		t.Fatal("a save of garbage was taken")
	}
}

// TestOfflineAnswersAsAHost: before hello an intent is refused NOT_HELLO;
// a resume with a token the Area did not give is refused BAD_TOKEN; a
// resume keeps the session's seqs (an old seq is STALE_SEQ), a hello
// starts them again; a garbled intent is answered by its seq; leave is
// answered left.
func TestOfflineAnswersAsAHost(t *testing.T) {
	o, err := NewOffline(content.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	step := func(seq uint32) []byte {
		return wire.AppendIntent(nil, &wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: wire.DirS})
	}
	code := func(want wire.Code) {
		t.Helper()
		o.Step()
		for _, m := range take(t, o) {
			switch m := m.(type) {
			case *wire.Error:
				if m.Code == want {
					return
				}
			case *wire.IntentResult:
				if m.Code == want {
					return
				}
			}
		}
		t.Fatalf("no answer %v", want)
	}
	o.Receive(step(1))
	code(wire.CodeNotHello)
	resume, _ := wire.Encode(&wire.Resume{Token: "offline", JoinID: 3})
	o.Receive(resume)
	code(wire.CodeBadToken) // no session to resume yet
	hello(t, o)
	o.Receive(step(5))
	o.Step()
	take(t, o)
	o.Receive(resume)
	if msgs := take(t, o); len(msgs) == 0 {
		t.Fatal("a resume of the session was not answered")
	} else if ack, ok := msgs[0].(*wire.HelloAck); !ok || ack.JoinID != 3 {
		t.Fatalf("a resume answered %#v", msgs[0])
	}
	o.Receive(step(5))
	code(wire.CodeStaleSeq)
	hello(t, o)
	o.Receive(step(1)) // a new session's seqs start again
	o.Step()
	for _, m := range take(t, o) {
		if r, ok := m.(*wire.IntentResult); ok && r.Code == wire.CodeStaleSeq {
			t.Fatal("a fresh session's first seq was refused STALE_SEQ")
		}
	}
	garbled := step(9)
	garbled = garbled[:len(garbled)-1]
	take(t, o)
	o.Receive(garbled)
	if msgs := take(t, o); len(msgs) != 1 {
		t.Fatalf("a garbled intent was answered with %d messages; want one refusal", len(msgs))
	}
	leave, _ := wire.Encode(&wire.Leave{})
	o.Receive(leave)
	if msgs := take(t, o); len(msgs) == 0 {
		t.Fatal("leave was not answered")
	} else if _, ok := msgs[len(msgs)-1].(*wire.Left); !ok {
		t.Fatalf("leave answered %#v", msgs[len(msgs)-1])
	}
}

// FuzzOfflineSave: whatever bytes a browser hands back as a save (its
// storage is the user's to edit), NewOffline refuses them or builds an
// Area a client can play: it never panics.
func FuzzOfflineSave(f *testing.F) {
	o, err := NewOffline(content.Default(), nil)
	if err != nil {
		f.Fatal(err)
	}
	for range 10 {
		o.Step()
	}
	saved, err := o.Save()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	f.Add([]byte{})
	f.Add([]byte{0x85, 0x01, 0x40, 0x40, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := NewOffline(content.Default(), b)
		if err != nil {
			return
		}
		hello(t, o)
		o.Step()
		o.Step()
		take(t, o)
	})
}
