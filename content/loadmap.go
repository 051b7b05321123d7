package content

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
)

// maxTileSize bounds a map's tile width and height in pixels.
const maxTileSize = 4096

// The layers a map may have, in the order the loader reads them.
var layerNames = []string{"floor", "walls", "objects", "portals", "spawns", "spawners", "plots"}

// LoadMap reads the Tiled JSON map at path p of fsys (external tilesets
// are read relative to it from the same fsys) and checks it on its own:
// everything but the names it refers to (creature kinds, portal targets),
// which [Load] checks against the rest of the content.
//
// Every problem is an [*Error] naming the file, the layer and the object.
// LoadMap reads at most [MaxFileSize] bytes per file and allocates in
// proportion to what it reads and to the map's squares ([MaxSide]).
func LoadMap(fsys fs.FS, p string) (*Map, error) {
	if !fs.ValidPath(p) {
		return nil, &Error{Path: p, Err: invalidf("not a valid path in the content folder (slash-separated, relative, no ..)")}
	}
	b, err := readFile(fsys, p)
	if err != nil {
		return nil, err
	}
	var raw tmjMap
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, &Error{Path: p, Err: invalidf("not a Tiled JSON map (.tmj): %v", err)}
	}
	l := &mapLoader{fsys: fsys, path: p, raw: &raw}
	m, err := l.load()
	if err != nil {
		return nil, at(p, err)
	}
	return m, nil
}

// mapLoader turns one decoded Tiled map into a Map.
type mapLoader struct {
	fsys     fs.FS
	path     string
	raw      *tmjMap
	g        grid
	sets     []*tileset
	m        *Map
	portalAt []int32 // per square: index into m.Portals + 1, or 0
	spawnAt  []bool
}

func (l *mapLoader) load() (*Map, error) {
	r := l.raw
	if r.Type != "" && r.Type != "map" {
		return nil, invalidf("type %q, want \"map\"", r.Type)
	}
	if r.Orientation != "orthogonal" {
		return nil, unsupportedf("orientation %q: ley reads orthogonal maps only", r.Orientation)
	}
	if r.Infinite {
		return nil, unsupportedf("infinite map: ley reads finite maps only (untick \"Infinite\" in Tiled's map properties)")
	}
	if r.Width < 1 || r.Height < 1 {
		return nil, invalidf("size %dx%d squares (each side at least 1)", r.Width, r.Height)
	}
	if r.Width > MaxSide || r.Height > MaxSide {
		return nil, tooLargef("map is %dx%d squares (at most %dx%d)", r.Width, r.Height, MaxSide, MaxSide)
	}
	if r.TileWidth < 1 || r.TileHeight < 1 || r.TileWidth > maxTileSize || r.TileHeight > maxTileSize {
		return nil, invalidf("tile size %dx%d px (each side 1..%d)", r.TileWidth, r.TileHeight, maxTileSize)
	}
	if _, err := readProps(r.Properties, nil); err != nil {
		return nil, invalidf("map: %v", err)
	}
	objects := 0
	for _, ly := range r.Layers {
		objects += len(ly.Objects)
	}
	if objects > MaxObjects {
		return nil, tooLargef("%d objects (at most %d)", objects, MaxObjects)
	}
	sets, err := loadTilesets(l.fsys, l.path, r.Tilesets)
	if err != nil {
		return nil, err
	}
	l.sets = sets
	l.g = grid{w: r.Width, h: r.Height, tw: r.TileWidth, th: r.TileHeight}
	n := r.Width * r.Height
	l.m = &Map{Path: l.path, W: r.Width, H: r.Height, Floor: make([]FloorKind, n), Wall: make([]bool, n), objAt: make([]int32, n)}
	l.portalAt = make([]int32, n)
	l.spawnAt = make([]bool, n)

	byName, err := l.layers()
	if err != nil {
		return nil, err
	}
	if err := l.checkIDs(); err != nil {
		return nil, err
	}
	for _, name := range layerNames {
		ly := byName[name]
		if ly == nil {
			continue
		}
		if err := l.layer(ly); err != nil {
			return nil, err
		}
	}
	if len(l.m.Spawns) == 0 {
		return nil, &Error{Path: l.path, Layer: "spawns", Err: invalidf("no spawn points (a map needs at least one object of class \"spawn\")")}
	}
	return l.m, nil
}

