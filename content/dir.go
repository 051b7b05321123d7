//go:build !(js && wasm)

package content

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LoadDir loads an operator's content folder over the embedded content
// and checks the result as a whole, like [Load].
//
// The folder has the embedded content's layout, and every part of it is
// optional:
//
//   - rules.json, creatures.json, templates.json, items.json: each entry
//     is merged into the embedded ones by name (a source of items.json: by
//     class). An entry named like an embedded one replaces it (a "village"
//     template of the operator's replaces the embedded "village"); a new
//     name is added. Nothing can be removed. An item kind keeps its code:
//     one that replaces an embedded kind must have the embedded kind's
//     code, and a new kind takes a code from [MinOperatorItemCode] to
//     65535 that no other kind has (the codes below are ley's, so a kind
//     ley ships later never takes an operator's code).
//   - recipes.json: merged the same way, by name; a recipe keeps its code,
//     and a new one takes a code from [MinOperatorRecipeCode] up.
//   - any other file (maps/*.tmj, tilesets): read in preference to the
//     embedded file of the same path, so a maps/village.tmj of the
//     operator's replaces the village map for every template naming it,
//     and an operator's map may use the embedded tileset maps/ley.tsj.
//
// A .json file at the folder's top other than the four index files is
// an error (most likely a misspelt name). Errors about the operator's
// files name them with the folder in front.
func LoadDir(dir string) (*Library, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Path: dir, Err: invalidf("no such folder")}
	}
	if err != nil {
		return nil, &Error{Path: dir, Err: invalidf("%v", err)}
	}
	if !st.IsDir() {
		return nil, &Error{Path: dir, Err: invalidf("not a folder")}
	}
	upper := os.DirFS(dir)
	if err := checkTop(upper, dir); err != nil {
		return nil, err
	}
	o := overlay{upper: upper, lower: Embedded(), dir: dir}
	ix, err := readIndex(Embedded(), true, func(p string) string { return p })
	if err != nil {
		return nil, err
	}
	over, err := readIndex(upper, false, o.display)
	if err != nil {
		return nil, err
	}
	if err := ix.merge(over); err != nil {
		return nil, err
	}
	return build(ix, o, o.display)
}

// checkTop refuses unknown .json files at the top of an operator's folder.
func checkTop(fsys fs.FS, dir string) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return &Error{Path: dir, Err: invalidf("%v", err)}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.EqualFold(path.Ext(name), ".json") {
			continue
		}
		if name != RulesFile && name != CreaturesFile && name != TemplatesFile && name != ItemsFile && name != RecipesFile {
			return &Error{Path: filepath.Join(dir, name), Err: invalidf("unknown file (want %s, %s, %s, %s or %s)", RulesFile, CreaturesFile, TemplatesFile, ItemsFile, RecipesFile)}
		}
	}
	return nil
}

// overlay reads a file from upper, or from lower if upper has none.
type overlay struct {
	upper, lower fs.FS
	dir          string
}

// Open implements fs.FS.
func (o overlay) Open(name string) (fs.File, error) {
	f, err := o.upper.Open(name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	return o.lower.Open(name)
}

// display names a file for errors: with the operator's folder in front
// when it comes from there.
func (o overlay) display(p string) string {
	if _, err := fs.Stat(o.upper, p); err == nil {
		return filepath.Join(o.dir, filepath.FromSlash(p))
	}
	return p
}
