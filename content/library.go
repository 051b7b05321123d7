package content

import (
	"cmp"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Library is a realm's content, loaded and checked as a whole: every
// template's rule set and map exist, every spawner's creature kind exists,
// every portal's target template exists and its arrival square is
// walkable there, every item kind has a code of its own and every yield
// names an item kind.
//
// A Library never changes after it is loaded and is safe for concurrent
// use. Its maps are shared: callers read them, never write them.
type Library struct {
	templates map[string]Template
	rules     map[string]RuleSet
	creatures map[string]Creature
	items     map[string]Item
	byCode    map[uint16]string
	recipes   []Recipe // sorted by code
	sources   map[ObjectClass]Source
	starter   []Yield

	// derived holds what other packages compile from the library, by
	// their key (Derived).
	derived sync.Map
}

// Derived returns what derive makes of the library, made once per key and
// shared by every caller after: a package compiles what it needs of the
// content (the item system's catalogue) once per library, not once per
// Area built from it. A key is compared with ==: use a value of an
// unexported type of the caller's own package, as with context keys. What
// derive returns must be read only, as the library is.
func (l *Library) Derived(key any, derive func(*Library) (any, error)) (any, error) {
	f, ok := l.derived.Load(key)
	if !ok {
		f, _ = l.derived.LoadOrStore(key, sync.OnceValues(func() (any, error) { return derive(l) }))
	}
	return f.(func() (any, error))()
}

// Load reads a whole content folder: rules.json, creatures.json,
// templates.json and items.json at its root (all four required) and the
// maps the templates name. It returns the first problem found, as an [*Error].
// Load reads only fsys: use [LoadDir] to lay an operator's folder over
// the embedded content.
func Load(fsys fs.FS) (*Library, error) {
	id := func(p string) string { return p }
	ix, err := readIndex(fsys, true, id)
	if err != nil {
		return nil, err
	}
	return build(ix, fsys, id)
}

// build checks an index as a whole and loads its maps from fsys.
func build(ix *index, fsys fs.FS, display func(string) string) (*Library, error) {
	lib := &Library{
		templates: make(map[string]Template, len(ix.templates)),
		rules:     make(map[string]RuleSet, len(ix.rules)),
		creatures: make(map[string]Creature, len(ix.creatures)),
		items:     make(map[string]Item, len(ix.items)),
		byCode:    make(map[uint16]string, len(ix.items)),
		sources:   make(map[ObjectClass]Source, len(ix.sources)),
	}
	for name, r := range ix.rules {
		lib.rules[name] = r.val
	}
	for name, c := range ix.creatures {
		lib.creatures[name] = c.val
	}
	for _, name := range slices.Sorted(maps.Keys(ix.creatures)) {
		c := ix.creatures[name]
		for _, h := range c.val.Hunts {
			if _, ok := lib.creatures[h]; !ok {
				return nil, &Error{Path: c.file, Name: name, Err: invalidf("hunts %q: no such creature kind (known: %s)", h, list(lib.creatures))}
			}
		}
	}
	if err := lib.buildItems(ix); err != nil {
		return nil, err
	}
	if err := lib.buildRecipes(ix); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(ix.rules)) {
		r := ix.rules[name]
		for _, k := range r.val.Carry {
			if _, ok := lib.items[k]; !ok {
				return nil, &Error{Path: r.file, Name: name, Err: invalidf("carry %q: no such item kind (known: %s)", k, list(lib.items))}
			}
		}
	}
	loaded := make(map[string]*Map)
	for _, name := range slices.Sorted(maps.Keys(ix.templates)) {
		t := ix.templates[name]
		rs, ok := lib.rules[t.val.Rules]
		if !ok {
			return nil, &Error{Path: t.file, Name: name, Err: invalidf("rules %q: no such rule set (known: %s)", t.val.Rules, list(lib.rules))}
		}
		if _, kind := lib.rules[name]; kind && t.val.Rules != name {
			return nil, &Error{Path: t.file, Name: name, Err: invalidf("the default template of area kind %q must use rules %q, not %q", name, name, t.val.Rules)}
		}
		m := loaded[t.val.Map]
		if m == nil {
			var err error
			if m, err = LoadMap(fsys, t.val.Map); err != nil {
				return nil, fixPath(err, display)
			}
			loaded[t.val.Map] = m
		}
		if rs.Build == BuildPlots && len(m.Plots) == 0 {
			return nil, &Error{Path: ix.rules[t.val.Rules].file, Name: t.val.Rules, Err: invalidf("\"build\" is \"plots\", and the map of template %q (%s) marks none (a \"plots\" layer of rectangles of class \"plot\")", name, t.val.Map)}
		}
		lib.templates[name] = Template{Name: name, Rules: rs, Map: m}
	}
	for _, p := range slices.Sorted(maps.Keys(loaded)) {
		if err := lib.checkRefs(loaded[p]); err != nil {
			return nil, fixPath(err, display)
		}
	}
	return lib, nil
}