// layers checks each layer's name, type and placement and indexes them.
func (l *mapLoader) layers() (map[string]*tmjLayer, error) {
	byName := make(map[string]*tmjLayer, len(layerNames))
	for i := range l.raw.Layers {
		ly := &l.raw.Layers[i]
		fail := func(err error) error { return &Error{Path: l.path, Layer: ly.Name, Err: err} }
		want, known := layerType(ly.Name)
		if !known {
			return nil, fail(invalidf("unknown layer (want %s)", strings.Join(layerNames, ", ")))
		}
		if byName[ly.Name] != nil {
			return nil, fail(invalidf("two layers have this name"))
		}
		byName[ly.Name] = ly
		switch {
		case ly.Type == "group":
			return nil, fail(unsupportedf("group layer (ley reads top-level layers only; make it %s)", typeName(want)))
		case ly.Type != want:
			return nil, fail(invalidf("%s, want %s", typeName(ly.Type), typeName(want)))
		case ly.OffsetX != 0 || ly.OffsetY != 0 || ly.X != 0 || ly.Y != 0:
			return nil, fail(unsupportedf("layer offset (%g, %g) px (layers must not be moved)", ly.OffsetX+float64(ly.X), ly.OffsetY+float64(ly.Y)))
		}
		if _, err := readProps(ly.Properties, nil); err != nil {
			return nil, fail(err)
		}
		if want == "tilelayer" {
			if len(ly.Chunks) > 0 && string(ly.Chunks) != "null" {
				return nil, fail(unsupportedf("chunks (an infinite map's layer)"))
			}
			if ly.Width != l.g.w || ly.Height != l.g.h {
				return nil, fail(invalidf("size %dx%d, want the map's %dx%d", ly.Width, ly.Height, l.g.w, l.g.h))
			}
		} else if len(ly.Data) > 0 {
			return nil, fail(invalidf("an object layer with tile data"))
		}
	}
	for _, name := range []string{"floor", "spawns"} {
		if byName[name] == nil {
			return nil, &Error{Path: l.path, Layer: name, Err: invalidf("missing (every map needs layers \"floor\" and \"spawns\")")}
		}
	}
	return byName, nil
}

// layerType returns the Tiled layer type a ley layer name must have.
func layerType(name string) (string, bool) {
	switch name {
	case "floor", "walls":
		return "tilelayer", true
	case "objects", "spawns", "spawners", "portals", "plots":
		return "objectgroup", true
	}
	return "", false
}

func typeName(t string) string {
	switch t {
	case "tilelayer":
		return "a tile layer"
	case "objectgroup":
		return "an object layer"
	case "imagelayer":
		return "an image layer"
	case "group":
		return "a group layer"
	}
	return fmt.Sprintf("a layer of type %q", t)
}

// checkIDs makes sure every object has a unique id, since errors and the
// area host name objects by it.
func (l *mapLoader) checkIDs() error {
	seen := make(map[int]bool)
	for _, ly := range l.raw.Layers {
		for i := range ly.Objects {
			o := &ly.Objects[i]
			if o.ID < 1 {
				return &Error{Path: l.path, Layer: ly.Name, Name: o.Name, Err: invalidf("object %d without an id (ids start at 1)", i)}
			}
			if seen[o.ID] {
				return &Error{Path: l.path, Layer: ly.Name, Object: o.ID, Name: o.Name, Err: invalidf("id used twice")}
			}
			seen[o.ID] = true
		}
	}
	return nil
}

// layer reads one layer into the Map; its errors name the layer and, if
// there is one, the object.
func (l *mapLoader) layer(ly *tmjLayer) error {
	switch ly.Name {
	case "floor", "walls":
		f := l.floor
		if ly.Name == "walls" {
			f = l.walls
		}
		if err := f(ly); err != nil {
			return &Error{Path: l.path, Layer: ly.Name, Err: err}
		}
		return nil
	}
	for i := range ly.Objects {
		o := &ly.Objects[i]
		var err error
		switch ly.Name {
		case "objects":
			err = l.object(o)
		case "portals":
			err = l.portal(o)
		case "spawns":
			err = l.spawn(o)
		case "spawners":
			err = l.spawner(o)
		case "plots":
			err = l.plot(o)
		}
		if err != nil {
			return &Error{Path: l.path, Layer: ly.Name, Object: o.ID, Name: o.Name, Err: err}
		}
	}
	return nil
}

func (l *mapLoader) floor(ly *tmjLayer) error {
	gids, err := decodeData(ly.Data, ly.Encoding, ly.Compression, len(l.m.Floor))
	if err != nil {
		return err
	}
	cache := make(map[uint32]FloorKind)
	for i, raw := range gids {
		gid := raw & gidMask
		if gid == 0 {
			continue // void
		}
		k, ok := cache[gid]
		if !ok {
			k, err = l.floorKind(gid)
			if err != nil {
				return invalidf("square (%d, %d): %v", i%l.g.w, i/l.g.w, err)
			}
			cache[gid] = k
		}
		l.m.Floor[i] = k
	}
	return nil
}

func (l *mapLoader) floorKind(gid uint32) (FloorKind, error) {
	ts, local, ok := lookup(l.sets, gid)
	if !ok {
		return 0, invalidf("gid %d is in no tileset", gid)
	}
	class := ts.classes[local]
	if class == "" {
		return 0, invalidf("%s tile %d has no class (give it a floor class: %s)", ts.describe(), local, floorClassList())
	}
	k, err := ParseFloorKind(class)
	if err != nil {
		return 0, invalidf("%s tile %d: %v", ts.describe(), local, err)
	}
	return k, nil
}

func (l *mapLoader) walls(ly *tmjLayer) error {
	gids, err := decodeData(ly.Data, ly.Encoding, ly.Compression, len(l.m.Wall))
	if err != nil {
		return err
	}
	for i, raw := range gids {
		gid := raw & gidMask
		if gid == 0 {
			continue
		}
		if _, _, ok := lookup(l.sets, gid); !ok {
			return invalidf("square (%d, %d): gid %d is in no tileset", i%l.g.w, i/l.g.w, gid)
		}
		l.m.Wall[i] = true
	}
	return nil
}
