//go:build leytest

package items_test

import (
	"fmt"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/items"
)

// TestTradeFences removes each fence of a trade (docs/items.md) in turn
// and shows that a check finds the hole it leaves, and that with the
// fence in place the same moves keep every item once.
func TestTradeFences(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(on bool)
		run  func(t *testing.T) error // nil when the invariant held
	}{
		{"hold", items.SetTradeHold, offeredThenMoved},
		{"whole", items.SetSwapWhole, swapWithNoRoom},
		{"transit", items.SetTransitVoid, swapInTransit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(t); err != nil {
				t.Fatalf("with the fence: %v", err)
			}
			tc.set(false)
			defer tc.set(true)
			if err := tc.run(t); err == nil {
				t.Fatalf("without the fence the check found nothing")
			} else {
				t.Logf("without the fence: %v", err)
			}
		})
	}
}

// traders is a world of two players side by side, ada with 3 planks and
// bo with 5 stone, in an open trade of ada's planks for bo's stone that
// neither has confirmed yet.
func traders(t *testing.T) (*world, ecs.Entity, ecs.Entity) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	ada, bo := w.player(1, 5, 5, true), w.player(2, 6, 5, true)
	w.give(ada, "plank", 3)
	w.give(ada, "chest", 1)
	w.give(bo, "stone", 5)
	w.do(ada, ecs.Intent{Kind: ecs.IntentTrade, Dir: ecs.East})
	w.do(ada, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 3})
	w.do(bo, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 5})
	return w, ada, bo
}

// confirm has e confirm its trade as it stands.
func (w *world) confirm(e ecs.Entity) {
	w.t.Helper()
	if tr := w.b.Items.OpenTrade(e); tr != nil {
		w.do(e, ecs.Intent{Kind: ecs.IntentConfirm, Count: tr.Rev})
	}
}

// offeredThenMoved: ada puts the planks she offers into a chest, then bo
// confirms. Held, the move is refused and the trade goes through.
func offeredThenMoved(t *testing.T) error {
	w, ada, bo := traders(t)
	w.confirm(ada)
	w.do(ada, ecs.Intent{Kind: ecs.IntentPlace, From: 1, Dir: ecs.West})
	w.do(ada, ecs.Intent{Kind: ecs.IntentMoveItem, From: 0, To: ecs.ContainerSlot, Dir: ecs.West})
	w.confirm(bo)
	_, err := count(w.b, nil)
	return err
}

// swapWithNoRoom: bo's inventory has no room for the planks when both
// have confirmed: whole, nothing moves.
func swapWithNoRoom(t *testing.T) error {
	w, ada, bo := traders(t)
	for _, name := range []string{"chair", "table", "lamp", "rug", "chest", "wall_wood", "wall_stone", "fence", "door_wood",
		"floor_wood", "floor_stone", "wood", "berries", "cauldron", "bed", "blueprint_table", "stall", "sapling", "furnace"} {
		w.b.Items.Create(w.b.Area, bo, code(t, name), 1)
	}
	w.do(bo, ecs.Intent{Kind: ecs.IntentOffer, From: 0, Count: 4}) // part of the stone: its slot stays taken
	w.confirm(ada)
	w.confirm(bo)
	_, err := count(w.b, nil)
	return err
}

// swapInTransit: bo starts a crossing (its state is on its way to
// another Area) before it confirms; its inventory must not change after.
func swapInTransit(t *testing.T) error {
	w, ada, bo := traders(t)
	w.confirm(bo)
	before := w.inv(bo).Slots
	if err := w.b.Area.SetTransit(bo, 1, true); err != nil {
		t.Fatal(err)
	}
	w.confirm(ada)
	if w.inv(bo).Slots != before {
		return fmt.Errorf("the inventory of a body whose state left with its crossing changed: %+v -> %+v", before[:2], w.inv(bo).Slots[:2])
	}
	return nil
}
