package content

import (
	"fmt"
	"strings"
	"testing"
)

// recipesJSON returns a recipes.json of the given entries.
func recipesJSON(entries ...string) string {
	return fmt.Sprintf(`{"recipes": [%s]}`, strings.Join(entries, ", "))
}

// TestRecipeErrors: each bad recipes.json, or item kind a recipe needs,
// is refused with an error that names the file, the entry and the fault.
func TestRecipeErrors(t *testing.T) {
	planks := `{"name": "planks", "code": 1, "station": "cauldron", "inputs": [{"item": "wood", "count": 2}], "outputs": [{"item": "plank", "count": 4}]}`
	recipe := func(fields string) string { return recipesJSON(`{"name": "x", ` + fields + `}`) }
	nine := `[` + strings.Repeat(`{"item": "wood", "count": 1}, `, 8) + `{"item": "stone", "count": 1}]`
	for _, tc := range []struct {
		name  string
		files map[string]string
		kind  error
		file  string
		want  string
	}{
		{"unknown field", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": [], "outputs": [], "time": 3`)}, ErrInvalid,
			RecipesFile, `bad JSON: json: unknown field "time"`},
		{"no code", map[string]string{RecipesFile: recipe(`"station": "cauldron", "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": missing "code"`},
		{"code 0", map[string]string{RecipesFile: recipe(`"code": 0, "station": "cauldron", "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": "code" is 0 (1..65535)`},
		{"no station", map[string]string{RecipesFile: recipe(`"code": 9, "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": station: empty name`},
		{"no inputs", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": [], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": inputs: "yields" is empty`},
		{"too many inputs", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": ` + nine + `, "outputs": [{"item": "plank", "count": 1}]`)}, ErrTooLarge,
			RecipesFile, `"x": "inputs" has 9 entries (at most 8)`},
		{"input listed twice", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": [{"item": "wood", "count": 1}, {"item": "wood", "count": 2}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": inputs: "yields" lists "wood" twice`},
		{"unknown station", map[string]string{RecipesFile: recipe(`"code": 9, "station": "anvil", "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": station "anvil": no item kind is that station`},
		{"unknown output", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "gold", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": yields "gold": no such item kind`},
		{"two recipes, one code", map[string]string{RecipesFile: recipesJSON(planks, `{"name": "x", "code": 1, "station": "cauldron", "inputs": [{"item": "wood", "count": 3}], "outputs": [{"item": "plank", "count": 1}]}`)}, ErrInvalid,
			RecipesFile, `"x": "code" 1 is "planks"'s already (a code names one recipe)`},
		{"two recipes, one set of inputs", map[string]string{RecipesFile: recipesJSON(planks, `{"name": "x", "code": 9, "station": "cauldron", "inputs": [{"item": "wood", "count": 2}], "outputs": [{"item": "stone", "count": 1}]}`)}, ErrInvalid,
			RecipesFile, `"x": its inputs are "planks"'s`},
		{"more than the station holds", map[string]string{RecipesFile: recipe(`"code": 9, "station": "cauldron", "inputs": [{"item": "wood", "count": 500}], "outputs": [{"item": "plank", "count": 1}]`)}, ErrInvalid,
			RecipesFile, `"x": its inputs take 6 slots and its outputs 1, and station "cauldron" (item kind "cauldron") holds 4`},
		{"listed twice", map[string]string{RecipesFile: recipesJSON(planks, planks)}, ErrInvalid, RecipesFile, `"planks": listed twice`},
		{"station that holds nothing", map[string]string{ItemsFile: itemsJSON([]string{woodJSON,
			`{"name": "anvil", "code": 2, "label": "Anvil", "stack": 1, "placed": {"slot": "occupant", "look": 1, "station": "anvil"}}`}), RecipesFile: ""}, ErrInvalid,
			ItemsFile, `"anvil": "placed": a station is a container`},
		{"kept, not a blueprint", map[string]string{ItemsFile: itemsJSON([]string{woodJSON,
			`{"name": "map", "code": 2, "label": "Map", "stack": 1, "keep": true}`}), RecipesFile: ""}, ErrInvalid,
			ItemsFile, `"map": "keep" without "teaches"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(editedFS(t, tc.files))
			checkErr(t, err, tc.kind, "content: "+tc.file+": ", tc.want)
		})
	}
}

// TestNoRecipesFile: a content without recipes.json (and so without
// blueprints) has no recipes.
func TestNoRecipesFile(t *testing.T) {
	lib, err := Load(editedFS(t, map[string]string{RecipesFile: "", ItemsFile: itemsJSON([]string{woodJSON})}))
	if err != nil {
		t.Fatal(err)
	}
	if rs := lib.Recipes(); len(rs) != 0 {
		t.Errorf("Recipes() = %v; want none", rs)
	}
}

// TestOperatorRecipe: an operator's folder adds a recipe with a code of
// its own and replaces a shipped one keeping its code.
func TestOperatorRecipe(t *testing.T) {
	dir := operatorDir(t, map[string]string{RecipesFile: recipesJSON(
		`{"name": "planks", "code": 1, "station": "cauldron", "inputs": [{"item": "wood", "count": 1}], "outputs": [{"item": "plank", "count": 2}]}`,
		`{"name": "stool", "code": 40000, "station": "cauldron", "inputs": [{"item": "plank", "count": 2}], "outputs": [{"item": "chair", "count": 1}]}`)})
	lib, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range lib.Recipes() {
		got = append(got, fmt.Sprintf("%d %s %v", r.Code, r.Name, r.Inputs))
	}
	want := "[1 planks [{wood 1}] 2 chair [{plank 3}] 3 table [{plank 4} {stone 1}] 4 stone_floor [{stone 2}] 5 brick [{stone 2}] 6 furnace [{plank 2} {stone 4}] 40000 stool [{plank 2}]]"
	if fmt.Sprint(got) != want {
		t.Errorf("Recipes() = %v; want %v", got, want)
	}
}
