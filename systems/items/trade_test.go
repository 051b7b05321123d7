package items_test

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/items"
)

// give creates count items of the kind called name for e, or fails.
func (w *world) give(e ecs.Entity, name string, count uint16) {
	w.t.Helper()
	if !w.b.Items.Create(w.b.Area, e, code(w.t, name), count) {
		w.t.Fatalf("Create %d %s failed", count, name)
	}
}

// tradeOf returns the open trade of e, failing when there is none.
func (w *world) tradeOf(e ecs.Entity) *items.Trade {
	w.t.Helper()
	t := w.b.Items.OpenTrade(e)
	if t == nil {
		w.t.Fatalf("%v has no open trade", e)
	}
	return t
}

// count returns how many items of the kind called name e carries.
func (w *world) count(e ecs.Entity, name string) int {
	n := 0
	for _, st := range w.inv(e).Slots {
		if st.Kind == code(w.t, name) {
			n += int(st.Count)
		}
	}
	return n
}

// TestTrade: two players offer, both confirm the same revision, and the
// items change hands in one step; a whole stack keeps its id, part of
// one gets a new one, and nothing is made or destroyed.
func TestTrade(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	ada, bo := w.player(1, 5, 5, false), w.player(2, 6, 5, false)
	w.give(ada, "plank", 10)
	w.give(bo, "stone", 5)
	w.give(bo, "chair", 1)
	census(t, w.b, nil)
	chairID := w.inv(bo).Slots[1].ID

	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 1}); o != ecs.OutcomeNotTrading {
		t.Fatalf("offer before a trade = %v; want NOT_TRADING", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentTrade, Dir: ecs.West}); o != ecs.OutcomeNothingThere {
		t.Fatalf("trade with nobody = %v; want NOTHING_THERE", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentTrade, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("open a trade = %v", o)
	}
	tr := w.tradeOf(bo)
	if tr != w.tradeOf(ada) || tr.Rev != 0 {
		t.Fatalf("the two players are not in one trade at revision 0: %+v", tr)
	}
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentTrade, Dir: ecs.West}); o != ecs.OutcomeTrading {
		t.Fatalf("a second trade = %v; want TRADING", o)
	}
	// A trade another opened does not lock one's things: bo, who offers
	// nothing yet, still sorts his.
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: 7}); o != ecs.OutcomeApplied {
		t.Fatalf("moving an item with nothing on offer = %v; want APPLIED", o)
	}
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentMoveItem, From: 7, To: 1}); o != ecs.OutcomeApplied {
		t.Fatalf("moving it back = %v; want APPLIED", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 11}); o != ecs.OutcomeInvalid {
		t.Fatalf("offer above the stack = %v; want INVALID", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 3, Count: 1}); o != ecs.OutcomeNothingThere {
		t.Fatalf("offer of an empty slot = %v; want NOTHING_THERE", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentConfirm, Count: 0}); o != ecs.OutcomeNothingThere {
		t.Fatalf("confirm of two empty sides = %v; want NOTHING_THERE", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 4}); o != ecs.OutcomeApplied {
		t.Fatalf("offer 4 planks = %v", o)
	}
	// Once she offers, her items are held: what she offers stays as offered.
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentMoveItem, From: 0, To: 5}); o != ecs.OutcomeTrading {
		t.Fatalf("moving an item with something on offer = %v; want TRADING", o)
	}
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentOffer, From: 1, Count: 1}); o != ecs.OutcomeApplied {
		t.Fatalf("offer the chair = %v", o)
	}
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 2}); o != ecs.OutcomeApplied {
		t.Fatalf("offer 2 stone = %v", o)
	}
	if tr.Rev != 3 || len(tr.Sides[0]) != 1 || len(tr.Sides[1]) != 2 {
		t.Fatalf("trade %+v; want revision 3, one stack against two", tr)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentConfirm, Count: 2}); o != ecs.OutcomeStale {
		t.Fatalf("confirm of an old revision = %v; want STALE", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentConfirm, Count: 3}); o != ecs.OutcomeApplied {
		t.Fatalf("confirm = %v", o)
	}
	if !tr.Confirmed[0] || tr.Confirmed[1] || w.count(ada, "plank") != 10 {
		t.Fatalf("after one confirmation: %+v, ada has %d planks; want nothing moved", tr, w.count(ada, "plank"))
	}
	census(t, w.b, nil)
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentConfirm, Count: 3}); o != ecs.OutcomeApplied {
		t.Fatalf("second confirm = %v", o)
	}
	if tr.End != items.TradeDone || w.b.Items.Trading(ada) || w.b.Items.Trading(bo) {
		t.Fatalf("trade ended %v, trading %v %v; want done, both free", tr.End, w.b.Items.Trading(ada), w.b.Items.Trading(bo))
	}
	if w.count(ada, "plank") != 6 || w.count(bo, "plank") != 4 || w.count(ada, "stone") != 2 || w.count(bo, "stone") != 3 ||
		w.count(ada, "chair") != 1 || w.count(bo, "chair") != 0 {
		t.Fatalf("after the swap ada %+v, bo %+v", w.inv(ada).Slots[:4], w.inv(bo).Slots[:4])
	}
	var chairAt ecs.Stack
	for _, st := range w.inv(ada).Slots {
		if st.Kind == code(t, "chair") {
			chairAt = st
		}
	}
	if chairAt.ID != chairID {
		t.Fatalf("the chair, a whole stack, arrived as %d; want its id %d", chairAt.ID, chairID)
	}
	census(t, w.b, nil)
	if created, destroyed := w.b.Items.Ledger(); len(destroyed) != 0 || created[code(t, "plank")] != 10 {
		t.Fatalf("a trade changed the ledger: created %v, destroyed %v", created, destroyed)
	}
	// Free again: a trader's items move as before.
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentMoveItem, From: 0, To: 9}); o != ecs.OutcomeApplied {
		t.Fatalf("moving after the trade = %v", o)
	}
}

