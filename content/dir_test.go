package content

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// operatorDir writes an operator's folder: files by slash path.
func operatorDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// forestMap is small.tmj on the shipped tileset, with bears, and a portal
// to the village's arena road.
func forestMap(t *testing.T) string {
	m := smallMap(t)
	useShippedTileset(t, m)
	setProp(objectOf(t, m, 6), "creature", "string", "bear")
	o := objectOf(t, m, 4)
	setProp(o, "target", "string", "village")
	setProp(o, "to_x", "int", 60)
	setProp(o, "to_y", "int", 23)
	return string(encode(t, m))
}

func TestLoadDirMerges(t *testing.T) {
	forest := forestMap(t)
	dir := operatorDir(t, map[string]string{
		"rules.json": `{"rules": [
			{"name": "village", "max_players": 10, "steps_per_second": 5, "diagonal": true},
			{"name": "forest", "max_players": 16, "steps_per_second": 4, "creatures_hunt_players": true}]}`,
		"creatures.json": `{"creatures": [{"name": "bear", "hp": 80, "step_ticks": 6, "sense_radius": 8,
			"attack_damage": 12, "attack_ticks": 25, "hunts_players": true, "hunts": ["deer"]}]}`,
		"templates.json":  `{"templates": [{"name": "forest", "rules": "forest", "map": "maps/forest.tmj"}]}`,
		"maps/forest.tmj": forest,
		"maps/home.tmj":   forest, // replaces the embedded home map
		"README.txt":      "notes are fine",
	})
	lib, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lib.Kinds(), []string{"arena", "forest", "home", "offline", "village"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Kinds() = %v; want %v", got, want)
	}
	village, err := lib.Kind("village")
	if err != nil || village.MaxPlayers != 10 {
		t.Errorf("Kind(village) = %+v, %v; want the operator's, 10 players", village, err)
	}
	if tp, err := lib.Template("village"); err != nil || tp.Rules.MaxPlayers != 10 || tp.Map.W != 64 {
		t.Errorf("Template(village) = %+v, %v; want the embedded map with the operator's rules", tp, err)
	}
	forestT, err := lib.Template("forest")
	if err != nil || forestT.Rules.Name != "forest" || forestT.Map.Spawners[0].Creature != "bear" {
		t.Fatalf("Template(forest) = %+v, %v; want the operator's", forestT, err)
	}
	home, _ := lib.Template("home")
	offline, _ := lib.Template("offline")
	if home.Map.W != 10 || offline.Map != home.Map {
		t.Errorf("home and offline maps are %dx%d and %p, %p; want the operator's 10x8 map, shared", home.Map.W, home.Map.H, home.Map, offline.Map)
	}
	if arena, _ := lib.Template("arena"); arena.Map.W != 96 {
		t.Errorf("arena map is %d wide; want the embedded 96", arena.Map.W)
	}
	for _, name := range []string{"bear", "wolf", "deer", "slime"} {
		if _, err := lib.Creature(name); err != nil {
			t.Error(err)
		}
	}
	if r, _ := Default().Rules("village"); r.MaxPlayers != 64 {
		t.Errorf("Default's village has %d players after LoadDir; want 64", r.MaxPlayers)
	}
}

// TestLoadDirItems: an operator's items.json adds kinds and replaces
// kinds and sources; the rest stay.
func TestLoadDirItems(t *testing.T) {
	dir := operatorDir(t, map[string]string{
		"items.json": `{"items": [
			{"name": "chair", "code": 1, "label": "Oak chair", "stack": 4, "placed": {"slot": "occupant", "blocks": true, "look": 100}},
			{"name": "sofa", "code": 32768, "label": "Sofa", "stack": 1, "placed": {"slot": "occupant", "blocks": true, "look": 101},
			 "yields": [{"item": "plank", "count": 3}, {"item": "cloth", "count": 1}]},
			{"name": "cloth", "code": 65535, "label": "Cloth", "stack": 20}],
		  "sources": [{"class": "tree", "yields": [{"item": "wood", "count": 1}, {"item": "berries", "count": 1}], "cooldown_ticks": 100},
			{"class": "sign", "yields": [{"item": "plank", "count": 1}], "cooldown_ticks": 1}]}`,
	})
	lib, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(lib.Items()), len(Default().Items())+2; got != want {
		t.Errorf("%d kinds; want %d (the shipped ones and two)", got, want)
	}
	chair, _ := lib.ItemByCode(1)
	if chair.Name != "chair" || chair.Label != "Oak chair" || chair.Stack != 4 || chair.Placed.Look != 100 {
		t.Errorf("ItemByCode(1) = %+v; want the operator's chair", chair)
	}
	sofa, ok := lib.Item("sofa")
	if !ok || sofa.Code != 32768 || !reflect.DeepEqual(sofa.Yields, []Yield{{"plank", 3}, {"cloth", 1}}) {
		t.Errorf("Item(sofa) = %+v, %v; want the operator's", sofa, ok)
	}
	if cloth, ok := lib.ItemByCode(65535); !ok || cloth.Name != "cloth" {
		t.Errorf("ItemByCode(65535) = %+v, %v; want cloth", cloth, ok)
	}
	if items := lib.Items(); items[len(items)-2].Name != "sofa" || items[len(items)-1].Name != "cloth" {
		t.Errorf("Items() ends %v; want sofa and cloth, by code", items[len(items)-2:])
	}
	if tree, _ := lib.Source(ClassTree); tree.CooldownTicks != 100 || len(tree.Yields) != 2 {
		t.Errorf("Source(tree) = %+v; want the operator's", tree)
	}
	if _, ok := lib.Source(ClassSign); !ok {
		t.Error("no sign source; want the operator's")
	}
	if rock, ok := lib.Source(ClassRock); !ok || rock.Yields[0].Item != "stone" {
		t.Errorf("Source(rock) = %+v, %v; want the shipped one", rock, ok)
	}
	if c, _ := Default().Item("chair"); c.Label != "Chair" {
		t.Errorf("Default's chair is %q after LoadDir; want Chair", c.Label)
	}
}