// buildItems fills in the item kinds and sources of ix, checking that no
// two kinds share a code and that every yield names a kind.
func (l *Library) buildItems(ix *index) error {
	for name, it := range ix.items {
		l.items[name] = it.val
	}
	for _, name := range slices.Sorted(maps.Keys(ix.items)) {
		it := ix.items[name]
		if other, dup := l.byCode[it.val.Code]; dup {
			return &Error{Path: it.file, Name: name, Err: invalidf("\"code\" %d is %q's already (a code names one kind)", it.val.Code, other)}
		}
		l.byCode[it.val.Code] = name
		if err := l.checkYields(it.val.Yields); err != nil {
			return &Error{Path: it.file, Name: name, Err: err}
		}
		if b := it.val.Placed.Becomes; b != "" {
			into, ok := ix.items[b]
			switch {
			case !ok:
				return &Error{Path: it.file, Name: name, Err: invalidf("\"becomes\" %q: no such item kind", b)}
			case into.val.Placed.Slot != it.val.Placed.Slot || into.val.Placed.Container != 0 || into.val.Placed.Door:
				return &Error{Path: it.file, Name: name, Err: invalidf("\"becomes\" %q: what it becomes must sit in its slot when placed, and be no container and no door", b)}
			}
		}
	}
	for _, class := range slices.Sorted(maps.Keys(ix.sources)) {
		s := ix.sources[class]
		if err := l.checkYields(s.val.Yields); err != nil {
			return &Error{Path: s.file, Name: class.String(), Err: invalidf("source: %v", err)}
		}
		l.sources[class] = s.val
	}
	if s := ix.starter; s != nil {
		if err := l.checkYields(s.val); err != nil {
			return &Error{Path: s.file, Name: "starter", Err: invalidf("starter: %v", err)}
		}
		l.starter = s.val
	}
	return nil
}

