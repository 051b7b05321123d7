package items_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/persist"
	"github.com/leyworks/ley/systems/persist/blob"
)

// steps runs n ticks of w's Area.
func (w *world) steps(n int) {
	for range n {
		w.b.Area.Step()
	}
}

// TestSaplingGrows: a placed sapling becomes a tree after its grows
// seconds of live ticks, not before; a new item, the sapling destroyed
// and the tree made in the ledger. Its clock is written with the Area and
// goes on where it stood in the Area that loads it: time the Area did not
// tick does not count.
func TestSaplingGrows(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	a := w.b.Area
	e := w.player(1, 5, 5, false)
	w.give(e, "sapling", 1)
	sapling, tree := code(t, "sapling"), code(t, "tree")
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("place = %v", o)
	}
	at := a.Grid.Cell(6, 5)
	id := w.b.Map.PlacedAt(at).Stack
	grow := 60 * a.TickRate // the shipped sapling grows in 60 s
	w.steps(grow / 2)
	if got := w.b.Map.PlacedAt(at); got == nil || got.Item != sapling {
		t.Fatalf("after half its time: %+v; want the sapling", got)
	}
	// Half grown, the Area is written and loaded elsewhere, later.
	data, err := w.b.Save()
	if err != nil {
		t.Fatal(err)
	}
	b2, err := build.Area(w.lib, build.Spec{ID: 7, Kind: "village", Template: build.TemplateEmpty, W: 16, H: 16, TickRate: 20, CellSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Load(data); err != nil {
		t.Fatal(err)
	}
	w2 := &world{t: t, b: b2, lib: w.lib}
	w2.steps(grow/2 - 10)
	if got := b2.Map.PlacedAt(at); got == nil || got.Item != sapling {
		t.Fatalf("loaded, 10 ticks short of its time: %+v; want the sapling still", got)
	}
	w2.steps(12)
	got := b2.Map.PlacedAt(at)
	if got == nil || got.Item != tree || got.Stack == id || got.Stack == 0 {
		t.Fatalf("after its time: %+v; want a tree, a new item", got)
	}
	if created, destroyed := b2.Items.Ledger(); created[tree] != 1 || destroyed[sapling] != 1 {
		t.Fatalf("ledger: created %v, destroyed %v; want the tree made and the sapling unmade", created, destroyed)
	}
	census(t, b2, nil)
	// The first Area, never ticked since, still holds the sapling.
	if got := w.b.Map.PlacedAt(at); got == nil || got.Item != sapling {
		t.Fatalf("the Area that did not tick: %+v; want the sapling", got)
	}
}

// TestFurnaceWorks: a recipe that takes time holds the station's
// contents while it works and makes its outputs when its time is up.
func TestFurnaceWorks(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	a := w.b.Area
	e := w.player(1, 5, 5, false)
	w.give(e, "furnace", 1)
	w.give(e, "stone", 4)
	w.do(e, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.East})
	at := a.Grid.Cell(6, 5)
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Count: 2, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("stone in = %v", o)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("craft = %v", o)
	}
	ready := w.b.Items.Ready(a, at)
	if ready <= a.Tick {
		t.Fatalf("Ready = %d at tick %d; want a tick to come", ready, a.Tick)
	}
	if len(w.inv(e).Recipes) != 1 {
		t.Fatalf("the maker knows %v; want the brick, learned as it starts", w.inv(e).Recipes)
	}
	for _, it := range []ecs.Intent{
		{Kind: ecs.IntentMoveItem, From: ecs.ContainerSlot, To: 5, Dir: ecs.East},
		{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot + 1, Dir: ecs.East},
		{Kind: ecs.IntentCraft, Dir: ecs.East},
		{Kind: ecs.IntentTake, Dir: ecs.East},
	} {
		if o := w.do(e, it); o != ecs.OutcomeWorking {
			t.Fatalf("%v while it works = %v; want WORKING", it.Kind, o)
		}
	}
	for a.Tick < ready-1 {
		a.Step()
	}
	if cont := w.b.Items.Container(at); cont[0].Kind != code(t, "stone") {
		t.Fatalf("a tick before it is done: %+v; want the stone", cont)
	}
	a.Step()
	if cont := w.b.Items.Container(at); cont[0].Kind != code(t, "brick") || cont[0].Count != 1 || w.b.Items.Ready(a, at) != 0 {
		t.Fatalf("when done: %+v (ready %d); want a brick, idle", cont, w.b.Items.Ready(a, at))
	}
	census(t, w.b, nil)
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: ecs.ContainerSlot, To: 5, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("taking the brick = %v", o)
	}
}

// livingArea is a 64x64 Area with n saplings growing in it, of a content
// whose saplings take a day (never done within a test's ticks).
func livingArea(t testing.TB, n int) *world {
	dir := t.TempDir()
	slow := `{"items": [{"name": "sapling", "code": 20, "label": "Sapling", "stack": 10,
		"placed": {"slot": "occupant", "blocks": true, "look": 20, "becomes": "tree", "grows": 86400}}]}`
	if err := os.WriteFile(filepath.Join(dir, "items.json"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorldOf(t, lib, "village", build.TemplateEmpty, 64, 64)
	sapling := code(t, "sapling")
	it := &persist.Items{Next: uint32(n)}
	for i := range n {
		it.Placed = append(it.Placed, persist.Placed{X: int32(i % 64), Y: int32(i / 64), Stack: blob.Stack{ID: uint64(7)<<32 | uint64(i+1), Kind: sapling, Count: 1}})
	}
	if err := w.b.Items.Load(it); err != nil {
		t.Fatal(err)
	}
	if w.b.Items.Timers() != n {
		t.Fatalf("%d clocks run; want %d", w.b.Items.Timers(), n)
	}
	return w
}

// TestLiveTickAllocatesNothing: a tick of an Area with 1,000 growing
// things allocates nothing.
func TestLiveTickAllocatesNothing(t *testing.T) {
	w := livingArea(t, 1000)
	w.steps(5)
	if n := testing.AllocsPerRun(100, w.b.Area.Step); n != 0 {
		t.Errorf("a tick with 1,000 live things allocates %v times; want 0", n)
	}
}

// BenchmarkLiveTick is one tick of a 64x64 Area with no growing thing
// (the floor) and with 1,000.
func BenchmarkLiveTick(b *testing.B) {
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("things=%d", n), func(b *testing.B) {
			w := livingArea(b, n)
			b.ReportAllocs()
			for b.Loop() {
				w.b.Area.Step()
			}
		})
	}
}
