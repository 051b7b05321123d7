package content

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestLoadSmallMap(t *testing.T) {
	m, err := LoadMap(mapFS(t, smallMap(t)), "maps/small.tmj")
	if err != nil {
		t.Fatal(err)
	}
	if m.W != 10 || m.H != 8 || m.Path != "maps/small.tmj" {
		t.Fatalf("got %s %dx%d; want maps/small.tmj 10x8", m.Path, m.W, m.H)
	}
	wantObjects := []Object{
		{ID: 1, Name: "north door", X: 5, Y: 3, Class: ClassDoor},
		{ID: 2, Name: "welcome", X: 2, Y: 1, Class: ClassSign, Text: "Hello"},
		{ID: 3, X: 7, Y: 1, Class: ClassTree}, // class from its tile
	}
	if !reflect.DeepEqual(m.Objects, wantObjects) {
		t.Errorf("objects = %+v; want %+v", m.Objects, wantObjects)
	}
	if want := []Point{{1, 5}, {2, 5}}; !reflect.DeepEqual(m.Spawns, want) {
		t.Errorf("spawns = %v; want %v", m.Spawns, want)
	}
	wantSpawner := Spawner{ID: 6, Name: "wolves", X: 6, Y: 1, W: 3, H: 3, Creature: "wolf", Count: 2, Respawn: 5500 * time.Millisecond, Leash: DefaultLeash}
	if len(m.Spawners) != 1 || m.Spawners[0] != wantSpawner {
		t.Errorf("spawners = %+v; want [%+v]", m.Spawners, wantSpawner)
	}
	wantPortal := Portal{ID: 4, Name: "gate", X: 8, Y: 2, Target: "elsewhere", ToX: 1, ToY: 1, HasTo: true}
	if len(m.Portals) != 1 || m.Portals[0] != wantPortal {
		t.Errorf("portals = %+v; want [%+v]", m.Portals, wantPortal)
	}
	for _, c := range []struct {
		x, y               int
		floor              FloorKind
		wall, walk, opaque bool
	}{
		{0, 0, FloorGrass, false, true, false},
		{5, 0, FloorGrass, true, false, true},   // wall
		{5, 3, FloorGrass, false, false, true},  // closed door
		{2, 1, FloorGrass, false, false, false}, // sign
		{7, 1, FloorGrass, false, false, true},  // tree
		{8, 6, FloorWater, false, false, false},
		{8, 2, FloorGrass, false, true, false}, // portal
		{-1, 0, FloorVoid, false, false, true},
		{10, 0, FloorVoid, false, false, true},
	} {
		if got := m.FloorAt(c.x, c.y); got != c.floor {
			t.Errorf("FloorAt(%d, %d) = %v; want %v", c.x, c.y, got, c.floor)
		}
		if got := m.WallAt(c.x, c.y); got != c.wall {
			t.Errorf("WallAt(%d, %d) = %v; want %v", c.x, c.y, got, c.wall)
		}
		if got := m.Walkable(c.x, c.y); got != c.walk {
			t.Errorf("Walkable(%d, %d) = %v; want %v", c.x, c.y, got, c.walk)
		}
		if got := m.Opaque(c.x, c.y); got != c.opaque {
			t.Errorf("Opaque(%d, %d) = %v; want %v", c.x, c.y, got, c.opaque)
		}
	}
	if p, ok := m.PortalAt(8, 2); !ok || p.Target != "elsewhere" {
		t.Errorf("PortalAt(8, 2) = %+v, %v; want the gate", p, ok)
	}
}