// buildRecipes checks the recipes of ix against the item kinds: every
// item and station they name exists, no two share a code or (at one
// station) their inputs, each fits every container of its station, inputs
// and outputs alike, and every blueprint teaches a recipe.
func (l *Library) buildRecipes(ix *index) error {
	stations := map[string][]Item{} // the kinds that are each station
	for _, name := range slices.Sorted(maps.Keys(l.items)) {
		if it := l.items[name]; it.Placed.Station != "" {
			stations[it.Placed.Station] = append(stations[it.Placed.Station], it)
		}
	}
	if n := len(ix.recipes); n > MaxRecipes {
		return &Error{Path: RecipesFile, Err: tooLargef("%d recipes (at most %d)", n, MaxRecipes)}
	}
	byCode := map[uint16]string{}
	for _, name := range slices.Sorted(maps.Keys(ix.recipes)) {
		r := ix.recipes[name]
		rc := r.val
		fail := func(err error) error { return &Error{Path: r.file, Name: name, Err: err} }
		if other, dup := byCode[rc.Code]; dup {
			return fail(invalidf("\"code\" %d is %q's already (a code names one recipe)", rc.Code, other))
		}
		byCode[rc.Code] = name
		kinds, ok := stations[rc.Station]
		if !ok {
			return fail(invalidf("station %q: no item kind is that station (a placed container with \"station\": %q)", rc.Station, rc.Station))
		}
		for _, ys := range [][]Yield{rc.Inputs, rc.Outputs} {
			if err := l.checkYields(ys); err != nil {
				return fail(err)
			}
		}
		for _, k := range kinds {
			if in, out := l.slotsFor(rc.Inputs), l.slotsFor(rc.Outputs); in > k.Placed.Container || out > k.Placed.Container {
				return fail(invalidf("its inputs take %d slots and its outputs %d, and station %q (item kind %q) holds %d", in, out, rc.Station, k.Name, k.Placed.Container))
			}
		}
		for _, other := range l.recipes {
			if other.Station == rc.Station && sameItems(other.Inputs, rc.Inputs) {
				return fail(invalidf("its inputs are %q's: at one station, one set of inputs makes one thing", other.Name))
			}
		}
		l.recipes = append(l.recipes, rc)
	}
	slices.SortFunc(l.recipes, func(a, b Recipe) int { return cmp.Compare(a.Code, b.Code) })
	for _, name := range slices.Sorted(maps.Keys(ix.items)) {
		it := ix.items[name]
		if t := it.val.Teaches; t != "" && clientCopy {
			// A client's copy knows no recipe: its blueprints teach nothing.
			v := l.items[name]
			v.Teaches = ""
			l.items[name] = v
		} else if t != "" {
			if _, ok := ix.recipes[t]; !ok {
				return &Error{Path: it.file, Name: name, Err: invalidf("teaches %q: no such recipe (known: %s)", t, list(ix.recipes))}
			}
		}
	}
	return nil
}

// Recipes returns every recipe, sorted by code, in a fresh slice (their
// inputs and outputs fresh copies).
func (l *Library) Recipes() []Recipe {
	out := slices.Clone(l.recipes)
	for i := range out {
		out[i].Inputs, out[i].Outputs = slices.Clone(out[i].Inputs), slices.Clone(out[i].Outputs)
	}
	return out
}

// Starter returns the starter kit, what every new character is given in
// the first Area it joins (a fresh copy; nil when the content has none).
func (l *Library) Starter() []Yield { return slices.Clone(l.starter) }

// checkYields checks that every yield names an item kind.
func (l *Library) checkYields(ys []Yield) error {
	for _, y := range ys {
		if _, ok := l.items[y.Item]; !ok {
			return invalidf("yields %q: no such item kind (known: %s)", y.Item, list(l.items))
		}
	}
	return nil
}

// checkRefs checks the names a map refers to against the library.
func (l *Library) checkRefs(m *Map) error {
	for _, s := range m.Spawners {
		if _, ok := l.creatures[s.Creature]; !ok {
			return &Error{Path: m.Path, Layer: "spawners", Object: s.ID, Name: s.Name,
				Err: invalidf("creature %q: no such creature kind (known: %s)", s.Creature, list(l.creatures))}
		}
	}
	for _, p := range m.Portals {
		fail := func(err error) error {
			return &Error{Path: m.Path, Layer: "portals", Object: p.ID, Name: p.Name, Err: err}
		}
		t, ok := l.templates[p.Target]
		if !ok {
			return fail(invalidf("target %q: no such template (known: %s)", p.Target, list(l.templates)))
		}
		if !p.HasTo {
			continue
		}
		x, y := int(p.ToX), int(p.ToY)
		switch {
		case !t.Map.In(x, y):
			return fail(invalidf("arrival square (%d, %d) is outside %s (%dx%d)", x, y, t.Map.Path, t.Map.W, t.Map.H))
		case !t.Map.Walkable(x, y):
			return fail(invalidf("arrival square (%d, %d) in %s is not walkable", x, y, t.Map.Path))
		}
		if _, on := t.Map.PortalAt(x, y); on {
			return fail(invalidf("arrival square (%d, %d) in %s is a portal", x, y, t.Map.Path))
		}
	}
	return nil
}

