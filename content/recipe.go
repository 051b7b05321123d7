package content

import (
	"cmp"
	"slices"
)

// Bounds on recipes.
const (
	// MaxRecipeEntries bounds a recipe's inputs and its outputs (each).
	MaxRecipeEntries = 8
	// MaxRecipes bounds the recipes of a content, so that a character may
	// know them all (ecs.MaxRecipes).
	MaxRecipes = 1024
	// MinOperatorRecipeCode is the lowest code a recipe added by an
	// operator's folder may take ([LoadDir]), as [MinOperatorItemCode] is
	// for item kinds.
	MinOperatorRecipeCode = 32768
)

// Recipe makes new things from old at a crafting station. The recipes are
// recipes.json's table:
//
//	{"recipes": [
//	  {"name": "planks", "code": 1, "station": "cauldron",
//	   "inputs": [{"item": "wood", "count": 2}],
//	   "outputs": [{"item": "plank", "count": 4}]}
//	]}
//
// Every field but seconds is required. seconds (0..[MaxGrow], default 0:
// at once) is how long the station works on it, in seconds of its Area's
// live time, holding its contents. station is the station name of one or more
// item kinds (see [Placement]); a station's contents make a recipe when
// they are exactly its inputs, as a multiset of kinds and counts, so no
// two recipes of one station may have the same inputs, and at most one
// ever matches. Recipes are the server's secret: a client is told only
// those its character has made or learned.
type Recipe struct {
	// Name names the recipe; a blueprint's teaches refers to it.
	Name string
	// Code is the recipe's stable code, the one the protocol sends
	// (1..65535), unique among the recipes and never reused.
	Code uint16
	// Station is the name of the station it is made at.
	Station string
	// Inputs and Outputs are what it takes and what it gives
	// (1..[MaxRecipeEntries] entries each, each item named once), sorted
	// by item name.
	Inputs, Outputs []Yield
	// Seconds is how long its station works on it (0: at once).
	Seconds int
}

type rawRecipe struct {
	Name    string      `json:"name"`
	Code    *int        `json:"code"`
	Station string      `json:"station"`
	Inputs  *[]rawYield `json:"inputs"`
	Outputs *[]rawYield `json:"outputs"`
	Seconds int         `json:"seconds"`
}

// recipesFile is recipes.json.
type recipesFile struct {
	Recipes []rawRecipe `json:"recipes"`
}

// recipe checks a recipes.json entry on its own (the kinds and the
// station it names, and the uniqueness of its code and inputs, are
// checked by Load, against the whole library).
func (r rawRecipe) recipe() (Recipe, error) {
	if err := checkName("recipe", r.Name); err != nil {
		return Recipe{}, err
	}
	switch {
	case r.Code == nil:
		return Recipe{}, invalidf("missing \"code\"")
	case *r.Code < 1 || *r.Code > 65535:
		return Recipe{}, invalidf("\"code\" is %d (1..65535)", *r.Code)
	case r.Inputs == nil:
		return Recipe{}, invalidf("missing \"inputs\"")
	case r.Outputs == nil:
		return Recipe{}, invalidf("missing \"outputs\"")
	case r.Seconds < 0 || r.Seconds > MaxGrow:
		return Recipe{}, invalidf("\"seconds\" is %d (0..%d)", r.Seconds, MaxGrow)
	}
	if err := checkName("station", r.Station); err != nil {
		return Recipe{}, err
	}
	rc := Recipe{Name: r.Name, Code: uint16(*r.Code), Station: r.Station, Seconds: r.Seconds}
	var err error
	if rc.Inputs, err = entries("inputs", *r.Inputs); err != nil {
		return Recipe{}, err
	}
	if rc.Outputs, err = entries("outputs", *r.Outputs); err != nil {
		return Recipe{}, err
	}
	return rc, nil
}

// entries checks a recipe's inputs or outputs and sorts them by item.
func entries(what string, rs []rawYield) ([]Yield, error) {
	if len(rs) > MaxRecipeEntries {
		return nil, tooLargef("%q has %d entries (at most %d)", what, len(rs), MaxRecipeEntries)
	}
	ys, err := yields(rs)
	if err != nil {
		return nil, &problem{kindOf(err), what + ": " + err.Error()}
	}
	slices.SortFunc(ys, func(a, b Yield) int { return cmp.Compare(a.Item, b.Item) })
	return ys, nil
}

// sameItems reports whether a and b (each sorted by item) are the same
// multiset.
func sameItems(a, b []Yield) bool { return slices.Equal(a, b) }

// slotsFor is how many container slots ys take, each kind in whole
// stacks of its Stack.
func (l *Library) slotsFor(ys []Yield) int {
	n := 0
	for _, y := range ys {
		st := max(l.items[y.Item].Stack, 1)
		n += (y.Count + st - 1) / st
	}
	return n
}