func TestLoadDirEmpty(t *testing.T) {
	lib, err := LoadDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lib.Kinds(), Default().Kinds()) || len(lib.Templates()) != len(Default().Templates()) {
		t.Errorf("an empty folder gives kinds %v; want the defaults' %v", lib.Kinds(), Default().Kinds())
	}
	if !reflect.DeepEqual(lib.Items(), Default().Items()) {
		t.Errorf("an empty folder gives items %v; want the defaults' %v", lib.Items(), Default().Items())
	}
}

func TestLoadDirErrors(t *testing.T) {
	badMap := smallMap(t)
	useShippedTileset(t, badMap)
	layerOf(t, badMap, "walls")["name"] = "wall"
	for _, tc := range []struct {
		name  string
		files map[string]string
		file  string // the file the error must name, in the folder
		want  string
	}{
		{"misspelt index file", map[string]string{"rule.json": `{}`}, "rule.json",
			"unknown file (want rules.json, creatures.json, templates.json, items.json or recipes.json)"},
		{"broken operator map", map[string]string{"maps/village.tmj": string(encode(t, badMap))}, "maps/village.tmj",
			`layer "wall": unknown layer`},
		{"default template with other rules", map[string]string{
			"templates.json": `{"templates": [{"name": "village", "rules": "arena", "map": "maps/village.tmj"}]}`,
		}, "templates.json", `"village": the default template of area kind "village" must use rules "village", not "arena"`},
		{"bad rules", map[string]string{"rules.json": `{"rules": [{"name": "arena", "max_players": 0, "steps_per_second": 5}]}`},
			"rules.json", `"arena": "max_players" is 0`},
		{"unknown creature field", map[string]string{"creatures.json": `{"creatures": [{"name": "x", "hp": 1, "speed": 3}]}`},
			"creatures.json", `unknown field "speed"`},
		{"item that changes its code", map[string]string{"items.json": `{"items": [{"name": "chair", "code": 40000, "label": "Chair", "stack": 1}]}`},
			"items.json", `"chair": "code" is 40000, but the kind it replaces has 1 (a kind's code never changes)`},
		{"new item on ley's codes", map[string]string{"items.json": `{"items": [{"name": "sofa", "code": 17, "label": "Sofa", "stack": 1}]}`},
			"items.json", `"sofa": "code" is 17: a new kind takes a code from 32768 to 65535 (the codes below are ley's)`},
		{"new items on one code", map[string]string{"items.json": `{"items": [{"name": "sofa", "code": 40000, "label": "Sofa", "stack": 1},
			{"name": "stool", "code": 40000, "label": "Stool", "stack": 1}]}`},
			"items.json", `"stool": "code" 40000 is "sofa"'s already (a code names one kind)`},
		{"item yielding an unknown kind", map[string]string{"items.json": `{"items": [{"name": "sofa", "code": 40000, "label": "Sofa", "stack": 1,
			"placed": {"slot": "occupant", "look": 1}, "yields": [{"item": "cushion", "count": 2}]}]}`},
			"items.json", `"sofa": yields "cushion": no such item kind (known: bed, berries, blueprint_table, brick, cauldron, chair, chest,`},
		{"bad source", map[string]string{"items.json": `{"sources": [{"class": "tree", "yields": [{"item": "wood", "count": 1}], "cooldown_ticks": 0}]}`},
			"items.json", `"tree": source: "cooldown_ticks" is 0 (1..65535)`},
		{"unknown build rule", map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 8, "steps_per_second": 5, "build": "owners"}]}`},
			"rules.json", `"home": "build" is "owners" (anyone, builders, plots or nobody)`},
		{"carrying an unknown kind", map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 8, "steps_per_second": 5, "carry": ["sword"]}]}`},
			"rules.json", `"home": carry "sword": no such item kind (known: bed, berries,`},
		{"carrying a kind twice", map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 8, "steps_per_second": 5, "carry": ["wood", "wood"]}]}`},
			"rules.json", `"home": "carry" names "wood" twice`},
		{"plots on a map without any", map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 8, "steps_per_second": 5, "build": "plots"}]}`},
			"rules.json", `"home": "build" is "plots", and the map of template "home" (maps/home.tmj) marks none`},
		{"no room for items", map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 8, "steps_per_second": 5, "max_items": 0}]}`},
			"rules.json", `"home": "max_items" is 0 (1..1048576)`},
		{"starter kit of an unknown kind", map[string]string{"items.json": `{"starter": [{"item": "sofa", "count": 1}]}`},
			"items.json", `"starter": starter: yields "sofa": no such item kind`},
		{"recipe that changes its code", map[string]string{"recipes.json": `{"recipes": [{"name": "planks", "code": 40000, "station": "cauldron",
			"inputs": [{"item": "wood", "count": 2}], "outputs": [{"item": "plank", "count": 4}]}]}`},
			"recipes.json", `"planks": "code" is 40000, but the recipe it replaces has 1 (a recipe's code never changes)`},
		{"new recipe on ley's codes", map[string]string{"recipes.json": `{"recipes": [{"name": "stool", "code": 9, "station": "cauldron",
			"inputs": [{"item": "wood", "count": 5}], "outputs": [{"item": "chair", "count": 1}]}]}`},
			"recipes.json", `"stool": "code" is 9: a new recipe takes a code from 32768 to 65535 (the codes below are ley's)`},
		{"new recipe with a known recipe's inputs", map[string]string{"recipes.json": `{"recipes": [{"name": "sticks", "code": 40000, "station": "cauldron",
			"inputs": [{"item": "wood", "count": 2}], "outputs": [{"item": "plank", "count": 1}]}]}`},
			"recipes.json", `"sticks": its inputs are "planks"'s: at one station, one set of inputs makes one thing`},
		{"blueprint of no recipe", map[string]string{"items.json": `{"items": [{"name": "blueprint_sofa", "code": 40000, "label": "Sofa blueprint", "stack": 1, "teaches": "sofa"}]}`},
			"items.json", `"blueprint_sofa": teaches "sofa": no such recipe (known: brick, chair, furnace, planks, stone_floor, table)`},
		{"stall that holds nothing", map[string]string{"items.json": `{"items": [{"name": "booth", "code": 40000, "label": "Booth", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "stall": true}}]}`},
			"items.json", `"booth": "placed": a stall is a container that is no station`},
		{"stall that is a station", map[string]string{"items.json": `{"items": [{"name": "booth", "code": 40000, "label": "Booth", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "container": 2, "station": "cauldron", "stall": true}}]}`},
			"items.json", `"booth": "placed": a stall is a container that is no station`},
		{"growing with no time", map[string]string{"items.json": `{"items": [{"name": "bulb", "code": 40000, "label": "Bulb", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "becomes": "tree"}}]}`},
			"items.json", `"bulb": "placed": "becomes" and "grows" go together`},
		{"growing for more than a day", map[string]string{"items.json": `{"items": [{"name": "bulb", "code": 40000, "label": "Bulb", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "becomes": "tree", "grows": 86401}}]}`},
			"items.json", `"bulb": "placed": "grows" is 86401 (1..86400 seconds)`},
		{"growing into no kind", map[string]string{"items.json": `{"items": [{"name": "bulb", "code": 40000, "label": "Bulb", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "becomes": "flower", "grows": 5}}]}`},
			"items.json", `"bulb": "becomes" "flower": no such item kind`},
		{"growing into another slot", map[string]string{"items.json": `{"items": [{"name": "bulb", "code": 40000, "label": "Bulb", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "becomes": "floor_wood", "grows": 5}}]}`},
			"items.json", `"bulb": "becomes" "floor_wood": what it becomes must sit in its slot when placed`},
		{"growing container", map[string]string{"items.json": `{"items": [{"name": "bulb", "code": 40000, "label": "Bulb", "stack": 1,
			"placed": {"slot": "occupant", "look": 1, "container": 2, "becomes": "tree", "grows": 5}}]}`},
			"items.json", `"bulb": "placed": a thing that lives is no container and no door`},
		{"recipe of more than a day", map[string]string{"recipes.json": `{"recipes": [{"name": "stool", "code": 40000, "station": "cauldron", "seconds": 90000,
			"inputs": [{"item": "wood", "count": 5}], "outputs": [{"item": "chair", "count": 1}]}]}`},
			"recipes.json", `"stool": "seconds" is 90000 (0..86400)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := operatorDir(t, tc.files)
			_, err := LoadDir(dir)
			checkErr(t, err, ErrInvalid, "content: "+filepath.Join(dir, filepath.FromSlash(tc.file))+": ", tc.want)
		})
	}
	_, err := LoadDir(filepath.Join(t.TempDir(), "missing"))
	checkErr(t, err, ErrInvalid, "content: ", "missing: no such folder")
}
