package content

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// operatorDir writes an operator's folder: files by slash path.
func operatorDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// forestMap is small.tmj on the shipped tileset, with bears, and a portal
// to the village's arena road.
func forestMap(t *testing.T) string {
	m := smallMap(t)
	useShippedTileset(t, m)
	setProp(objectOf(t, m, 6), "creature", "string", "bear")
	o := objectOf(t, m, 4)
	setProp(o, "target", "string", "village")
	setProp(o, "to_x", "int", 60)
	setProp(o, "to_y", "int", 23)
	return string(encode(t, m))
}

func TestLoadDirMerges(t *testing.T) {
	forest := forestMap(t)
	dir := operatorDir(t, map[string]string{
		"rules.json": `{"rules": [
			{"name": "village", "max_players": 10, "steps_per_second": 5, "diagonal": true},
			{"name": "forest", "max_players": 16, "steps_per_second": 4, "creatures_hunt_players": true}]}`,
		"creatures.json": `{"creatures": [{"name": "bear", "hp": 80, "step_ticks": 6, "sense_radius": 8,
			"attack_damage": 12, "attack_ticks": 25, "hunts_players": true, "hunts": ["deer"]}]}`,
		"templates.json":  `{"templates": [{"name": "forest", "rules": "forest", "map": "maps/forest.tmj"}]}`,
		"maps/forest.tmj": forest,
		"maps/home.tmj":   forest, // replaces the embedded home map
		"README.txt":      "notes are fine",
	})
	lib, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lib.Kinds(), []string{"arena", "forest", "home", "offline", "village"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Kinds() = %v; want %v", got, want)
	}
	village, err := lib.Kind("village")
	if err != nil || village.MaxPlayers != 10 {
		t.Errorf("Kind(village) = %+v, %v; want the operator's, 10 players", village, err)
	}
	if tp, err := lib.Template("village"); err != nil || tp.Rules.MaxPlayers != 10 || tp.Map.W != 64 {
		t.Errorf("Template(village) = %+v, %v; want the embedded map with the operator's rules", tp, err)
	}
	forestT, err := lib.Template("forest")
	if err != nil || forestT.Rules.Name != "forest" || forestT.Map.Spawners[0].Creature != "bear" {
		t.Fatalf("Template(forest) = %+v, %v; want the operator's", forestT, err)
	}
	home, _ := lib.Template("home")
	offline, _ := lib.Template("offline")
	if home.Map.W != 10 || offline.Map != home.Map {
		t.Errorf("home and offline maps are %dx%d and %p, %p; want the operator's 10x8 map, shared", home.Map.W, home.Map.H, home.Map, offline.Map)
	}
	if arena, _ := lib.Template("arena"); arena.Map.W != 96 {
		t.Errorf("arena map is %d wide; want the embedded 96", arena.Map.W)
	}
	for _, name := range []string{"bear", "wolf", "deer", "slime"} {
		if _, err := lib.Creature(name); err != nil {
			t.Error(err)
		}
	}
	if r, _ := Default().Rules("village"); r.MaxPlayers != 64 {
		t.Errorf("Default's village has %d players after LoadDir; want 64", r.MaxPlayers)
	}
}

func TestLoadDirEmpty(t *testing.T) {
	lib, err := LoadDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lib.Kinds(), Default().Kinds()) || len(lib.Templates()) != len(Default().Templates()) {
		t.Errorf("an empty folder gives kinds %v; want the defaults' %v", lib.Kinds(), Default().Kinds())
	}
}

func TestLoadDirErrors(t *testing.T) {
	badMap := smallMap(t)
	useShippedTileset(t, badMap)
	layerOf(t, badMap, "walls")["name"] = "wall"
	for _, tc := range []struct {
		name  string
		files map[string]string
		file  string // the file the error must name, in the folder
		want  string
	}{
		{"misspelt index file", map[string]string{"rule.json": `{}`}, "rule.json",
			"unknown file (want rules.json, creatures.json or templates.json)"},
		{"broken operator map", map[string]string{"maps/village.tmj": string(encode(t, badMap))}, "maps/village.tmj",
			`layer "wall": unknown layer`},
		{"default template with other rules", map[string]string{
			"templates.json": `{"templates": [{"name": "village", "rules": "arena", "map": "maps/village.tmj"}]}`,
		}, "templates.json", `"village": the default template of area kind "village" must use rules "village", not "arena"`},
		{"bad rules", map[string]string{"rules.json": `{"rules": [{"name": "arena", "max_players": 0, "steps_per_second": 5}]}`},
			"rules.json", `"arena": "max_players" is 0`},
		{"unknown creature field", map[string]string{"creatures.json": `{"creatures": [{"name": "x", "hp": 1, "speed": 3}]}`},
			"creatures.json", `unknown field "speed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := operatorDir(t, tc.files)
			_, err := LoadDir(dir)
			checkErr(t, err, ErrInvalid, "content: "+filepath.Join(dir, filepath.FromSlash(tc.file))+": ", tc.want)
		})
	}
	_, err := LoadDir(filepath.Join(t.TempDir(), "missing"))
	checkErr(t, err, ErrInvalid, "content: ", "missing: no such folder")
}
