package items

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/leyworks/ley/content"
)

// Catalog is what the System compiles from the content: every item kind
// by code and by name, what objects give by class, the recipes by code
// and by station, and the recipe each blueprint teaches. It is read only
// once made: every Area built from one library shares one (CatalogOf),
// so an Area, frozen or live, carries no copy of the content's items.
type Catalog struct {
	// Kinds are the item kinds, in code order; Sources what the map's
	// objects give when gathered; Recipes what stations make (their item
	// names are Kinds').
	Kinds   []content.Item
	Sources []content.Source
	Recipes []content.Recipe

	kinds    map[uint16]*content.Item
	codes    map[string]uint16          // kind codes by name
	sources  map[uint16]*content.Source // by object kind
	recipes  map[uint16]*Recipe         // by code
	stations map[string][]*Recipe       // by station name
	teaches  map[uint16]uint16          // a blueprint kind's recipe code
}

// catalogKey is the key of a library's Catalog among its derived values.
type catalogKey struct{}

// CatalogOf returns the Catalog of lib's item kinds, sources and recipes,
// compiled on first use and shared after (content.Library.Derived).
func CatalogOf(lib *content.Library) (*Catalog, error) {
	c, err := lib.Derived(catalogKey{}, func(lib *content.Library) (any, error) {
		var sources []content.Source
		for _, class := range content.ObjectClasses() {
			if src, ok := lib.Source(class); ok {
				sources = append(sources, src)
			}
		}
		return newCatalog(lib.Items(), sources, lib.Recipes())
	})
	if err != nil {
		return nil, err
	}
	return c.(*Catalog), nil
}

// newCatalog compiles kinds, sources and recipes, which it keeps: the
// caller gives them up. It fails when a recipe or a blueprint names what
// is not there.
func newCatalog(kinds []content.Item, sources []content.Source, recipes []content.Recipe) (*Catalog, error) {
	c := &Catalog{Kinds: kinds, Sources: sources, Recipes: recipes,
		kinds: make(map[uint16]*content.Item, len(kinds)), codes: make(map[string]uint16, len(kinds)),
		sources: make(map[uint16]*content.Source, len(sources))}
	for i := range kinds {
		c.kinds[kinds[i].Code] = &kinds[i]
		c.codes[kinds[i].Name] = kinds[i].Code
	}
	for i := range sources {
		c.sources[uint16(sources[i].Class)] = &sources[i]
	}
	if err := c.compileRecipes(); err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	return c, nil
}

// compileRecipes indexes Recipes by code and station, their items by
// code, and the blueprints by the recipe they teach.
func (c *Catalog) compileRecipes() error {
	c.recipes = make(map[uint16]*Recipe, len(c.Recipes))
	c.stations = make(map[string][]*Recipe)
	amounts := func(ys []content.Yield) ([]Amount, error) {
		out := make([]Amount, 0, len(ys))
		for _, y := range ys {
			k, ok := c.codes[y.Item]
			if !ok {
				return nil, fmt.Errorf("no item kind %q", y.Item)
			}
			out = append(out, Amount{Kind: k, Count: uint16(y.Count)})
		}
		slices.SortFunc(out, func(a, b Amount) int { return cmp.Compare(a.Kind, b.Kind) })
		return out, nil
	}
	byName := make(map[string]uint16, len(c.Recipes))
	for _, cr := range c.Recipes {
		r := &Recipe{Code: cr.Code, Name: cr.Name, Station: cr.Station, Seconds: cr.Seconds}
		var err error
		if r.Inputs, err = amounts(cr.Inputs); err != nil {
			return fmt.Errorf("recipe %q: %w", cr.Name, err)
		}
		if r.Outputs, err = amounts(cr.Outputs); err != nil {
			return fmt.Errorf("recipe %q: %w", cr.Name, err)
		}
		c.recipes[r.Code] = r
		c.stations[r.Station] = append(c.stations[r.Station], r)
		byName[r.Name] = r.Code
	}
	c.teaches = make(map[uint16]uint16)
	for code, k := range c.kinds {
		if k.Teaches == "" {
			continue
		}
		r, ok := byName[k.Teaches]
		if !ok {
			return fmt.Errorf("item kind %q teaches %q: no such recipe", k.Name, k.Teaches)
		}
		c.teaches[code] = r
	}
	return nil
}