// TestLoadMapVariants loads Tiled output that differs from small.tmj only
// in ways ley must read the same.
func TestLoadMapVariants(t *testing.T) {
	base, err := LoadMap(mapFS(t, smallMap(t)), "maps/small.tmj")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, m jmap)
	}{
		{"Tiled 1.9 class", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 2)
			delete(o, "type")
			o["class"] = "sign"
			ts := m["tilesets"].([]any)[0].(jmap)
			for _, tile := range ts["tiles"].([]any) {
				tile.(jmap)["class"] = tile.(jmap)["type"]
				delete(tile.(jmap), "type")
			}
		}},
		{"type and class agree", func(t *testing.T, m jmap) { objectOf(t, m, 2)["class"] = "sign" }},
		{"flip flags", func(t *testing.T, m jmap) {
			d := floorData(t, m, "floor")
			d[0] = float64(1 | 0x80000000)
			d[1] = float64(1 | 0x40000000 | 0x20000000)
			w := floorData(t, m, "walls")
			w[5] = float64(4 | 0x10000000)
		}},
		{"property type omitted for a string", func(t *testing.T, m jmap) {
			for _, p := range objectOf(t, m, 2)["properties"].([]any) {
				delete(p.(jmap), "type")
			}
		}},
		{"int for a float", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "respawn", "int", 5.5) }},
		{"hidden layer", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["visible"] = false }},
		{"unknown Tiled fields", func(t *testing.T, m jmap) {
			m["editorsettings"] = jmap{"export": jmap{"format": "json"}}
			layerOf(t, m, "floor")["tintcolor"] = "#ff0000"
			layerOf(t, m, "floor")["parallaxx"] = 0.5
		}},
		{"layers reordered", func(t *testing.T, m jmap) {
			ls := m["layers"].([]any)
			for i, j := 0, len(ls)-1; i < j; i, j = i+1, j-1 {
				ls[i], ls[j] = ls[j], ls[i]
			}
		}},
		{"external tileset", func(t *testing.T, m jmap) { useShippedTileset(t, m) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMap(t)
			tc.edit(t, m)
			got, err := LoadMap(mapFS(t, m), "maps/small.tmj")
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "int for a float" {
				// 5.5 written under "int" is not an int, but a float
				// property takes either; the value is what it says.
				if got.Spawners[0].Respawn != base.Spawners[0].Respawn {
					t.Fatalf("respawn = %v; want %v", got.Spawners[0].Respawn, base.Spawners[0].Respawn)
				}
			}
			if !reflect.DeepEqual(got, base) {
				t.Errorf("got %+v; want %+v", got, base)
			}
		})
	}
}

