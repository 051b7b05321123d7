package engine

import (
	"bytes"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/wire"
)

// take decodes every frame the offline Area has for its client.
func take(t *testing.T, o *Offline) []wire.Message {
	t.Helper()
	var out []wire.Message
	for _, f := range o.Take() {
		m, err := wire.Decode(f)
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
