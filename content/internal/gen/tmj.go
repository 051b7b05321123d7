package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The Tiled release whose output the files imitate.
const (
	tiledVersion  = "1.10.2"
	formatVersion = "1.10"
)

type prop struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// tmjObject is a Tiled 1.10 object, its keys in Tiled's order.
type tmjObject struct {
	GID        int     `json:"gid,omitempty"`
	Height     float64 `json:"height"`
	ID         int     `json:"id"`
	Name       string  `json:"name"`
	Point      bool    `json:"point,omitempty"`
	Properties []prop  `json:"properties,omitempty"`
	Rotation   float64 `json:"rotation"`
	Type       string  `json:"type"`
	Visible    bool    `json:"visible"`
	Width      float64 `json:"width"`
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
}

type tmjTileLayer struct {
	Data    string  `json:"data"` // a placeholder, replaced by the rows
	Height  int     `json:"height"`
	ID      int     `json:"id"`
	Name    string  `json:"name"`
	Opacity float64 `json:"opacity"`
	Type    string  `json:"type"`
	Visible bool    `json:"visible"`
	Width   int     `json:"width"`
	X       int     `json:"x"`
	Y       int     `json:"y"`
}

type tmjObjectLayer struct {
	DrawOrder string      `json:"draworder"`
	ID        int         `json:"id"`
	Name      string      `json:"name"`
	Objects   []tmjObject `json:"objects"`
	Opacity   float64     `json:"opacity"`
	Type      string      `json:"type"`
	Visible   bool        `json:"visible"`
	X         int         `json:"x"`
	Y         int         `json:"y"`
}

type tmjTilesetRef struct {
	FirstGID int    `json:"firstgid"`
	Source   string `json:"source"`
}

// tmjMap is a Tiled 1.10 map, its keys in Tiled's order.
type tmjMap struct {
	CompressionLevel int             `json:"compressionlevel"`
	Height           int             `json:"height"`
	Infinite         bool            `json:"infinite"`
	Layers           []any           `json:"layers"`
	NextLayerID      int             `json:"nextlayerid"`
	NextObjectID     int             `json:"nextobjectid"`
	Orientation      string          `json:"orientation"`
	RenderOrder      string          `json:"renderorder"`
	TiledVersion     string          `json:"tiledversion"`
	TileHeight       int             `json:"tileheight"`
	Tilesets         []tmjTilesetRef `json:"tilesets"`
	TileWidth        int             `json:"tilewidth"`
	Type             string          `json:"type"`
	Version          string          `json:"version"`
	Width            int             `json:"width"`
}

// encode writes the map as a Tiled JSON map: layers floor, walls,
// objects, portals, spawns, spawners and, if it has any, plots; tile data
// as JSON arrays, one map row per line.
func (b *builder) encode() ([]byte, error) {
	m := tmjMap{
		CompressionLevel: -1, Height: b.h, Orientation: "orthogonal", RenderOrder: "right-down",
		TiledVersion: tiledVersion, TileHeight: tileSize, TileWidth: tileSize, Type: "map",
		Version: formatVersion, Width: b.w,
		Tilesets: []tmjTilesetRef{{FirstGID: 1, Source: tilesetFile}},
	}
	floor := make([]int, len(b.floor))
	walls := make([]int, len(b.wall))
	for i := range floor {
		floor[i] = b.floor[i] + 1 // gid; void (-1) is 0
		if b.wall[i] {
			walls[i] = tWall + 1
		}
	}
	nextID := 1
	obj := func(o tmjObject) tmjObject {
		o.ID, o.Visible = nextID, true
		nextID++
		return o
	}
	objects := tmjObjectLayer{Name: "objects"}
	for _, o := range b.objects {
		objects.Objects = append(objects.Objects, obj(tmjObject{
			GID: o.tile + 1, Name: o.name, Type: tileClass[o.tile], Properties: o.props,
			X: px(o.x), Y: px(o.y + 1), Width: tileSize, Height: tileSize,
		}))
	}
	portals := tmjObjectLayer{Name: "portals"}
	for _, p := range b.portals {
		props := []prop{{"target", "string", p.target}}
		if p.hasTo {
			props = append(props, prop{"to_x", "int", p.toX}, prop{"to_y", "int", p.toY})
		}
		portals.Objects = append(portals.Objects, obj(tmjObject{
			Name: p.name, Type: "portal", Point: true, Properties: props,
			X: px(p.x) + tileSize/2, Y: px(p.y) + tileSize/2,
		}))
	}
	spawns := tmjObjectLayer{Name: "spawns"}
	for _, s := range b.spawns {
		spawns.Objects = append(spawns.Objects, obj(tmjObject{
			Name: s.name, Type: "spawn", X: px(s.x), Y: px(s.y), Width: px(s.w), Height: px(s.h),
		}))
	}
	spawners := tmjObjectLayer{Name: "spawners"}
	for _, s := range b.spawners {
		spawners.Objects = append(spawners.Objects, obj(tmjObject{
			Name: s.name, Type: "spawner", X: px(s.x), Y: px(s.y), Width: px(s.w), Height: px(s.h),
			Properties: []prop{
				{"count", "int", s.count},
				{"creature", "string", s.creature},
				{"leash", "int", s.leash},
				{"respawn", "float", s.respawn},
			},
		}))
	}
	m.Layers = []any{
		tmjTileLayer{Data: "@floor@", Name: "floor"},
		tmjTileLayer{Data: "@walls@", Name: "walls"},
		objects, portals, spawns, spawners,
	}
	if len(b.plots) > 0 {
		plots := tmjObjectLayer{Name: "plots"}
		for _, p := range b.plots {
			plots.Objects = append(plots.Objects, obj(tmjObject{
				Name: p.name, Type: "plot", X: px(p.x), Y: px(p.y), Width: px(p.w), Height: px(p.h),
			}))
		}
		m.Layers = append(m.Layers, plots)
	}
	for i, ly := range m.Layers {
		switch l := ly.(type) {
		case tmjTileLayer:
			l.ID, l.Width, l.Height, l.Opacity, l.Type, l.Visible = i+1, b.w, b.h, 1, "tilelayer", true
			m.Layers[i] = l
		case tmjObjectLayer:
			l.ID, l.DrawOrder, l.Opacity, l.Type, l.Visible = i+1, "topdown", 1, "objectgroup", true
			if l.Objects == nil {
				l.Objects = []tmjObject{}
			}
			m.Layers[i] = l
		}
	}
	m.NextLayerID, m.NextObjectID = len(m.Layers)+1, nextID
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]int{"floor": floor, "walls": walls} {
		placeholder := []byte(`"@` + name + `@"`)
		if bytes.Count(out, placeholder) != 1 {
			return nil, fmt.Errorf("layer %s: placeholder not found once", name)
		}
		out = bytes.Replace(out, placeholder, rowsJSON(data, b.w), 1)
	}
	return append(out, '\n'), nil
}

// rowsJSON formats tile data as a JSON array with one map row per line.
func rowsJSON(data []int, w int) []byte {
	var sb strings.Builder
	sb.WriteString("[\n")
	for i, v := range data {
		if i%w == 0 {
			sb.WriteString("        ")
		}
		sb.WriteString(strconv.Itoa(v))
		switch {
		case i == len(data)-1:
			sb.WriteString("\n      ]")
		case i%w == w-1:
			sb.WriteString(",\n")
		default:
			sb.WriteByte(',')
		}
	}
	return []byte(sb.String())
}

func px(squares int) float64 { return float64(squares * tileSize) }
