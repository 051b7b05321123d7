package items_test

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/items"
)

// TestStall: a stall's owner stocks and prices it; another player buys a
// slot's stack at its price, in one step, with the owner gone; the
// payment lies in the slot, off sale; only the owner may stock it or
// take it back; a stale view of the stall buys nothing.
func TestStall(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	a := w.b.Area
	owner, buyer := w.player(1, 5, 5, false), w.player(2, 7, 4, false)
	w.give(owner, "stall", 1)
	w.give(owner, "plank", 8)
	w.give(buyer, "stone", 5)
	w.give(buyer, "wood", 2)
	stone, plank := code(t, "stone"), code(t, "plank")
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("place the stall = %v", o)
	}
	at := a.Grid.Cell(6, 5)
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("stock the stall = %v", o)
	}
	price := func(e ecs.Entity, kind uint16, count int32) ecs.Outcome {
		return w.do(e, ecs.Intent{Kind: ecs.IntentPrice, Dir: ecs.East, From: ecs.ContainerSlot, X: int32(kind), Y: count})
	}
	if o := price(buyer, stone, 3); o != ecs.OutcomeNothingThere {
		t.Fatalf("pricing from the wrong side = %v; want NOTHING_THERE (no stall there)", o)
	}
	// The buyer stands north-east of the stall: it faces south-west.
	buy := func(lot uint16, kind uint16, count int32) ecs.Outcome {
		return w.do(buyer, ecs.Intent{Kind: ecs.IntentBuy, Dir: ecs.SouthWest, From: ecs.ContainerSlot, Count: lot, X: int32(kind), Y: count})
	}
	if o := buy(8, stone, 3); o != ecs.OutcomeNotForSale {
		t.Fatalf("buying an unpriced slot = %v; want NOT_FOR_SALE", o)
	}
	if o := w.do(buyer, ecs.Intent{Kind: ecs.IntentPrice, Dir: ecs.SouthWest, From: ecs.ContainerSlot, X: int32(stone), Y: 1}); o != ecs.OutcomeNotOwner {
		t.Fatalf("pricing another's stall = %v; want NOT_OWNER", o)
	}
	if o := w.do(buyer, ecs.Intent{Kind: ecs.IntentMoveItem, Dir: ecs.SouthWest, From: ecs.ContainerSlot, To: 3}); o != ecs.OutcomeNotOwner {
		t.Fatalf("taking from another's stall = %v; want NOT_OWNER", o)
	}
	if o := w.do(buyer, ecs.Intent{Kind: ecs.IntentTake, Dir: ecs.SouthWest}); o != ecs.OutcomeNotOwner {
		t.Fatalf("taking another's stall back = %v; want NOT_OWNER", o)
	}
	if o := price(owner, stone, 100); o != ecs.OutcomeInvalid {
		t.Fatalf("a price above a stack = %v; want INVALID", o)
	}
	if o := price(owner, stone, 3); o != ecs.OutcomeApplied {
		t.Fatalf("price = %v", o)
	}
	if _, prices, ok := w.b.Items.Stall(at); !ok || prices[0] != (items.Price{Kind: stone, Count: 3}) {
		t.Fatalf("Stall = %v, %v; want 3 stone for slot 0", prices, ok)
	}
	census(t, w.b, nil)
	w.b.Area.Despawn(owner) // the owner is gone: the stall sells on
	if o := buy(7, stone, 3); o != ecs.OutcomeStale {
		t.Fatalf("buying 7 of a stack of 8 = %v; want STALE", o)
	}
	if o := buy(8, stone, 2); o != ecs.OutcomeStale {
		t.Fatalf("buying at an old price = %v; want STALE", o)
	}
	if o := buy(8, stone, 3); o != ecs.OutcomeApplied {
		t.Fatalf("buy = %v", o)
	}
	if w.count(buyer, "plank") != 8 || w.count(buyer, "stone") != 2 {
		t.Fatalf("the buyer holds %+v; want 8 planks and 2 stone", w.inv(buyer).Slots[:4])
	}
	till := w.b.Items.Container(at)[0]
	if till.Kind != stone || till.Count != 3 || till.ID == 0 {
		t.Fatalf("the till holds %+v; want 3 stone", till)
	}
	if _, prices, _ := w.b.Items.Stall(at); prices[0] != (items.Price{}) {
		t.Fatalf("the till is priced %v; want off sale", prices[0])
	}
	if o := buy(3, stone, 3); o != ecs.OutcomeNotForSale {
		t.Fatalf("buying the till = %v; want NOT_FOR_SALE", o)
	}
	census(t, w.b, nil)
	if created, destroyed := w.b.Items.Ledger(); len(destroyed) != 0 || created[plank] != 8 {
		t.Fatalf("a purchase changed the ledger: created %v, destroyed %v", created, destroyed)
	}
}

// TestStallCantPay: a buyer short of the price, or with no room for the
// stack, buys nothing; a restocked slot is off sale until priced again.
func TestStallCantPay(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	owner, buyer := w.player(1, 5, 5, false), w.player(2, 7, 5, false)
	w.give(owner, "stall", 1)
	w.give(owner, "plank", 8)
	w.give(buyer, "stone", 2)
	stone := code(t, "stone")
	w.do(owner, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.East})
	w.do(owner, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Count: 4, Dir: ecs.East})
	w.do(owner, ecs.Intent{Kind: ecs.IntentPrice, Dir: ecs.East, From: ecs.ContainerSlot, X: int32(stone), Y: 3})
	buy := func(lot uint16) ecs.Outcome {
		return w.do(buyer, ecs.Intent{Kind: ecs.IntentBuy, Dir: ecs.West, From: ecs.ContainerSlot, Count: lot, X: int32(stone), Y: 3})
	}
	if o := buy(4); o != ecs.OutcomeCantPay {
		t.Fatalf("buying with 2 stone of 3 = %v; want CANT_PAY", o)
	}
	// Restocking the slot takes it off sale.
	w.do(owner, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Count: 4, Dir: ecs.East})
	w.give(buyer, "stone", 1)
	if o := buy(8); o != ecs.OutcomeNotForSale {
		t.Fatalf("buying a restocked slot = %v; want NOT_FOR_SALE until priced again", o)
	}
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentBuy, Dir: ecs.East, From: ecs.ContainerSlot, Count: 8, X: int32(stone), Y: 3}); o != ecs.OutcomeNotAllowed {
		t.Fatalf("buying from one's own stall = %v; want NOT_ALLOWED", o)
	}
	census(t, w.b, nil)
}