// list returns a map's keys, sorted, comma-separated.
func list[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// Template returns the template called name. An unknown name is an
// [*Error] wrapping [ErrNotFound] that lists the known ones.
func (l *Library) Template(name string) (Template, error) {
	t, ok := l.templates[name]
	if !ok {
		return Template{}, &Error{Err: notFoundf("unknown template %q (known: %s)", name, list(l.templates))}
	}
	return t, nil
}

// Rules returns the rule set called name, or an error like [Library.Template]'s.
func (l *Library) Rules(name string) (RuleSet, error) {
	r, ok := l.rules[name]
	if !ok {
		return RuleSet{}, &Error{Err: notFoundf("unknown rule set %q (known: %s)", name, list(l.rules))}
	}
	return r, nil
}

// Creature returns the creature kind called name (its Hunts a fresh
// copy), or an error like [Library.Template]'s.
func (l *Library) Creature(name string) (Creature, error) {
	c, ok := l.creatures[name]
	if !ok {
		return Creature{}, &Error{Err: notFoundf("unknown creature kind %q (known: %s)", name, list(l.creatures))}
	}
	c.Hunts = slices.Clone(c.Hunts)
	return c, nil
}

// Templates returns every template, sorted by name, in a fresh slice.
func (l *Library) Templates() []Template {
	ts := make([]Template, 0, len(l.templates))
	for _, name := range slices.Sorted(maps.Keys(l.templates)) {
		ts = append(ts, l.templates[name])
	}
	return ts
}

// RuleSets returns every rule set, sorted by name, in a fresh slice.
func (l *Library) RuleSets() []RuleSet {
	rs := make([]RuleSet, 0, len(l.rules))
	for _, name := range slices.Sorted(maps.Keys(l.rules)) {
		rs = append(rs, l.rules[name])
	}
	return rs
}

// Creatures returns every creature kind, sorted by name, in a fresh slice
// (their Hunts fresh copies).
func (l *Library) Creatures() []Creature {
	cs := make([]Creature, 0, len(l.creatures))
	for _, name := range slices.Sorted(maps.Keys(l.creatures)) {
		c := l.creatures[name]
		c.Hunts = slices.Clone(c.Hunts)
		cs = append(cs, c)
	}
	return cs
}

// Kinds returns the area kinds, sorted: the names of the rule sets that
// have a template of the same name (their default template). The embedded
// content has arena, home, offline and village.
func (l *Library) Kinds() []string {
	var ks []string
	for _, name := range slices.Sorted(maps.Keys(l.rules)) {
		if _, ok := l.templates[name]; ok {
			ks = append(ks, name)
		}
	}
	return ks
}

// Kind returns the rule set of the area kind called name; its default
// template is Template(name). An unknown kind is an [*Error] wrapping
// [ErrNotFound] that lists the known kinds. It is the check the director
// makes on an area kind a client or operator names.
func (l *Library) Kind(name string) (RuleSet, error) {
	r, ok := l.rules[name]
	if _, def := l.templates[name]; !ok || !def {
		return RuleSet{}, &Error{Err: notFoundf("unknown area kind %q (known: %s)", name, strings.Join(l.Kinds(), ", "))}
	}
	return r, nil
}

// Item returns the item kind called name (its Yields a fresh copy), and
// whether there is one.
func (l *Library) Item(name string) (Item, bool) {
	it, ok := l.items[name]
	it.Yields = slices.Clone(it.Yields)
	return it, ok
}

// ItemByCode returns the item kind whose code is code (its Yields a fresh
// copy), and whether there is one. Code 0 is never a kind.
func (l *Library) ItemByCode(code uint16) (Item, bool) {
	name, ok := l.byCode[code]
	if !ok {
		return Item{}, false
	}
	return l.Item(name)
}

// Items returns every item kind, sorted by code, in a fresh slice (their
// Yields fresh copies).
func (l *Library) Items() []Item {
	its := make([]Item, 0, len(l.items))
	for _, code := range slices.Sorted(maps.Keys(l.byCode)) {
		it, _ := l.Item(l.byCode[code])
		its = append(its, it)
	}
	return its
}

// Source returns what gathering from an object of class gives (its Yields
// a fresh copy), and whether objects of that class can be gathered.
func (l *Library) Source(class ObjectClass) (Source, bool) {
	s, ok := l.sources[class]
	s.Yields = slices.Clone(s.Yields)
	return s, ok
}
