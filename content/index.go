package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"slices"
)

// The index files of a content folder.
const (
	RulesFile     = "rules.json"
	CreaturesFile = "creatures.json"
	TemplatesFile = "templates.json"
	ItemsFile     = "items.json"
	// RecipesFile is optional: a content without it has no recipes.
	RecipesFile = "recipes.json"
)

// maxEntries bounds the entries of one index file.
const maxEntries = 4096

// named is an index entry with the file it came from (for errors).
type named[T any] struct {
	val  T
	file string
}

// index is the content of the index files, checked entry by entry and
// unique by name (a source: by class) within each.
type index struct {
	rules     map[string]named[RuleSet]
	creatures map[string]named[Creature]
	templates map[string]named[rawTemplate]
	items     map[string]named[Item]
	recipes   map[string]named[Recipe]
	sources   map[ObjectClass]named[Source]
	// starter is the starter kit, when a file gave one.
	starter *named[[]Yield]
}

func newIndex() *index {
	return &index{
		rules:     make(map[string]named[RuleSet]),
		creatures: make(map[string]named[Creature]),
		templates: make(map[string]named[rawTemplate]),
		items:     make(map[string]named[Item]),
		recipes:   make(map[string]named[Recipe]),
		sources:   make(map[ObjectClass]named[Source]),
	}
}

