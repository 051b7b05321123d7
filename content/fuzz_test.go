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

// FuzzItems feeds arbitrary bytes to the loader as items.json and checks
// the result as a whole. It must never panic, must answer every input
// with a Library or an *Error, and the item kinds and sources of a
// Library it returns must keep every bound.
func FuzzItems(f *testing.F) {
	shipped, err := fs.ReadFile(Embedded(), ItemsFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(shipped)
	f.Add([]byte(`{"items": [{"name": "a", "code": 65535, "label": "A", "stack": 999,
		"placed": {"slot": "occupant", "door": true, "look": 0}, "yields": [{"item": "a", "count": 999}]}],
		"sources": [{"class": "chest", "yields": [{"item": "a", "count": 1}], "cooldown_ticks": 65535}]}`))
	f.Add([]byte(`{"items": [{"name": "a", "code": 1, "label": "A", "stack": 1}, {"name": "b", "code": 1, "label": "B", "stack": 1}]}`))
	id := func(p string) string { return p }
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{ItemsFile: {Data: data}}
		ix, err := readIndex(fsys, false, id)
		var lib *Library
		if err == nil {
			lib, err = build(ix, fsys, id)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		items := lib.Items()
		if len(items) > maxEntries {
			t.Fatalf("%d kinds", len(items))
		}
		checkYields := func(what string, ys []Yield) {
			if len(ys) < 1 || len(ys) > MaxYields {
				t.Fatalf("%s yields %d entries", what, len(ys))
			}
			for _, y := range ys {
				if _, ok := lib.Item(y.Item); !ok || y.Count < 1 || y.Count > MaxYieldCount {
					t.Fatalf("%s yields %+v", what, y)
				}
			}
		}
		for i, it := range items {
			if i > 0 && items[i-1].Code >= it.Code {
				t.Fatalf("Items() not sorted by code, one per code: %d then %d", items[i-1].Code, it.Code)
			}
			if by, ok := lib.ItemByCode(it.Code); !ok || by.Name != it.Name {
				t.Fatalf("ItemByCode(%d) = %q, %v; want %q", it.Code, by.Name, ok, it.Name)
			}
			p := it.Placed
			switch {
			case it.Code == 0 || it.Stack < 1 || it.Stack > MaxStack || it.Label == "" || len(it.Label) > MaxLabel:
				t.Fatalf("kind %+v", it)
			case p.Slot > SlotOccupant || p.Container < 0 || p.Container > MaxContainer:
				t.Fatalf("kind %q placed %+v", it.Name, p)
			case p.Slot == SlotFloor && (p.Blocks || p.BlocksSight || p.Door || p.Container != 0):
				t.Fatalf("floor tile %q placed %+v", it.Name, p)
			case p.Door && (!p.Blocks || !p.BlocksSight || p.Container != 0):
				t.Fatalf("door %q placed %+v", it.Name, p)
			case p.Slot == SlotNone && (p != Placement{} || it.Yields != nil):
				t.Fatalf("kind %q that cannot be placed: %+v", it.Name, it)
			}
			if it.Placeable() {
				checkYields(it.Name, it.Yields)
			}
		}
		for _, c := range ObjectClasses() {
			if s, ok := lib.Source(c); ok {
				if s.Class != c || s.CooldownTicks == 0 {
					t.Fatalf("Source(%s) = %+v", c, s)
				}
				checkYields(c.String(), s.Yields)
			}
		}
		for _, c := range []ObjectClass{ClassNone, ClassPortal} {
			if _, ok := lib.Source(c); ok {
				t.Fatalf("a source of %s", c)
			}
		}
	})
}
