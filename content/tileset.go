package content

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
)

// Bounds on tilesets, so that a map cannot make the loader hold more
// than its file sizes allow.
const (
	maxTilesets = 256
	maxTileID   = 1 << 20 // local tile IDs and tile counts stay below this
)

// tileset is a map's tileset, resolved: where its global IDs start, how
// many it spans, and each tile's class.
type tileset struct {
	first   uint32
	span    uint32 // gids first .. first+span-1
	name    string
	file    string            // where it was defined: the .tsj, or the map
	classes map[uint32]string // local tile ID -> class
}

// describe names the tileset for an error message.
func (ts *tileset) describe() string {
	return "tileset " + strconv.Quote(ts.name) + " (" + ts.file + ")"
}

// loadTilesets resolves a map's tileset entries, reading external ones
// relative to the map's folder in fsys.
func loadTilesets(fsys fs.FS, mapPath string, refs []tmjTileset) ([]*tileset, error) {
	if len(refs) == 0 {
		return nil, invalidf("no tilesets")
	}
	if len(refs) > maxTilesets {
		return nil, tooLargef("%d tilesets (at most %d)", len(refs), maxTilesets)
	}
	sets := make([]*tileset, 0, len(refs))
	for i, ref := range refs {
		if ref.FirstGID < 1 || ref.FirstGID > int64(gidMask) {
			return nil, invalidf("tileset %d: firstgid %d out of range", i, ref.FirstGID)
		}
		def, file := ref, mapPath
		if ref.Source != "" {
			p := path.Join(path.Dir(mapPath), ref.Source)
			if !fs.ValidPath(p) || path.IsAbs(ref.Source) {
				return nil, invalidf("tileset %d: source %q leaves the content folder", i, ref.Source)
			}
			b, err := readFile(fsys, p)
			if err != nil {
				// Name the map that refers to the missing or oversized file.
				var e *Error
				if errors.As(err, &e) {
					err = e.Err
				}
				return nil, &problem{kindOf(err), fmt.Sprintf("tileset %d: source %q (%s): %v", i, ref.Source, p, err)}
			}
			def = tmjTileset{}
			if err := json.Unmarshal(b, &def); err != nil {
				return nil, &Error{Path: p, Err: invalidf("not a Tiled JSON tileset (.tsj): %v", err)}
			}
			if def.Type != "" && def.Type != "tileset" {
				return nil, &Error{Path: p, Err: invalidf("type %q, want \"tileset\"", def.Type)}
			}
			file = p
		}
		ts, err := resolveTileset(def)
		if err != nil {
			return nil, at(file, err)
		}
		ts.first, ts.file = uint32(ref.FirstGID), file
		if uint64(ts.first)+uint64(ts.span) > uint64(gidMask)+1 {
			return nil, at(file, invalidf("tileset %q: global IDs run past %d", ts.name, gidMask))
		}
		sets = append(sets, ts)
	}
	slices.SortFunc(sets, func(a, b *tileset) int { return cmp.Compare(a.first, b.first) })
	for i := 1; i < len(sets); i++ {
		if p := sets[i-1]; p.first+p.span > sets[i].first {
			return nil, invalidf("%s and %s overlap (firstgid %d and %d)", p.describe(), sets[i].describe(), p.first, sets[i].first)
		}
	}
	return sets, nil
}

func resolveTileset(def tmjTileset) (*tileset, error) {
	ts := &tileset{name: def.Name, classes: make(map[uint32]string, len(def.Tiles))}
	if def.TileCount < 0 || def.TileCount > maxTileID {
		return nil, tooLargef("tileset %q: tilecount %d (at most %d)", def.Name, def.TileCount, maxTileID)
	}
	if len(def.Properties) > 0 {
		return nil, invalidf("tileset %q: unknown property %q (ley reads no tileset properties)", def.Name, def.Properties[0].Name)
	}
	ts.span = uint32(def.TileCount)
	for _, t := range def.Tiles {
		if t.ID < 0 || t.ID >= maxTileID {
			return nil, invalidf("tileset %q: tile id %d out of range", def.Name, t.ID)
		}
		if len(t.Properties) > 0 {
			return nil, invalidf("tileset %q: tile %d: unknown property %q (ley reads a tile's class only)", def.Name, t.ID, t.Properties[0].Name)
		}
		class, err := oneClass(t.Type, t.Class)
		if err != nil {
			return nil, invalidf("tileset %q: tile %d: %v", def.Name, t.ID, err)
		}
		id := uint32(t.ID)
		if _, dup := ts.classes[id]; dup {
			return nil, invalidf("tileset %q: tile %d listed twice", def.Name, t.ID)
		}
		ts.classes[id] = class
		// An image-collection tileset may number its tiles past tilecount.
		ts.span = max(ts.span, id+1)
	}
	return ts, nil
}

// oneClass returns an object's or tile's class from Tiled's "type" (1.8
// and earlier, 1.10 and later) or "class" (1.9) field.
func oneClass(typ, class string) (string, error) {
	if typ != "" && class != "" && typ != class {
		return "", invalidf("type %q and class %q disagree", typ, class)
	}
	if typ != "" {
		return typ, nil
	}
	return class, nil
}

// lookup finds the tileset holding gid (flags already masked off) and the
// tile's local ID; ok is false if no tileset spans it.
func lookup(sets []*tileset, gid uint32) (ts *tileset, local uint32, ok bool) {
	i, _ := slices.BinarySearchFunc(sets, gid, func(t *tileset, g uint32) int {
		switch {
		case t.first > g:
			return 1
		case t.first+t.span <= g:
			return -1
		}
		return 0
	})
	if i < len(sets) && sets[i].first <= gid && gid < sets[i].first+sets[i].span {
		return sets[i], gid - sets[i].first, true
	}
	return nil, 0, false
}
