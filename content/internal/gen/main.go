// Command gen writes ley's shipped maps as Tiled files: the tileset
// (ley.tsj and its image ley.png) and the maps home.tmj, village.tmj and
// arena.tmj. It is run by go generate in package content:
//
//	go run ./internal/gen -out data/maps
//
// Its output is deterministic, and a test checks that the committed files
// are what it writes. The maps open in Tiled; edit the program, not the
// files, or stop generating a map and edit it in Tiled from then on.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	out := flag.String("out", "data/maps", "folder to write the maps into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// write writes every generated file into dir.
func write(dir string) error {
	files, err := generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns every generated file by name.
func generate() (map[string][]byte, error) {
	files := make(map[string][]byte)
	png, err := tilesetImage()
	if err != nil {
		return nil, err
	}
	files[imageFile] = png
	ts, err := tilesetJSON()
	if err != nil {
		return nil, err
	}
	files[tilesetFile] = ts
	for _, m := range []*builder{home(), village(), arena()} {
		b, err := m.encode()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.file, err)
		}
		files[m.file] = b
	}
	return files, nil
}
