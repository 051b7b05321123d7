package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
)

// The index files of a content folder.
const (
	RulesFile     = "rules.json"
	CreaturesFile = "creatures.json"
	TemplatesFile = "templates.json"
)

// maxEntries bounds the entries of one index file.
const maxEntries = 4096

// named is an index entry with the file it came from (for errors).
type named[T any] struct {
	val  T
	file string
}

// index is the content of the three index files, checked entry by entry
// and unique by name within each.
type index struct {
	rules     map[string]named[RuleSet]
	creatures map[string]named[Creature]
	templates map[string]named[rawTemplate]
}

func newIndex() *index {
	return &index{
		rules:     make(map[string]named[RuleSet]),
		creatures: make(map[string]named[Creature]),
		templates: make(map[string]named[rawTemplate]),
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
	files := []struct {
		name string
		v    any
	}{{RulesFile, &rf}, {CreaturesFile, &cf}, {TemplatesFile, &tf}}
	for _, f := range files {
		if !required {
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
	}{{RulesFile, len(rf.Rules)}, {CreaturesFile, len(cf.Creatures)}, {TemplatesFile, len(tf.Templates)}} {
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
	return ix, nil
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

// merge lays over's entries over ix's: an entry of the same name replaces
// the one below, new names are added.
func (ix *index) merge(over *index) {
	for k, v := range over.rules {
		ix.rules[k] = v
	}
	for k, v := range over.creatures {
		ix.creatures[k] = v
	}
	for k, v := range over.templates {
		ix.templates[k] = v
	}
}

// fixPath rewrites the path an *Error names for display.
func fixPath(err error, display func(string) string) error {
	var e *Error
	if errors.As(err, &e) && e.Path != "" {
		e.Path = display(e.Path)
	}
	return err
}
