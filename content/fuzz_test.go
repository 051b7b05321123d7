package content

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// FuzzLoadMap feeds arbitrary bytes to LoadMap as a .tmj beside the
// shipped tileset. It must never panic, must answer every input with a
// Map or an *Error, and a Map it returns must hold together.
func FuzzLoadMap(f *testing.F) {
	for _, p := range []string{"maps/home.tmj", "maps/village.tmj", "maps/arena.tmj"} {
		b, err := fs.ReadFile(Embedded(), p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	small, err := os.ReadFile("testdata/small.tmj")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	f.Add([]byte(`{"orientation":"orthogonal","width":2,"height":1,"tilewidth":8,"tileheight":8,` +
		`"tilesets":[{"firstgid":1,"source":"ley.tsj"}],"layers":[` +
		`{"name":"floor","type":"tilelayer","width":2,"height":1,"encoding":"base64","compression":"zlib","data":"eJxiZGBgAGFAAAAA//8AFAAD"},` +
		`{"name":"spawns","type":"objectgroup","objects":[{"id":1,"type":"spawn","point":true,"x":1,"y":1}]}]}`))
	tsj, err := fs.ReadFile(Embedded(), "maps/ley.tsj")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"maps/f.tmj": {Data: data}, "maps/ley.tsj": {Data: tsj}}
		m, err := LoadMap(fsys, "maps/f.tmj")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if m.W < 1 || m.H < 1 || m.W > MaxSide || m.H > MaxSide || len(m.Floor) != m.W*m.H || len(m.Wall) != m.W*m.H {
			t.Fatalf("map %dx%d with %d floor and %d wall squares", m.W, m.H, len(m.Floor), len(m.Wall))
		}
		if len(m.Spawns) == 0 {
			t.Fatal("a map without spawns loaded")
		}
		for _, s := range m.Spawns {
			if !m.Walkable(int(s.X), int(s.Y)) {
				t.Fatalf("spawn %v is not walkable", s)
			}
		}
		for _, p := range m.Portals {
			if !m.Walkable(int(p.X), int(p.Y)) {
				t.Fatalf("portal %+v is not walkable", p)
			}
		}
		if len(m.Objects) > MaxObjects {
			t.Fatalf("%d objects", len(m.Objects))
		}
	})
}
