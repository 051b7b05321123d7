package content

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// editedFS returns the embedded content with some files replaced.
func editedFS(t *testing.T, files map[string]string) fstest.MapFS {
	t.Helper()
	fsys := shippedFS(t, jmap{})
	delete(fsys, "maps/small.tmj")
	for p, data := range files {
		if data == "" {
			delete(fsys, p)
			continue
		}
		fsys[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

// shippedMap returns a shipped map decoded, for editing.
func shippedMap(t *testing.T, p string) jmap {
	t.Helper()
	b, err := fsReadT(t, p)
	if err != nil {
		t.Fatal(err)
	}
	return decodeT(t, b)
}

// objectNamed returns the object called name, in any layer.
func objectNamed(t *testing.T, m jmap, name string) jmap {
	t.Helper()
	for _, l := range m["layers"].([]any) {
		objs, _ := l.(jmap)["objects"].([]any)
		for _, o := range objs {
			if o.(jmap)["name"] == name {
				return o.(jmap)
			}
		}
	}
	t.Fatalf("no object %q", name)
	return nil
}

func TestLoadErrors(t *testing.T) {
	mapEdit := func(p string, edit func(t *testing.T, m jmap)) func(t *testing.T) map[string]string {
		return func(t *testing.T) map[string]string {
			m := shippedMap(t, p)
			edit(t, m)
			return map[string]string{p: string(encode(t, m))}
		}
	}
	files := func(f map[string]string) func(t *testing.T) map[string]string {
		return func(*testing.T) map[string]string { return f }
	}
	for _, tc := range []struct {
		name  string
		files func(t *testing.T) map[string]string
		kind  error
		want  string
	}{
		{"spawner of an unknown creature", mapEdit("maps/village.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "north meadow deer"), "creature", "string", "bear")
		}), ErrInvalid, `content: maps/village.tmj: layer "spawners": object `},
		{"spawner of an unknown creature says which", mapEdit("maps/village.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "north meadow deer"), "creature", "string", "bear")
		}), ErrInvalid, `"north meadow deer": creature "bear": no such creature kind (known: deer, slime, wolf)`},
		{"portal to an unknown template", mapEdit("maps/village.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "to the arena"), "target", "string", "arna")
		}), ErrInvalid, `"to the arena": target "arna": no such template (known: arena, home, offline, village)`},
		{"arrival on a wall", mapEdit("maps/arena.tmj", func(t *testing.T, m jmap) {
			o := objectNamed(t, m, "to the village")
			setProp(o, "to_x", "int", 6)
			setProp(o, "to_y", "int", 14)
		}), ErrInvalid, `"to the village": arrival square (6, 14) in maps/village.tmj is not walkable`},
		{"arrival error names the portal", mapEdit("maps/arena.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "to the village"), "to_y", "int", 14)
			setProp(objectNamed(t, m, "to the village"), "to_x", "int", 6)
		}), ErrInvalid, `content: maps/arena.tmj: layer "portals": object `},
		{"arrival off the map", mapEdit("maps/arena.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "to the village"), "to_x", "int", 100)
		}), ErrInvalid, `arrival square (100, 23) is outside maps/village.tmj (64x48)`},
		{"arrival on a portal", mapEdit("maps/arena.tmj", func(t *testing.T, m jmap) {
			setProp(objectNamed(t, m, "to the village"), "to_x", "int", 62)
		}), ErrInvalid, `arrival square (62, 23) in maps/village.tmj is a portal`},
		{"template of unknown rules", files(map[string]string{"templates.json": `{"templates": [{"name": "x", "rules": "y", "map": "maps/home.tmj"}]}`}),
			ErrInvalid, `content: templates.json: "x": rules "y": no such rule set (known: arena, home, offline, village)`},
		{"kind's template with other rules", files(map[string]string{"templates.json": `{"templates": [{"name": "home", "rules": "arena", "map": "maps/home.tmj"}]}`}),
			ErrInvalid, `content: templates.json: "home": the default template of area kind "home" must use rules "home", not "arena"`},
		{"template of a missing map", files(map[string]string{"templates.json": `{"templates": [{"name": "x", "rules": "home", "map": "maps/none.tmj"}]}`}),
			ErrInvalid, `content: maps/none.tmj: no such file`},
		{"template map outside", files(map[string]string{"templates.json": `{"templates": [{"name": "x", "rules": "home", "map": "../none.tmj"}]}`}),
			ErrInvalid, `content: templates.json: "x": map "../none.tmj": not a path in the content folder`},
		{"template twice", files(map[string]string{"templates.json": `{"templates": [{"name": "x", "rules": "home", "map": "maps/home.tmj"}, {"name": "x", "rules": "home", "map": "maps/home.tmj"}]}`}),
			ErrInvalid, `content: templates.json: "x": listed twice`},
		{"template field unknown", files(map[string]string{"templates.json": `{"templates": [{"name": "x", "rule": "home", "map": "maps/home.tmj"}]}`}),
			ErrInvalid, `content: templates.json: bad JSON: json: unknown field "rule"`},
		{"creature hunting an unknown kind", files(map[string]string{"creatures.json": `{"creatures": [{"name": "wolf", "hp": 1, "step_ticks": 1, "sense_radius": 1, "hunts": ["elk"]}, {"name": "deer", "hp": 1, "step_ticks": 1, "sense_radius": 1}, {"name": "slime", "hp": 1, "step_ticks": 1, "sense_radius": 1}]}`}),
			ErrInvalid, `content: creatures.json: "wolf": hunts "elk": no such creature kind (known: deer, slime, wolf)`},
		{"creature without hp", files(map[string]string{"creatures.json": `{"creatures": [{"name": "wolf", "step_ticks": 1, "sense_radius": 1}]}`}),
			ErrInvalid, `content: creatures.json: "wolf": missing "hp"`},
		{"creature attacking without a period", files(map[string]string{"creatures.json": `{"creatures": [{"name": "wolf", "hp": 1, "step_ticks": 1, "sense_radius": 1, "attack_damage": 3}]}`}),
			ErrInvalid, `"wolf": "attack_ticks" is 0 (1..65535, required when attack_damage is above 0)`},
		{"creature too slow", files(map[string]string{"creatures.json": `{"creatures": [{"name": "wolf", "hp": 1, "step_ticks": 256, "sense_radius": 1}]}`}),
			ErrInvalid, `"wolf": "step_ticks" is 256 (1..255)`},
		{"rules without max players", files(map[string]string{"rules.json": `{"rules": [{"name": "home", "steps_per_second": 5}]}`}),
			ErrInvalid, `content: rules.json: "home": missing "max_players"`},
		{"rules too fast", files(map[string]string{"rules.json": `{"rules": [{"name": "home", "max_players": 1, "steps_per_second": 21}]}`}),
			ErrInvalid, `content: rules.json: "home": "steps_per_second" is 21 (1..20)`},
		{"rules named badly", files(map[string]string{"rules.json": `{"rules": [{"name": "Home", "max_players": 1, "steps_per_second": 1}]}`}),
			ErrInvalid, `content: rules.json: "Home": rule set "Home": a name is lower-case letters`},
		{"rules file missing", files(map[string]string{"rules.json": ""}),
			ErrInvalid, `content: rules.json: no such file`},
		{"rules file trailing data", files(map[string]string{"rules.json": `{"rules": []} {}`}),
			ErrInvalid, `content: rules.json: bad JSON: data after the top-level object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(editedFS(t, tc.files(t)))
			checkErr(t, err, tc.kind, "content: ", tc.want)
		})
	}
}

func TestLookups(t *testing.T) {
	lib := Default()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"template", func() error { _, err := lib.Template("nope"); return err },
			`content: unknown template "nope" (known: arena, home, offline, village)`},
		{"rules", func() error { _, err := lib.Rules("nope"); return err },
			`content: unknown rule set "nope" (known: arena, home, offline, village)`},
		{"creature", func() error { _, err := lib.Creature("nope"); return err },
			`content: unknown creature kind "nope" (known: deer, slime, wolf)`},
		{"kind", func() error { _, err := lib.Kind("forest"); return err },
			`content: unknown area kind "forest" (known: arena, home, offline, village)`},
		{"kind, not a creature", func() error { _, err := lib.Kind("wolf"); return err },
			`content: unknown area kind "wolf"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !errors.Is(err, ErrNotFound) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v; want %q, wrapping ErrNotFound", err, tc.want)
			}
		})
	}
	if _, err := lib.Template("village"); err != nil {
		t.Error(err)
	}
	if _, err := lib.Rules("arena"); err != nil {
		t.Error(err)
	}
	if got := len(lib.RuleSets()); got != 4 {
		t.Errorf("RuleSets() has %d; want 4", got)
	}
	if got := len(lib.Creatures()); got != 3 {
		t.Errorf("Creatures() has %d; want 3", got)
	}
}
