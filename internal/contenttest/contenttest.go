// Package contenttest draws content for tests: Tiled maps from rows of
// characters, written where a content folder laid over the embedded
// content (content.LoadDir) finds them.
package contenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Map writes a Tiled map drawn in rows of characters into dir/maps and
// returns its path relative to dir: '.' grass, '#' wall, '~' water, 'D' a
// closed door, 'd' an open door, 'T' a tree, 'S' a spawn point, and
// spawners of one creature each (leash 20, respawn 1 s): 'W' a wolf, 'L' a
// slime, 'H' a hound, 'M' a statue.
// Everything but walls and water stands on grass.
func Map(t testing.TB, dir, name string, rows []string) string {
	t.Helper()
	return MapWith(t, dir, name, rows, 1)
}

// MapWith is Map with perSpawner creatures for each spawner.
func MapWith(t testing.TB, dir, name string, rows []string, perSpawner int) string {
	t.Helper()
	h, w := len(rows), len(rows[0])
	floor, walls := make([]int, w*h), make([]int, w*h)
	type prop struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	type obj struct {
		ID         int     `json:"id"`
		Name       string  `json:"name"`
		Type       string  `json:"type"`
		X          float64 `json:"x"`
		Y          float64 `json:"y"`
		Point      bool    `json:"point"`
		Properties []prop  `json:"properties,omitempty"`
	}
	var objects, spawns, spawners []obj
	id := 0
	point := func(class string, x, y int, props ...prop) obj {
		id++
		return obj{ID: id, Type: class, X: float64(x*16 + 8), Y: float64(y*16 + 8), Point: true, Properties: props}
	}
	for y, row := range rows {
		for x, ch := range row {
			i := y*w + x
			floor[i] = 1 // grass
			switch ch {
			case '#':
				walls[i] = 3
			case '~':
				floor[i] = 2 // water
			case 'D', 'd':
				objects = append(objects, point("door", x, y, prop{"open", "bool", ch == 'd'}))
			case 'T':
				objects = append(objects, point("tree", x, y))
			case 'S':
				spawns = append(spawns, point("spawn", x, y))
			case 'W', 'L', 'H', 'M':
				kind := map[rune]string{'W': "wolf", 'L': "slime", 'H': "hound", 'M': "statue"}[ch]
				spawners = append(spawners, point("spawner", x, y, prop{"creature", "string", kind}, prop{"count", "int", perSpawner}, prop{"leash", "int", 20}, prop{"respawn", "float", 1.0}))
			}
		}
	}
	layer := func(name string, data []int) map[string]any {
		return map[string]any{"type": "tilelayer", "name": name, "width": w, "height": h, "x": 0, "y": 0, "data": data, "opacity": 1, "visible": true}
	}
	group := func(name string, os []obj) map[string]any {
		if os == nil {
			os = []obj{}
		}
		return map[string]any{"type": "objectgroup", "name": name, "objects": os, "x": 0, "y": 0, "opacity": 1, "visible": true}
	}
	m := map[string]any{
		"type": "map", "orientation": "orthogonal", "renderorder": "right-down", "infinite": false,
		"width": w, "height": h, "tilewidth": 16, "tileheight": 16, "nextobjectid": id + 1,
		"layers": []any{layer("floor", floor), layer("walls", walls), group("objects", objects), group("spawns", spawns), group("spawners", spawners)},
		"tilesets": []any{map[string]any{
			"firstgid": 1, "name": "test", "tilewidth": 16, "tileheight": 16, "tilecount": 3, "columns": 3,
			"image": "test.png", "imagewidth": 48, "imageheight": 16,
			"tiles": []any{map[string]any{"id": 0, "type": "grass"}, map[string]any{"id": 1, "type": "water"}, map[string]any{"id": 2, "type": "stone"}},
		}},
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("maps", name+".tmj")
	if err := os.MkdirAll(filepath.Join(dir, "maps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}
