package content

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// itemsJSON returns an items.json of the given items entries and sources.
func itemsJSON(items []string, sources ...string) string {
	return fmt.Sprintf(`{"items": [%s], "sources": [%s]}`, strings.Join(items, ", "), strings.Join(sources, ", "))
}

// woodJSON is a valid items.json entry, for sources and yields to name.
const woodJSON = `{"name": "wood", "code": 1, "label": "Wood", "stack": 99}`

func TestItemErrors(t *testing.T) {
	many := make([]string, maxEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name": "k%d", "code": %d, "label": "K", "stack": 1}`, i, i+1)
	}
	nine := `[` + strings.Repeat(`{"item": "wood", "count": 1}, `, 8) + `{"item": "wood", "count": 1}]`
	item := func(fields string) string { return itemsJSON([]string{woodJSON, `{"name": "x", ` + fields + `}`}) }
	placed := func(p string) string { return item(`"code": 2, "label": "X", "stack": 1, "placed": ` + p) }
	source := func(s ...string) string { return itemsJSON([]string{woodJSON}, s...) }
	for _, tc := range []struct {
		name  string
		items string // "" removes items.json
		kind  error
		want  string
	}{
		{"file missing", "", ErrInvalid, `content: items.json: no such file`},
		{"unknown field", item(`"code": 2, "label": "X", "stack": 1, "stacks": 2`), ErrInvalid, `content: items.json: bad JSON: json: unknown field "stacks"`},
		{"trailing data", `{"items": []} []`, ErrInvalid, `content: items.json: bad JSON: data after the top-level object`},
		{"too many kinds", itemsJSON(many), ErrTooLarge, `content: items.json: 4097 entries (at most 4096)`},
		{"bad name", itemsJSON([]string{`{"name": "Chair", "code": 1, "label": "Chair", "stack": 1}`}), ErrInvalid,
			`content: items.json: "Chair": item "Chair": a name is lower-case letters`},
		{"no name", itemsJSON([]string{`{"code": 1, "label": "Chair", "stack": 1}`}), ErrInvalid, `content: items.json: item: empty name`},
		{"listed twice", itemsJSON([]string{woodJSON, woodJSON}), ErrInvalid, `content: items.json: "wood": listed twice`},
		{"no code", item(`"label": "X", "stack": 1`), ErrInvalid, `content: items.json: "x": missing "code"`},
		{"code 0", item(`"code": 0, "label": "X", "stack": 1`), ErrInvalid, `content: items.json: "x": "code" is 0 (1..65535)`},
		{"code too high", item(`"code": 65536, "label": "X", "stack": 1`), ErrInvalid, `content: items.json: "x": "code" is 65536 (1..65535)`},
		{"no label", item(`"code": 2, "stack": 1`), ErrInvalid, `content: items.json: "x": missing "label"`},
		{"empty label", item(`"code": 2, "label": "", "stack": 1`), ErrInvalid, `content: items.json: "x": "label" is empty`},
		{"long label", item(`"code": 2, "label": "` + strings.Repeat("x", MaxLabel+1) + `", "stack": 1`), ErrTooLarge,
			`content: items.json: "x": "label" is 49 bytes (at most 48)`},
		{"control in label", item(`"code": 2, "label": "a\nb", "stack": 1`), ErrInvalid, `content: items.json: "x": "label" "a\nb" holds a control character`},
		{"no stack", item(`"code": 2, "label": "X"`), ErrInvalid, `content: items.json: "x": missing "stack"`},
		{"stack 0", item(`"code": 2, "label": "X", "stack": 0`), ErrInvalid, `content: items.json: "x": "stack" is 0 (1..999)`},
		{"stack 1000", item(`"code": 2, "label": "X", "stack": 1000`), ErrInvalid, `content: items.json: "x": "stack" is 1000 (1..999)`},
		{"no slot", placed(`{"look": 1}`), ErrInvalid, `content: items.json: "x": "placed": missing "slot"`},
		{"unknown slot", placed(`{"slot": "wall", "look": 1}`), ErrInvalid, `content: items.json: "x": "placed": unknown slot "wall" (want floor or occupant)`},
		{"no look", placed(`{"slot": "occupant"}`), ErrInvalid, `content: items.json: "x": "placed": missing "look"`},
		{"look negative", placed(`{"slot": "occupant", "look": -1}`), ErrInvalid, `content: items.json: "x": "placed": "look" is -1 (0..65535)`},
		{"look too high", placed(`{"slot": "occupant", "look": 65536}`), ErrInvalid, `content: items.json: "x": "placed": "look" is 65536 (0..65535)`},
		{"container negative", placed(`{"slot": "occupant", "look": 1, "container": -1}`), ErrInvalid, `content: items.json: "x": "placed": "container" is -1 (0..64)`},
		{"container too big", placed(`{"slot": "occupant", "look": 1, "container": 65}`), ErrInvalid, `content: items.json: "x": "placed": "container" is 65 (0..64)`},
		{"floor that blocks", placed(`{"slot": "floor", "look": 1, "blocks": true}`), ErrInvalid, `content: items.json: "x": "placed": a floor tile takes only "slot" and "look"`},
		{"floor that blocks sight", placed(`{"slot": "floor", "look": 1, "blocks_sight": false}`), ErrInvalid, `content: items.json: "x": "placed": a floor tile takes only`},
		{"floor door", placed(`{"slot": "floor", "look": 1, "door": true}`), ErrInvalid, `content: items.json: "x": "placed": a floor tile takes only`},
		{"floor container", placed(`{"slot": "floor", "look": 1, "container": 4}`), ErrInvalid, `content: items.json: "x": "placed": a floor tile takes only`},
		{"door that says it blocks", placed(`{"slot": "occupant", "look": 1, "door": true, "blocks": true}`), ErrInvalid,
			`content: items.json: "x": "placed": a door takes no "blocks" or "blocks_sight"`},
		{"door that says it hides", placed(`{"slot": "occupant", "look": 1, "door": true, "blocks_sight": false}`), ErrInvalid,
			`content: items.json: "x": "placed": a door takes no "blocks" or "blocks_sight"`},
		{"door container", placed(`{"slot": "occupant", "look": 1, "door": true, "container": 4}`), ErrInvalid, `content: items.json: "x": "placed": a door cannot be a container`},
		{"yields unplaced", item(`"code": 2, "label": "X", "stack": 1, "yields": [{"item": "wood", "count": 1}]`), ErrInvalid,
			`content: items.json: "x": "yields" without "placed"`},
		{"yields empty", placed(`{"slot": "occupant", "look": 1}, "yields": []`), ErrInvalid, `content: items.json: "x": "yields" is empty`},
		{"yields too many", placed(`{"slot": "occupant", "look": 1}, "yields": ` + nine), ErrTooLarge, `content: items.json: "x": "yields" has 9 entries (at most 8)`},
		{"yield no count", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "wood"}]`), ErrInvalid, `content: items.json: "x": "yields" "wood": missing "count"`},
		{"yield count 0", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "wood", "count": 0}]`), ErrInvalid,
			`content: items.json: "x": "yields" "wood": "count" is 0 (1..999)`},
		{"yield count 1000", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "wood", "count": 1000}]`), ErrInvalid,
			`content: items.json: "x": "yields" "wood": "count" is 1000 (1..999)`},
		{"yield named badly", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "Wood", "count": 1}]`), ErrInvalid,
			`content: items.json: "x": yields "Wood": a name is`},
		{"yield twice", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "wood", "count": 1}, {"item": "wood", "count": 2}]`), ErrInvalid,
			`content: items.json: "x": "yields" lists "wood" twice`},
		{"yield of an unknown kind", placed(`{"slot": "occupant", "look": 1}, "yields": [{"item": "wood", "count": 1}, {"item": "plank", "count": 2}]`), ErrInvalid,
			`content: items.json: "x": yields "plank": no such item kind (known: wood, x)`},
		{"two kinds, one code", itemsJSON([]string{woodJSON, `{"name": "log", "code": 1, "label": "Log", "stack": 1}`}), ErrInvalid,
			`content: items.json: "wood": "code" 1 is "log"'s already (a code names one kind)`},
		{"source without class", source(`{"yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 1}`), ErrInvalid,
			`content: items.json: source: missing "class"`},
		{"source of an unknown class", source(`{"class": "bush", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 1}`), ErrInvalid,
			`content: items.json: "bush": source: unknown class "bush" (want one of door, tree, sign, rock, chest)`},
		{"source of portals", source(`{"class": "portal", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 1}`), ErrInvalid,
			`content: items.json: "portal": source: unknown class "portal"`},
		{"source without yields", source(`{"class": "tree", "cooldown_ticks": 1}`), ErrInvalid, `content: items.json: "tree": source: missing "yields"`},
		{"source yielding nothing", source(`{"class": "tree", "yields": [], "cooldown_ticks": 1}`), ErrInvalid, `content: items.json: "tree": source: "yields" is empty`},
		{"source yielding too much", source(`{"class": "tree", "yields": [{"item": "wood", "count": 1000}], "cooldown_ticks": 1}`), ErrInvalid,
			`content: items.json: "tree": source: "yields" "wood": "count" is 1000 (1..999)`},
		{"source without cooldown", source(`{"class": "tree", "yields": [{"item": "wood", "count": 1}]}`), ErrInvalid,
			`content: items.json: "tree": source: missing "cooldown_ticks"`},
		{"source cooldown 0", source(`{"class": "tree", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 0}`), ErrInvalid,
			`content: items.json: "tree": source: "cooldown_ticks" is 0 (1..65535)`},
		{"source cooldown too long", source(`{"class": "tree", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 65536}`), ErrInvalid,
			`content: items.json: "tree": source: "cooldown_ticks" is 65536 (1..65535)`},
		{"source listed twice", source(`{"class": "rock", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 1}`,
			`{"class": "rock", "yields": [{"item": "wood", "count": 2}], "cooldown_ticks": 1}`), ErrInvalid, `content: items.json: "rock": source: listed twice`},
		{"source of an unknown kind", source(`{"class": "rock", "yields": [{"item": "stone", "count": 1}], "cooldown_ticks": 1}`), ErrInvalid,
			`content: items.json: "rock": source: yields "stone": no such item kind (known: wood)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(editedFS(t, map[string]string{ItemsFile: tc.items, RecipesFile: ""}))
			checkErr(t, err, tc.kind, tc.want)
		})
	}
}

// TestItemDefaults checks what a kind leaves out: a kind with no "placed"
// cannot be placed, a placed one yields itself, a door blocks when closed.
func TestItemDefaults(t *testing.T) {
	lib, err := Load(editedFS(t, map[string]string{RecipesFile: "", ItemsFile: itemsJSON([]string{woodJSON,
		`{"name": "gate", "code": 9, "label": "Gate", "stack": 3, "placed": {"slot": "occupant", "door": true, "look": 4}}`,
		`{"name": "tile", "code": 5, "label": "Tile", "stack": 7, "placed": {"slot": "floor", "look": 0}}`,
		`{"name": "crate", "code": 7, "label": "Crate", "stack": 1, "placed": {"slot": "occupant", "look": 65535, "container": 64}, "yields": [{"item": "wood", "count": 3}, {"item": "crate", "count": 1}]}`,
	}, `{"class": "chest", "yields": [{"item": "wood", "count": 5}], "cooldown_ticks": 65535}`)}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Name: "wood", Code: 1, Label: "Wood", Stack: 99},
		{Name: "tile", Code: 5, Label: "Tile", Stack: 7, Placed: Placement{Slot: SlotFloor}, Yields: []Yield{{"tile", 1}}},
		{Name: "crate", Code: 7, Label: "Crate", Stack: 1, Placed: Placement{Slot: SlotOccupant, Look: 65535, Container: 64}, Yields: []Yield{{"wood", 3}, {"crate", 1}}},
		{Name: "gate", Code: 9, Label: "Gate", Stack: 3, Placed: Placement{Slot: SlotOccupant, Blocks: true, BlocksSight: true, Door: true, Look: 4}, Yields: []Yield{{"gate", 1}}},
	}
	if got := lib.Items(); !reflect.DeepEqual(got, want) {
		t.Errorf("Items() = %+v; want %+v", got, want)
	}
	if wood, _ := lib.Item("wood"); wood.Placeable() || wood.Yields != nil {
		t.Errorf("wood = %+v; want a kind that cannot be placed and yields nothing", wood)
	}
	if got, ok := lib.Source(ClassChest); !ok || !reflect.DeepEqual(got, Source{Class: ClassChest, Yields: []Yield{{"wood", 5}}, CooldownTicks: 65535}) {
		t.Errorf("Source(chest) = %+v, %v", got, ok)
	}
	if _, ok := lib.Source(ClassTree); ok {
		t.Error("Source(tree) found with no tree source listed")
	}
}

func TestStarterKit(t *testing.T) {
	kit := Default().Starter()
	if len(kit) == 0 {
		t.Fatal("the shipped content gives new characters nothing")
	}
	for _, y := range kit {
		if _, ok := Default().Item(y.Item); !ok {
			t.Fatalf("the starter kit names %q, no item kind", y.Item)
		}
	}
}
