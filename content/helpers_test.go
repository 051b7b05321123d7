package content

import (
	"encoding/json"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// jmap is a decoded JSON object, for editing test maps.
type jmap = map[string]any

// smallMap returns testdata/small.tmj decoded: a 10x8 map with every
// layer, an embedded tileset, a door, a sign, a tree, a portal, a spawn
// rectangle and a spawner.
func smallMap(t testing.TB) jmap {
	t.Helper()
	b, err := os.ReadFile("testdata/small.tmj")
	if err != nil {
		t.Fatal(err)
	}
	var m jmap
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// layerOf returns the layer called name.
func layerOf(t testing.TB, m jmap, name string) jmap {
	t.Helper()
	for _, l := range m["layers"].([]any) {
		if l.(jmap)["name"] == name {
			return l.(jmap)
		}
	}
	t.Fatalf("no layer %q", name)
	return nil
}

// objectOf returns the object with the given id, in any layer.
func objectOf(t testing.TB, m jmap, id int) jmap {
	t.Helper()
	for _, l := range m["layers"].([]any) {
		objs, _ := l.(jmap)["objects"].([]any)
		for _, o := range objs {
			if o.(jmap)["id"] == float64(id) {
				return o.(jmap)
			}
		}
	}
	t.Fatalf("no object %d", id)
	return nil
}

// setProp sets (or adds) a custom property of a Tiled object.
func setProp(o jmap, name, typ string, value any) {
	props, _ := o["properties"].([]any)
	for _, p := range props {
		if p.(jmap)["name"] == name {
			p.(jmap)["type"], p.(jmap)["value"] = typ, value
			return
		}
	}
	o["properties"] = append(props, jmap{"name": name, "type": typ, "value": value})
}

// delProp removes a custom property of a Tiled object.
func delProp(o jmap, name string) {
	props, _ := o["properties"].([]any)
	kept := []any{}
	for _, p := range props {
		if p.(jmap)["name"] != name {
			kept = append(kept, p)
		}
	}
	o["properties"] = kept
}

// floorData returns the floor layer's cells as a slice to edit.
func floorData(t testing.TB, m jmap, layer string) []any {
	t.Helper()
	return layerOf(t, m, layer)["data"].([]any)
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mapFS returns a folder holding the map as maps/small.tmj and the
// shipped tileset as maps/ley.tsj.
func mapFS(t testing.TB, m jmap) fstest.MapFS {
	t.Helper()
	tsj, err := fs.ReadFile(Embedded(), "maps/ley.tsj")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{
		"maps/small.tmj": {Data: encode(t, m)},
		"maps/ley.tsj":   {Data: tsj},
	}
}

// fsReadT reads a file of the embedded content.
func fsReadT(t testing.TB, p string) ([]byte, error) {
	t.Helper()
	return fs.ReadFile(Embedded(), p)
}

func decodeT(t testing.TB, b []byte) jmap {
	t.Helper()
	var m jmap
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// shippedFS returns the embedded content with m added as maps/small.tmj.
func shippedFS(t testing.TB, m jmap) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{"maps/small.tmj": {Data: encode(t, m)}}
	err := fs.WalkDir(Embedded(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Embedded(), p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// useShippedTileset switches small.tmj from its embedded tileset to the
// shipped external one, maps/ley.tsj, renumbering its tiles.
func useShippedTileset(t testing.TB, m jmap) {
	t.Helper()
	m["tilesets"] = []any{jmap{"firstgid": 1, "source": "ley.tsj"}}
	remap := map[float64]float64{1: 1, 3: 6, 4: 7} // grass, water, wall
	for _, c := range []string{"floor", "walls"} {
		d := floorData(t, m, c)
		for i, v := range d {
			if v != 0.0 {
				d[i] = remap[v.(float64)]
			}
		}
	}
	objectOf(t, m, 1)["gid"] = 8  // door
	objectOf(t, m, 3)["gid"] = 10 // tree
}