// readIndex reads the index files of fsys. A missing file is an error when
// required, else it contributes nothing. display turns a path into what
// errors show.
func readIndex(fsys fs.FS, required bool, display func(string) string) (*index, error) {
	ix := newIndex()
	var rf struct {
		Rules []rawRules `json:"rules"`
	}
	var cf struct {
		Creatures []rawCreature `json:"creatures"`
	}
	var tf struct {
		Templates []rawTemplate `json:"templates"`
	}
	var items itemsFile
	var recipes recipesFile
	files := []struct {
		name string
		v    any
	}{{RulesFile, &rf}, {CreaturesFile, &cf}, {TemplatesFile, &tf}, {ItemsFile, &items}, {RecipesFile, &recipes}}
	for _, f := range files {
		if !required || f.name == RecipesFile {
			if _, err := fs.Stat(fsys, f.name); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if err := readJSON(fsys, f.name, f.v); err != nil {
			return nil, fixPath(err, display)
		}
	}
	for _, n := range []struct {
		file string
		n    int
	}{{RulesFile, len(rf.Rules)}, {CreaturesFile, len(cf.Creatures)}, {TemplatesFile, len(tf.Templates)},
		{ItemsFile, len(items.Items)}, {ItemsFile, len(items.Sources)}, {RecipesFile, len(recipes.Recipes)}} {
		if n.n > maxEntries {
			return nil, &Error{Path: display(n.file), Err: tooLargef("%d entries (at most %d)", n.n, maxEntries)}
		}
	}
	for _, r := range rf.Rules {
		file := display(RulesFile)
		rs, err := r.ruleSet()
		if err == nil {
			err = unique(ix.rules, r.Name)
		}
		if err != nil {
			return nil, &Error{Path: file, Name: r.Name, Err: err}
		}
		ix.rules[rs.Name] = named[RuleSet]{rs, file}
	}
	for _, r := range cf.Creatures {
		file := display(CreaturesFile)
		c, err := r.creature()
		if err == nil {
			err = unique(ix.creatures, r.Name)
		}
		if err != nil {
			return nil, &Error{Path: file, Name: r.Name, Err: err}
		}
		ix.creatures[c.Name] = named[Creature]{c, file}
	}
	for _, r := range tf.Templates {
		file := display(TemplatesFile)
		err := r.check()
		if err == nil {
			err = unique(ix.templates, r.Name)
		}
		if err != nil {
			return nil, &Error{Path: file, Name: r.Name, Err: err}
		}
		ix.templates[r.Name] = named[rawTemplate]{r, file}
	}
	if err := ix.readItems(items, display(ItemsFile)); err != nil {
		return nil, err
	}
	for _, r := range recipes.Recipes {
		file := display(RecipesFile)
		rc, err := r.recipe()
		if err == nil {
			err = unique(ix.recipes, r.Name)
		}
		if err != nil {
			return nil, &Error{Path: file, Name: r.Name, Err: err}
		}
		ix.recipes[rc.Name] = named[Recipe]{rc, file}
	}
	return ix, nil
}

// itemsFile is items.json.
type itemsFile struct {
	Items   []rawItem   `json:"items"`
	Sources []rawSource `json:"sources"`
	Starter *[]rawYield `json:"starter"`
}

// readItems checks items.json's entries, each on its own, into ix. file
// is the file as errors name it.
func (ix *index) readItems(f itemsFile, file string) error {
	for _, r := range f.Items {
		it, err := r.item()
		if err == nil {
			err = unique(ix.items, r.Name)
		}
		if err != nil {
			return &Error{Path: file, Name: r.Name, Err: err}
		}
		ix.items[it.Name] = named[Item]{it, file}
	}
	for _, r := range f.Sources {
		s, err := r.source()
		if _, dup := ix.sources[s.Class]; err == nil && dup {
			err = invalidf("listed twice")
		}
		if err != nil {
			return &Error{Path: file, Name: r.Class, Err: &problem{kindOf(err), "source: " + err.Error()}}
		}
		ix.sources[s.Class] = named[Source]{s, file}
	}
	if f.Starter != nil {
		ys, err := yieldsUpTo(*f.Starter, MaxStarter)
		if err != nil {
			return &Error{Path: file, Name: "starter", Err: &problem{kindOf(err), "starter: " + err.Error()}}
		}
		ix.starter = &named[[]Yield]{ys, file}
	}
	return nil
}

func unique[T any](m map[string]named[T], name string) error {
	if _, dup := m[name]; dup {
		return invalidf("listed twice")
	}
	return nil
}

// readJSON decodes one index file strictly: no unknown fields, nothing
// after the value.
func readJSON(fsys fs.FS, p string, v any) error {
	b, err := readFile(fsys, p)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{Path: p, Err: invalidf("bad JSON: %v", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Path: p, Err: invalidf("bad JSON: data after the top-level object")}
	}
	return nil
}

// merge lays over's entries over ix's: an entry of the same name (a
// source: of the same class) replaces the one below, new names are added.
// An item kind that replaces one must keep its code, and a new kind must
// take a code from [MinOperatorItemCode] up that no kind below has.
func (ix *index) merge(over *index) error {
	codes := make(map[uint16]string, len(ix.items))
	for name, it := range ix.items {
		codes[it.val.Code] = name
	}
	for _, name := range slices.Sorted(maps.Keys(over.items)) {
		it := over.items[name]
		fail := func(err error) error { return &Error{Path: it.file, Name: name, Err: err} }
		if below, ok := ix.items[name]; ok {
			if below.val.Code != it.val.Code {
				return fail(invalidf("\"code\" is %d, but the kind it replaces has %d (a kind's code never changes)", it.val.Code, below.val.Code))
			}
			continue
		}
		if it.val.Code < MinOperatorItemCode {
			return fail(invalidf("\"code\" is %d: a new kind takes a code from %d to 65535 (the codes below are ley's)", it.val.Code, MinOperatorItemCode))
		}
		if other, taken := codes[it.val.Code]; taken {
			return fail(invalidf("\"code\" %d is %q's already", it.val.Code, other))
		}
	}
	for k, v := range over.items {
		ix.items[k] = v
	}
	if err := mergeRecipes(ix.recipes, over.recipes); err != nil {
		return err
	}
	for k, v := range over.sources {
		ix.sources[k] = v
	}
	if over.starter != nil {
		ix.starter = over.starter
	}
	for k, v := range over.rules {
		ix.rules[k] = v
	}
	for k, v := range over.creatures {
		ix.creatures[k] = v
	}
	for k, v := range over.templates {
		ix.templates[k] = v
	}
	return nil
}

// fixPath rewrites the path an *Error names for display.
func fixPath(err error, display func(string) string) error {
	var e *Error
	if errors.As(err, &e) && e.Path != "" {
		e.Path = display(e.Path)
	}
	return err
}

// mergeRecipes lays over's recipes over below's, by name, under the rule
// merge keeps for item kinds: a recipe that replaces one keeps its code, a
// new one takes a code from [MinOperatorRecipeCode] up that none below has.
func mergeRecipes(below, over map[string]named[Recipe]) error {
	codes := make(map[uint16]string, len(below))
	for name, r := range below {
		codes[r.val.Code] = name
	}
	for _, name := range slices.Sorted(maps.Keys(over)) {
		r := over[name]
		fail := func(err error) error { return &Error{Path: r.file, Name: name, Err: err} }
		if b, ok := below[name]; ok {
			if b.val.Code != r.val.Code {
				return fail(invalidf("\"code\" is %d, but the recipe it replaces has %d (a recipe's code never changes)", r.val.Code, b.val.Code))
			}
			continue
		}
		if r.val.Code < MinOperatorRecipeCode {
			return fail(invalidf("\"code\" is %d: a new recipe takes a code from %d to 65535 (the codes below are ley's)", r.val.Code, MinOperatorRecipeCode))
		}
		if other, taken := codes[r.val.Code]; taken {
			return fail(invalidf("\"code\" %d is %q's already", r.val.Code, other))
		}
	}
	for k, v := range over {
		below[k] = v
	}
	return nil
}
