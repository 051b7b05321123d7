package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math"
)

// The tileset's files and geometry.
const (
	tilesetFile = "ley.tsj"
	imageFile   = "ley.png"
	tileSize    = 32
	columns     = 8
	rows        = 2
)

// The tiles, by local ID (global ID = local ID + 1: the maps list the
// tileset with firstgid 1).
const (
	tGrass = iota
	tDirt
	tStone
	tSand
	tWood
	tWater
	tWall
	tDoor
	tDoorOpen
	tTree
	tSign
	tRock
	tChest
	numTiles
)

// tileClass is each tile's class: a floor kind for ground tiles, an object
// class for object tiles, "wall" for the wall.
var tileClass = [numTiles]string{
	tGrass: "grass", tDirt: "dirt", tStone: "stone", tSand: "sand", tWood: "wood", tWater: "water",
	tWall: "wall", tDoor: "door", tDoorOpen: "door", tTree: "tree", tSign: "sign", tRock: "rock", tChest: "chest",
}

type tsjTile struct {
	ID   int    `json:"id"`
	Type string `json:"type"`
}

// tsj is a Tiled 1.10 tileset file, its keys in Tiled's (sorted) order.
type tsj struct {
	Columns      int       `json:"columns"`
	Image        string    `json:"image"`
	ImageHeight  int       `json:"imageheight"`
	ImageWidth   int       `json:"imagewidth"`
	Margin       int       `json:"margin"`
	Name         string    `json:"name"`
	Spacing      int       `json:"spacing"`
	TileCount    int       `json:"tilecount"`
	TiledVersion string    `json:"tiledversion"`
	TileHeight   int       `json:"tileheight"`
	Tiles        []tsjTile `json:"tiles"`
	TileWidth    int       `json:"tilewidth"`
	Type         string    `json:"type"`
	Version      string    `json:"version"`
}

func tilesetJSON() ([]byte, error) {
	ts := tsj{
		Columns: columns, Image: imageFile, ImageHeight: rows * tileSize, ImageWidth: columns * tileSize,
		Name: "ley", TileCount: columns * rows, TiledVersion: tiledVersion,
		TileHeight: tileSize, TileWidth: tileSize, Type: "tileset", Version: formatVersion,
	}
	for id, class := range tileClass {
		ts.Tiles = append(ts.Tiles, tsjTile{ID: id, Type: class})
	}
	b, err := json.MarshalIndent(ts, "", "  ")
	return append(b, '\n'), err
}

// tilesetImage draws the tiles: flat colours with a little texture, so
// that the maps read as places in Tiled.
func tilesetImage() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, columns*tileSize, rows*tileSize))
	for id := range numTiles {
		ox, oy := id%columns*tileSize, id/columns*tileSize
		for y := range tileSize {
			for x := range tileSize {
				img.SetNRGBA(ox+x, oy+y, pixel(id, x, y))
			}
		}
	}
	var buf bytes.Buffer
	err := png.Encode(&buf, img)
	return buf.Bytes(), err
}

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 255} }

var transparent = color.NRGBA{}

// speckle returns base, with a few pixels a shade darker or lighter.
func speckle(id, x, y int, base, dark, light color.NRGBA) color.NRGBA {
	switch h := hash(id, x, y) % 100; {
	case h < 9:
		return dark
	case h < 14:
		return light
	}
	return base
}