// TestLoadMapErrors loads broken maps: each error must say what is wrong,
// of which kind, and where.
func TestLoadMapErrors(t *testing.T) {
	const file = "content: maps/small.tmj: "
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, m jmap)
		kind error
		want []string // substrings of the message, in order
	}{
		{"unknown layer", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["name"] = "wall" },
			ErrInvalid, []string{`layer "wall": unknown layer (want floor, walls, objects, portals, spawns, spawners, plots)`}},
		{"layer name case", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["name"] = "Walls" },
			ErrInvalid, []string{`layer "Walls": unknown layer`}},
		{"duplicate layer", func(t *testing.T, m jmap) { layerOf(t, m, "portals")["name"] = "objects" },
			ErrInvalid, []string{`layer "objects": two layers have this name`}},
		{"wrong layer type", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["type"] = "objectgroup" },
			ErrInvalid, []string{`layer "walls": an object layer, want a tile layer`}},
		{"group layer", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["type"] = "group" },
			ErrUnsupported, []string{`layer "walls": group layer`}},
		{"missing floor", func(t *testing.T, m jmap) {
			ls := m["layers"].([]any)
			m["layers"] = ls[1:]
		}, ErrInvalid, []string{`layer "floor": missing`}},
		{"no spawns", func(t *testing.T, m jmap) { layerOf(t, m, "spawns")["objects"] = []any{} },
			ErrInvalid, []string{`layer "spawns": no spawn points`}},
		{"layer property", func(t *testing.T, m jmap) { setProp(layerOf(t, m, "objects"), "colour", "string", "red") },
			ErrInvalid, []string{`layer "objects": unknown property "colour"`}},
		{"map property", func(t *testing.T, m jmap) { setProp(m, "music", "string", "x.ogg") },
			ErrInvalid, []string{`map: unknown property "music"`}},
		{"unknown class", func(t *testing.T, m jmap) { objectOf(t, m, 2)["type"] = "signpost" },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": unknown class "signpost" (want one of door, tree, sign, rock, chest)`}},
		{"no class", func(t *testing.T, m jmap) { objectOf(t, m, 2)["type"] = "" },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": no class`}},
		{"type and class disagree", func(t *testing.T, m jmap) { objectOf(t, m, 2)["class"] = "rock" },
			ErrInvalid, []string{`object 2 "welcome": type "sign" and class "rock" disagree`}},
		{"portal class in objects", func(t *testing.T, m jmap) { objectOf(t, m, 2)["type"] = "portal" },
			ErrInvalid, []string{`object 2 "welcome": unknown class "portal"`}},
		{"spawn of the wrong class", func(t *testing.T, m jmap) { objectOf(t, m, 5)["type"] = "spawnpoint" },
			ErrInvalid, []string{`layer "spawns": object 5: unknown class "spawnpoint" (want "spawn")`}},
		{"unknown property", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 1), "colour", "string", "red") },
			ErrInvalid, []string{`layer "objects": object 1 "north door": unknown property "colour" (known: open)`}},
		{"property on a tree", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 3), "open", "bool", true) },
			ErrInvalid, []string{`layer "objects": object 3: unknown property "open" (no properties are allowed here)`}},
		{"property twice", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 1)
			o["properties"] = append(o["properties"].([]any), jmap{"name": "open", "type": "bool", "value": true})
		}, ErrInvalid, []string{`object 1 "north door": property "open" given twice`}},
		{"wrong property type", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 1), "open", "string", "yes") },
			ErrInvalid, []string{`object 1 "north door": property "open" is a string, want bool`}},
		{"value not of its type", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "count", "int", 2.5) },
			ErrInvalid, []string{`layer "spawners": object 6 "wolves": property "count": value 2.5 is not an int`}},
		{"string for an int", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "count", "int", "2") },
			ErrInvalid, []string{`object 6 "wolves": property "count": value "2" is not an int`}},
		{"missing required property", func(t *testing.T, m jmap) { delProp(objectOf(t, m, 2), "text") },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": missing property "text" (string, required)`}},
		{"empty sign", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 2), "text", "string", "") },
			ErrInvalid, []string{`object 2 "welcome": property "text" is empty`}},
		{"sign text too long", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 2), "text", "string", strings.Repeat("a", 201)) },
			ErrTooLarge, []string{`object 2 "welcome": property "text" is 201 bytes (at most 200)`}},
		{"missing creature", func(t *testing.T, m jmap) { delProp(objectOf(t, m, 6), "creature") },
			ErrInvalid, []string{`layer "spawners": object 6 "wolves": missing property "creature"`}},
		{"missing count", func(t *testing.T, m jmap) { delProp(objectOf(t, m, 6), "count") },
			ErrInvalid, []string{`object 6 "wolves": missing property "count" (int, required)`}},
		{"count 0", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "count", "int", 0) },
			ErrInvalid, []string{`object 6 "wolves": property "count" is 0 (1..1000)`}},
		{"negative respawn", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "respawn", "float", -1) },
			ErrInvalid, []string{`object 6 "wolves": property "respawn" is -1 seconds`}},
		{"leash 0", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "leash", "int", 0) },
			ErrInvalid, []string{`object 6 "wolves": property "leash" is 0 squares`}},
		{"bad creature name", func(t *testing.T, m jmap) { setProp(objectOf(t, m, 6), "creature", "string", "Big Wolf") },
			ErrInvalid, []string{`object 6 "wolves": creature "Big Wolf": a name is lower-case`}},
		{"missing target", func(t *testing.T, m jmap) { delProp(objectOf(t, m, 4), "target") },
			ErrInvalid, []string{`layer "portals": object 4 "gate": missing property "target"`}},
		{"to_x without to_y", func(t *testing.T, m jmap) { delProp(objectOf(t, m, 4), "to_y") },
			ErrInvalid, []string{`object 4 "gate": give both "to_x" and "to_y", or neither`}},
		{"object outside the map", func(t *testing.T, m jmap) { objectOf(t, m, 2)["x"] = 400 },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": outside the map (at 400,24 px`, "the map is 10x8 squares"}},
		{"negative position", func(t *testing.T, m jmap) { objectOf(t, m, 5)["y"] = -16 },
			ErrInvalid, []string{`layer "spawns": object 5: outside the map`}},
		{"rectangle past the edge", func(t *testing.T, m jmap) { objectOf(t, m, 6)["width"] = 100 },
			ErrInvalid, []string{`layer "spawners": object 6 "wolves": outside the map`}},
		{"spawn on a wall", func(t *testing.T, m jmap) { objectOf(t, m, 5)["x"] = 80 },
			ErrInvalid, []string{`layer "spawns": object 5: square (5, 5) is a wall`}},
		{"spawn on water", func(t *testing.T, m jmap) { objectOf(t, m, 5)["x"], objectOf(t, m, 5)["y"] = 128, 96 },
			ErrInvalid, []string{`layer "spawns": object 5: square (8, 6) is water (not walkable)`}},
		{"spawn on a blocking object", func(t *testing.T, m jmap) { objectOf(t, m, 5)["x"], objectOf(t, m, 5)["y"] = 32, 16 },
			ErrInvalid, []string{`layer "spawns": object 5: square (2, 1) holds object 2 "welcome" (a sign)`}},
		{"spawn on a portal", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 5)
			o["x"], o["y"], o["width"] = 128, 32, 16
		}, ErrInvalid, []string{`layer "spawns": object 5: square (8, 2) holds portal 4 "gate"`}},
		{"spawn twice", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "spawns")
			l["objects"] = append(l["objects"].([]any), jmap{"id": 9, "type": "spawn", "point": true, "x": 20, "y": 84})
			m["nextobjectid"] = 10
		}, ErrInvalid, []string{`layer "spawns": object 9: square (1, 5) is a spawn point twice`}},
		{"portal on a wall", func(t *testing.T, m jmap) { objectOf(t, m, 4)["x"] = 88 },
			ErrInvalid, []string{`layer "portals": object 4 "gate": square (5, 2) is a wall`}},
		{"portal on an object", func(t *testing.T, m jmap) { objectOf(t, m, 4)["x"], objectOf(t, m, 4)["y"] = 120, 24 },
			ErrInvalid, []string{`layer "portals": object 4 "gate": square (7, 1) holds object 3 (a tree)`}},
		{"object on a wall", func(t *testing.T, m jmap) { objectOf(t, m, 2)["x"] = 88 },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": square (5, 1) is a wall`}},
		{"two objects on a square", func(t *testing.T, m jmap) { objectOf(t, m, 3)["x"], objectOf(t, m, 3)["y"] = 32, 32 },
			ErrInvalid, []string{`layer "objects": object 3: square (2, 1) holds object 2 "welcome" (a sign)`}},
		{"object on void", func(t *testing.T, m jmap) { floorData(t, m, "floor")[12] = 0 },
			ErrInvalid, []string{`layer "objects": object 2 "welcome": square (2, 1) has no floor`}},
		{"spawner without room", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 6)
			o["x"], o["y"], o["width"], o["height"] = 128, 96, 32, 32
		}, ErrInvalid, []string{`layer "spawners": object 6 "wolves": no free square in its area 2x2 at (8, 6)`}},
		{"plot without ground", func(t *testing.T, m jmap) {
			m["layers"] = append(m["layers"].([]any), jmap{"name": "plots", "type": "objectgroup",
				"objects": []any{jmap{"id": 40, "name": "yard", "type": "plot", "x": 80, "y": 32, "width": 16, "height": 16}}})
		}, ErrInvalid, []string{`layer "plots": object 40 "yard": no ground in its area 1x1 at (5, 2)`}},
		{"plot of another class", func(t *testing.T, m jmap) {
			m["layers"] = append(m["layers"].([]any), jmap{"name": "plots", "type": "objectgroup",
				"objects": []any{jmap{"id": 40, "type": "spawn", "x": 16, "y": 16, "width": 32, "height": 32}}})
		}, ErrInvalid, []string{`layer "plots": object 40: unknown class "spawn" (want "plot")`}},
		{"door over two squares", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 2)
			delete(o, "point")
			o["width"], o["height"], o["x"], o["y"] = 32, 16, 32, 16
		}, ErrInvalid, []string{`layer "objects": object 2 "welcome": covers 2x1 squares from (2, 1); a sign stands on one square`}},
		{"rectangle covering no centre", func(t *testing.T, m jmap) {
			o := objectOf(t, m, 5)
			o["width"], o["height"] = 4, 4
		}, ErrInvalid, []string{`layer "spawns": object 5: rectangle 4x4 px at 16,80 covers no square's centre`}},
		{"ellipse", func(t *testing.T, m jmap) { objectOf(t, m, 5)["ellipse"] = true },
			ErrUnsupported, []string{`layer "spawns": object 5: ellipse`}},
		{"polygon", func(t *testing.T, m jmap) { objectOf(t, m, 5)["polygon"] = []any{jmap{"x": 0, "y": 0}} },
			ErrUnsupported, []string{`object 5: polygon`}},
		{"rotated", func(t *testing.T, m jmap) { objectOf(t, m, 1)["rotation"] = 90 },
			ErrUnsupported, []string{`object 1 "north door": rotation 90`}},
		{"object template", func(t *testing.T, m jmap) { objectOf(t, m, 3)["template"] = "tree.tx" },
			ErrUnsupported, []string{`object 3: object templates ("tree.tx")`}},
		{"duplicate object id", func(t *testing.T, m jmap) { objectOf(t, m, 5)["id"] = 4 },
			ErrInvalid, []string{`layer "spawns": object 4: id used twice`}},
		{"infinite map", func(t *testing.T, m jmap) { m["infinite"] = true },
			ErrUnsupported, []string{"infinite map: ley reads finite maps only"}},
		{"isometric map", func(t *testing.T, m jmap) { m["orientation"] = "isometric" },
			ErrUnsupported, []string{`orientation "isometric": ley reads orthogonal maps only`}},
		{"not a map", func(t *testing.T, m jmap) { m["type"] = "tileset" },
			ErrInvalid, []string{`type "tileset", want "map"`}},
		{"layer of another size", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["width"] = 9 },
			ErrInvalid, []string{`layer "walls": size 9x8, want the map's 10x8`}},
		{"layer offset", func(t *testing.T, m jmap) { layerOf(t, m, "objects")["offsetx"] = 8 },
			ErrUnsupported, []string{`layer "objects": layer offset (8, 0) px`}},
		{"too few cells", func(t *testing.T, m jmap) { l := layerOf(t, m, "floor"); l["data"] = l["data"].([]any)[:79] },
			ErrInvalid, []string{`layer "floor": data holds 79 cells, want 80`}},
		{"too many cells", func(t *testing.T, m jmap) { l := layerOf(t, m, "floor"); l["data"] = append(l["data"].([]any), 1.0) },
			ErrInvalid, []string{`layer "floor": data holds more than 80 cells`}},
		{"negative cell", func(t *testing.T, m jmap) { floorData(t, m, "floor")[3] = -1 },
			ErrInvalid, []string{`layer "floor": data cell 3: not a whole number`}},
		{"bad base64", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "floor")
			l["encoding"], l["data"] = "base64", "!!!not base64!!!"
		}, ErrInvalid, []string{`layer "floor": bad base64 data`}},
		{"unknown compression", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "walls")
			l["encoding"], l["compression"], l["data"] = "base64", "lz4", "AAAA"
		}, ErrInvalid, []string{`layer "walls": unknown compression "lz4" (want "zlib", "gzip" or none)`}},
		{"zstd", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "walls")
			l["encoding"], l["compression"], l["data"] = "base64", "zstd", "AAAA"
		}, ErrUnsupported, []string{`layer "walls": compression "zstd"`}},
		{"broken zlib", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "walls")
			l["encoding"], l["compression"], l["data"] = "base64", "zlib", "AAAAAAAA"
		}, ErrInvalid, []string{`layer "walls": bad zlib data`}},
		{"unknown encoding", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["encoding"] = "xml" },
			ErrInvalid, []string{`layer "walls": unknown encoding "xml"`}},
		{"chunks", func(t *testing.T, m jmap) { layerOf(t, m, "walls")["chunks"] = []any{jmap{"x": 0}} },
			ErrUnsupported, []string{`layer "walls": chunks`}},
		{"gid not in any tileset", func(t *testing.T, m jmap) { floorData(t, m, "floor")[13] = 99 },
			ErrInvalid, []string{`layer "floor": square (3, 1): gid 99 is in no tileset`}},
		{"wall gid not in any tileset", func(t *testing.T, m jmap) { floorData(t, m, "walls")[0] = 9 },
			ErrInvalid, []string{`layer "walls": square (0, 0): gid 9 is in no tileset`}},
		{"tile object gid not in any tileset", func(t *testing.T, m jmap) { objectOf(t, m, 3)["gid"] = 50 },
			ErrInvalid, []string{`layer "objects": object 3: gid 50 is in no tileset`}},
		{"unknown floor class", func(t *testing.T, m jmap) {
			tiles := m["tilesets"].([]any)[0].(jmap)["tiles"].([]any)
			tiles[0].(jmap)["type"] = "lava"
		}, ErrInvalid, []string{`layer "floor": square (0, 0): tileset "small" (maps/small.tmj) tile 0: unknown floor class "lava" (want one of grass, dirt, stone, sand, wood, water)`}},
		{"wall tile on the floor", func(t *testing.T, m jmap) { floorData(t, m, "floor")[20] = 4 },
			ErrInvalid, []string{`layer "floor": square (0, 2): tileset "small" (maps/small.tmj) tile 3: unknown floor class "wall"`}},
		{"floor tile without class", func(t *testing.T, m jmap) { floorData(t, m, "floor")[20] = 8 },
			ErrInvalid, []string{`layer "floor": square (0, 2): tileset "small" (maps/small.tmj) tile 7 has no class`}},
		{"missing external tileset", func(t *testing.T, m jmap) { m["tilesets"] = []any{jmap{"firstgid": 1, "source": "nowhere.tsj"}} },
			ErrInvalid, []string{`tileset 0: source "nowhere.tsj" (maps/nowhere.tsj): no such file`}},
		{"tileset outside the folder", func(t *testing.T, m jmap) { m["tilesets"] = []any{jmap{"firstgid": 1, "source": "../../x.tsj"}} },
			ErrInvalid, []string{`source "../../x.tsj" leaves the content folder`}},
		{"overlapping tilesets", func(t *testing.T, m jmap) {
			m["tilesets"] = append(m["tilesets"].([]any), jmap{"firstgid": 5, "source": "ley.tsj"})
		}, ErrInvalid, []string{`overlap (firstgid 1 and 5)`}},
		{"tile property", func(t *testing.T, m jmap) {
			tiles := m["tilesets"].([]any)[0].(jmap)["tiles"].([]any)
			setProp(tiles[1].(jmap), "speed", "float", 0.5)
		}, ErrInvalid, []string{`tileset "small": tile 1: unknown property "speed"`}},
		{"too wide", func(t *testing.T, m jmap) { m["width"] = 2000 },
			ErrTooLarge, []string{"map is 2000x8 squares (at most 1024x1024)"}},
		{"too tall", func(t *testing.T, m jmap) { m["height"] = 1025 },
			ErrTooLarge, []string{"map is 10x1025 squares (at most 1024x1024)"}},
		{"no size", func(t *testing.T, m jmap) { m["width"] = 0 },
			ErrInvalid, []string{"size 0x8 squares"}},
		{"zero tile size", func(t *testing.T, m jmap) { m["tilewidth"] = 0 },
			ErrInvalid, []string{"tile size 0x16 px"}},
		{"too many objects", func(t *testing.T, m jmap) {
			l := layerOf(t, m, "spawns")
			objs := make([]any, MaxObjects+1)
			for i := range objs {
				objs[i] = jmap{"id": 100 + i}
			}
			l["objects"] = objs
		}, ErrTooLarge, []string{"65542 objects (at most 65536)"}},
		{"bad JSON", func(t *testing.T, m jmap) { m["width"] = "ten" },
			ErrInvalid, []string{"not a Tiled JSON map (.tmj)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMap(t)
			tc.edit(t, m)
			_, err := LoadMap(mapFS(t, m), "maps/small.tmj")
			checkErr(t, err, tc.kind, file, tc.want...)
		})
	}
}

// checkErr checks that err is an *Error of the given kind whose message
// starts with prefix and holds each of want.
func checkErr(t *testing.T, err, kind error, prefix string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one with %q", want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("error %T %v is not an *Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q is not %v", err, kind)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q does not start with %q", msg, prefix)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

func TestLoadMapFileTooLarge(t *testing.T) {
	fsys := fstest.MapFS{"maps/big.tmj": {Data: make([]byte, MaxFileSize+1)}}
	_, err := LoadMap(fsys, "maps/big.tmj")
	checkErr(t, err, ErrTooLarge, "content: maps/big.tmj: ", "file is 33554433 bytes (at most 33554432, 32 MiB)")
}

func TestLoadMapBadPath(t *testing.T) {
	_, err := LoadMap(fstest.MapFS{}, "../x.tmj")
	checkErr(t, err, ErrInvalid, "content: ../x.tmj: ", "not a valid path")
	_, err = LoadMap(fstest.MapFS{}, "maps/none.tmj")
	checkErr(t, err, ErrInvalid, "content: maps/none.tmj: ", "no such file")
}
