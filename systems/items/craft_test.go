package items_test

import (
	"slices"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
)

// recipeCode returns the shipped recipe called name's code.
func recipeCode(t testing.TB, name string) uint16 {
	for _, r := range content.Default().Recipes() {
		if r.Name == name {
			return r.Code
		}
	}
	t.Fatalf("no recipe %q", name)
	return 0
}

// TestCraft: a cauldron's contents become a recipe's outputs only when
// they are exactly its inputs; the maker learns the recipe, a blueprint
// teaches one, and the ledger records what was made and unmade.
func TestCraft(t *testing.T) {
	w := newWorld(t, "village", build.TemplateEmpty, 16, 16)
	a := w.b.Area
	e := w.player(1, 5, 5, false)
	for _, k := range []struct {
		name  string
		count uint16
	}{{"cauldron", 1}, {"wood", 10}, {"stone", 2}, {"blueprint_table", 1}, {"chest", 1}} {
		if !w.b.Items.Create(a, e, code(t, k.name), k.count) {
			t.Fatalf("Create %s failed", k.name)
		}
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("place cauldron = %v", o)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentPlace, From: 4, Dir: ecs.West}); o != ecs.OutcomeApplied {
		t.Fatalf("place chest = %v", o)
	}
	cauldron := w.b.Items.Container(a.Grid.Cell(6, 5))
	if len(cauldron) != 4 {
		t.Fatalf("the cauldron has %d slots; want 4", len(cauldron))
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.East}); o != ecs.OutcomeNoRecipe {
		t.Fatalf("crafting an empty cauldron = %v; want NO_RECIPE", o)
	}
	// 3 wood match nothing (planks take 2): refused, nothing changes.
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Count: 3, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("wood into the cauldron = %v", o)
	}
	before := slices.Clone(cauldron)
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.East}); o != ecs.OutcomeNoRecipe {
		t.Fatalf("crafting 3 wood = %v; want NO_RECIPE", o)
	}
	if !slices.Equal(before, cauldron) || len(w.inv(e).Recipes) != 0 {
		t.Fatalf("a refused craft changed the cauldron %v -> %v or taught %v", before, cauldron, w.inv(e).Recipes)
	}
	// 2 wood, split over two slots: still the multiset {wood: 2}.
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: ecs.ContainerSlot, To: ecs.ContainerSlot + 2, Count: 1, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("split in the cauldron = %v", o)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: ecs.ContainerSlot, To: 1, Count: 1, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("one wood back = %v", o)
	}
	woodIDs := []ecs.ItemID{cauldron[0].ID, cauldron[2].ID}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("crafting 2 wood = %v", o)
	}
	plank := code(t, "plank")
	if cauldron[0].Kind != plank || cauldron[0].Count != 4 || !cauldron[1].Empty() || !cauldron[2].Empty() || slices.Contains(woodIDs, cauldron[0].ID) {
		t.Fatalf("after planks: cauldron %+v; want 4 planks under a new id", cauldron)
	}
	if got := w.inv(e).Recipes; !slices.Equal(got, []uint16{recipeCode(t, "planks")}) {
		t.Fatalf("the maker knows %v; want planks", got)
	}
	if created, destroyed := w.b.Items.Ledger(); created[plank] != 4 || destroyed[code(t, "wood")] != 2 {
		t.Fatalf("ledger: created %v, destroyed %v; want 4 planks made of 2 wood", created, destroyed)
	}
	census(t, w.b, nil)
	// The blueprint teaches the table and is used up; a second use of an
	// empty slot finds nothing, and wood teaches nothing.
	bp := code(t, "blueprint_table")
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentUse, From: 3}); o != ecs.OutcomeApplied {
		t.Fatalf("use blueprint = %v", o)
	}
	if got := w.inv(e).Recipes; !slices.Equal(got, []uint16{recipeCode(t, "planks"), recipeCode(t, "table")}) {
		t.Fatalf("after the blueprint the player knows %v; want planks and table", got)
	}
	if !w.inv(e).Slots[3].Empty() {
		t.Fatalf("the used blueprint is still held: %+v", w.inv(e).Slots[3])
	}
	if _, destroyed := w.b.Items.Ledger(); destroyed[bp] != 1 {
		t.Fatalf("the used blueprint is not recorded destroyed: %v", destroyed)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentUse, From: 3}); o != ecs.OutcomeNothingThere {
		t.Fatalf("use an empty slot = %v; want NOTHING_THERE", o)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentUse, From: 1}); o != ecs.OutcomeNotAllowed {
		t.Fatalf("use wood = %v; want NOT_ALLOWED", o)
	}
	// 4 planks and a stone make the table.
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentMoveItem, From: 2, To: ecs.ContainerSlot + 3, Count: 1, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("stone into the cauldron = %v", o)
	}
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.East}); o != ecs.OutcomeApplied {
		t.Fatalf("crafting a table = %v", o)
	}
	if n := len(w.b.Items.Known(e)); n != 2 {
		t.Fatalf("Known = %d recipes; want 2 (making a known recipe teaches nothing new)", n)
	}
	census(t, w.b, nil)
	// A chest is no station.
	if o := w.do(e, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.West}); o != ecs.OutcomeNothingThere {
		t.Fatalf("crafting at a chest = %v; want NOTHING_THERE", o)
	}
	// What the character knows goes with its state.
	state, err := w.b.Items.SaveCharacter(e)
	if err != nil {
		t.Fatal(err)
	}
	e2 := w.player(2, 9, 9, false)
	if err := w.b.Items.LoadCharacter(e2, state); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.inv(e2).Recipes, w.inv(e).Recipes) {
		t.Fatalf("restored recipes %v; want %v", w.inv(e2).Recipes, w.inv(e).Recipes)
	}
}

