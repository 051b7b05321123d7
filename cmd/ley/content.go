package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director"
)

// addContentFlag adds --content, the operator's content folder, to f.
func addContentFlag(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "content", "", "folder of the realm's own content (maps, rules.json, creatures.json, templates.json, items.json, recipes.json) laid over the embedded content; empty: the embedded content only")
}

// loadContent loads the content folder dir over the embedded content, or
// returns the embedded content when dir is empty. Every problem names the
// file it is in.
func loadContent(dir string) (*content.Library, error) {
	if dir == "" {
		return content.Default(), nil
	}
	lib, err := content.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--content %s: %w", dir, err)
	}
	return lib, nil
}

// absContentDir returns dir as an absolute path, for the area hosts a
// director spawns ("" stays "").
func absContentDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--content %s: %w", dir, err)
	}
	return abs, nil
}

// directorContent loads the content folder dir (see loadContent) into
// cfg.Content, and has the director pass it on to the area hosts it
// spawns.
func directorContent(cfg *director.Config, dir string) error {
	lib, err := loadContent(dir)
	if err != nil {
		return err
	}
	abs, err := absContentDir(dir)
	if err != nil {
		return err
	}
	cfg.Content, cfg.Spawn.Content = lib, abs
	return nil
}

// contentLine says which content a realm runs, for ley run's banner.
func contentLine(dir string) string {
	if dir == "" {
		return "embedded (maps, rules, creatures, templates, items, recipes; --content DIR adds a folder of your own)"
	}
	return dir + " over the embedded content"
}