// pixel returns pixel (x, y) of tile id.
func pixel(id, x, y int) color.NRGBA {
	in := func(x0, y0, x1, y1 int) bool { return x >= x0 && x <= x1 && y >= y0 && y <= y1 }
	ellipse := func(cx, cy, rx, ry float64) float64 {
		dx, dy := (float64(x)+0.5-cx)/rx, (float64(y)+0.5-cy)/ry
		return math.Sqrt(dx*dx + dy*dy)
	}
	switch id {
	case tGrass:
		return speckle(id, x, y, rgb(86, 156, 60), rgb(68, 128, 46), rgb(116, 184, 76))
	case tDirt:
		return speckle(id, x, y, rgb(150, 111, 70), rgb(124, 90, 56), rgb(172, 134, 92))
	case tSand:
		return speckle(id, x, y, rgb(222, 202, 142), rgb(200, 180, 122), rgb(238, 222, 170))
	case tStone:
		off := 0
		if y/16%2 == 1 {
			off = 8
		}
		if y%16 == 0 || (x+off)%16 == 0 {
			return rgb(112, 112, 116)
		}
		return speckle(id, x, y, rgb(156, 156, 160), rgb(142, 142, 146), rgb(170, 170, 174))
	case tWood:
		off := (y / 8 % 2) * 13
		if y%8 == 7 || (x+off)%26 == 0 {
			return rgb(112, 74, 38)
		}
		return speckle(id, x, y, rgb(164, 114, 64), rgb(150, 102, 56), rgb(176, 126, 74))
	case tWater:
		if y%8 == 3 && (x+y*3)%14 < 5 {
			return rgb(120, 176, 236)
		}
		return rgb(52, 108, 196)
	case tWall:
		off := 0
		if y/8%2 == 1 {
			off = 8
		}
		if y%8 == 7 || (x+off)%16 == 15 {
			return rgb(72, 66, 62)
		}
		return speckle(id, x, y, rgb(132, 120, 108), rgb(118, 106, 96), rgb(146, 134, 122))
	case tDoor:
		switch {
		case in(22, 16, 24, 18):
			return rgb(228, 188, 64) // knob
		case in(4, 1, 27, 31) && (x == 4 || x == 27 || y == 1 || x == 15):
			return rgb(84, 52, 24)
		case in(4, 1, 27, 31):
			return rgb(132, 84, 40)
		}
		return transparent
	case tDoorOpen:
		switch {
		case in(4, 1, 8, 31):
			return rgb(132, 84, 40) // the door, swung open
		case in(4, 1, 27, 31) && (x == 27 || y == 1):
			return rgb(84, 52, 24) // the frame
		}
		return transparent
	case tTree:
		if d := ellipse(16, 12, 12, 11); d < 1 {
			if hash(id, x, y)%100 < 12 || d < 0.45 && x < 16 && y < 12 {
				return rgb(70, 150, 62)
			}
			return rgb(40, 112, 44)
		}
		if in(13, 20, 18, 30) {
			return rgb(104, 70, 38)
		}
		return transparent
	case tSign:
		switch {
		case in(4, 5, 27, 17) && y%4 == 1 && x > 7 && x < 24:
			return rgb(96, 66, 34) // writing
		case in(4, 5, 27, 17):
			return rgb(190, 150, 90)
		case in(14, 18, 17, 30):
			return rgb(110, 76, 40)
		}
		return transparent
	case tRock:
		if d := ellipse(16, 20, 12.5, 9); d < 1 {
			if d < 0.5 && y < 18 {
				return rgb(160, 160, 168)
			}
			return rgb(118, 118, 126)
		}
		return transparent
	case tChest:
		switch {
		case in(14, 15, 17, 19):
			return rgb(60, 48, 24) // lock
		case in(5, 9, 26, 27) && (y == 14 || x == 5 || x == 26 || y == 9 || y == 27):
			return rgb(220, 180, 60) // bands
		case in(5, 9, 26, 27):
			return rgb(142, 92, 42)
		}
		return transparent
	}
	return transparent
}

// hash mixes its arguments into 32 well-spread bits (a splitmix64 step):
// the generator's only source of variety, so its output never changes.
func hash(a, b, c int) uint32 {
	h := uint64(a)*0x9E3779B97F4A7C15 + uint64(b)*0xBF58476D1CE4E5B9 + uint64(c)*0x94D049BB133111EB
	h ^= h >> 30
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 27
	h *= 0x94D049BB133111EB
	h ^= h >> 31
	return uint32(h)
}