// TestCraftNeedsABuilder: where only builders build, only builders craft,
// and a character that knows a recipe already is told so by a blueprint.
func TestCraftNeedsABuilder(t *testing.T) {
	w := newWorld(t, "home", build.TemplateEmpty, 16, 16)
	a := w.b.Area
	owner, guest := w.player(1, 5, 5, true), w.player(2, 6, 6, false)
	w.b.Items.Create(a, owner, code(t, "cauldron"), 1)
	w.b.Items.Create(a, owner, code(t, "wood"), 2)
	w.b.Items.Create(a, guest, code(t, "blueprint_table"), 2)
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentPlace, From: 0, Dir: ecs.South}); o != ecs.OutcomeApplied {
		t.Fatalf("place cauldron = %v", o)
	}
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentMoveItem, From: 1, To: ecs.ContainerSlot, Dir: ecs.South}); o != ecs.OutcomeApplied {
		t.Fatalf("wood into the cauldron = %v", o)
	}
	// The guest stands east of the cauldron (5,6).
	if o := w.do(guest, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.West}); o != ecs.OutcomeNotBuilder {
		t.Fatalf("a guest crafts in a home: %v; want NOT_BUILDER", o)
	}
	if o := w.do(guest, ecs.Intent{Kind: ecs.IntentUse, From: 0}); o != ecs.OutcomeApplied {
		t.Fatalf("a guest reads a blueprint: %v", o)
	}
	if o := w.do(guest, ecs.Intent{Kind: ecs.IntentUse, From: 1}); o != ecs.OutcomeKnown {
		t.Fatalf("a second blueprint of a known recipe: %v; want KNOWN", o)
	}
	if st := w.inv(guest).Slots[1]; st.Count != 1 {
		t.Fatalf("after a refused use the guest holds %+v; want the second blueprint", st)
	}
	if o := w.do(owner, ecs.Intent{Kind: ecs.IntentCraft, Dir: ecs.South}); o != ecs.OutcomeApplied {
		t.Fatalf("the owner crafts: %v", o)
	}
}