// TestTradeVoids: a trade is void, nobody's items moved, when a player
// calls it off, changes its offer after the other confirmed, walks out of
// reach, goes away, is ended by the host, or when an inventory has no
// room for what it gets.
func TestTradeVoids(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	ada, bo := w.player(1, 5, 5, false), w.player(2, 6, 5, false)
	w.give(ada, "plank", 10)
	w.give(bo, "stone", 5)
	census(t, w.b, nil)
	open := func() *items.Trade {
		t.Helper()
		if o := w.do(ada, ecs.Intent{Kind: ecs.IntentTrade, Dir: ecs.East}); o != ecs.OutcomeApplied {
			t.Fatalf("open = %v", o)
		}
		if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 3}); o != ecs.OutcomeApplied {
			t.Fatalf("offer = %v", o)
		}
		return w.tradeOf(ada)
	}
	void := func(tr *items.Trade, want items.TradeEnd) {
		t.Helper()
		if tr.End != want || w.b.Items.Trading(ada) || w.b.Items.Trading(bo) {
			t.Fatalf("trade ended %v (trading %v, %v); want %v", tr.End, w.b.Items.Trading(ada), w.b.Items.Trading(bo), want)
		}
		if w.count(ada, "plank") != 10 || w.count(bo, "stone") != 5 || w.count(bo, "plank") != 0 {
			t.Fatalf("a void trade moved items: ada %+v, bo %+v", w.inv(ada).Slots[:3], w.inv(bo).Slots[:3])
		}
		census(t, w.b, nil)
	}

	tr := open()
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentCancel}); o != ecs.OutcomeApplied {
		t.Fatalf("cancel = %v", o)
	}
	void(tr, items.TradeCancelled)
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentCancel}); o != ecs.OutcomeNotTrading {
		t.Fatalf("cancel with no trade = %v; want NOT_TRADING", o)
	}

	tr = open()
	if o := w.do(bo, ecs.Intent{Kind: ecs.IntentConfirm, Count: tr.Rev}); o != ecs.OutcomeApplied {
		t.Fatalf("bo confirms = %v", o)
	}
	if o := w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 1}); o != ecs.OutcomeApplied {
		t.Fatalf("ada changes her offer = %v", o)
	}
	void(tr, items.TradeChanged)

	tr = open()
	w.b.Items.EndTrade(w.b.Area, bo, items.TradeTakenOver)
	void(tr, items.TradeTakenOver)

	tr = open()
	w.players.Get(bo).Away = true
	w.b.Area.Step()
	void(tr, items.TradeLeft)
	w.players.Get(bo).Away = false

	tr = open()
	for range 4 { // bo walks off east: four squares away is past reach
		if o := w.do(bo, ecs.Intent{Kind: ecs.IntentStep, Dir: ecs.East}); o != ecs.OutcomeApplied {
			t.Fatalf("step = %v", o)
		}
	}
	void(tr, items.TradeFar)
	for range 4 {
		w.do(bo, ecs.Intent{Kind: ecs.IntentStep, Dir: ecs.West})
	}

	// No room: bo's inventory is full of stacks of other kinds.
	for _, name := range []string{"chair", "table", "lamp", "rug", "chest", "wall_wood", "wall_stone", "fence", "door_wood",
		"floor_wood", "floor_stone", "wood", "berries", "cauldron", "bed", "blueprint_table", "stall", "sapling", "furnace"} {
		w.give(bo, name, 1)
	}
	census(t, w.b, nil)
	tr = open()
	w.do(bo, ecs.Intent{Kind: ecs.IntentConfirm, Count: tr.Rev})
	w.do(ada, ecs.Intent{Kind: ecs.IntentConfirm, Count: tr.Rev})
	void(tr, items.TradeNoRoom)
}
