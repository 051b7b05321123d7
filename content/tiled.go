package content

import "encoding/json"

// The shapes of Tiled's JSON map format that ley reads
// (https://doc.mapeditor.org/en/stable/reference/json-map-format/).
// Fields Tiled writes that do not change what ley loads (editor settings,
// opacity, tint, parallax, render order, images) are left out, so
// encoding/json skips them.

type tmjMap struct {
	Type        string        `json:"type"`
	Orientation string        `json:"orientation"`
	Infinite    bool          `json:"infinite"`
	Width       int           `json:"width"`
	Height      int           `json:"height"`
	TileWidth   int           `json:"tilewidth"`
	TileHeight  int           `json:"tileheight"`
	Layers      []tmjLayer    `json:"layers"`
	Tilesets    []tmjTileset  `json:"tilesets"`
	Properties  []tmjProperty `json:"properties"`
}

type tmjLayer struct {
	ID          int             `json:"id"`
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	X           int             `json:"x"`
	Y           int             `json:"y"`
	OffsetX     float64         `json:"offsetx"`
	OffsetY     float64         `json:"offsety"`
	Data        json.RawMessage `json:"data"`
	Encoding    string          `json:"encoding"`
	Compression string          `json:"compression"`
	Chunks      json.RawMessage `json:"chunks"`
	Objects     []tmjObject     `json:"objects"`
	Properties  []tmjProperty   `json:"properties"`
}

type tmjObject struct {
	ID         int             `json:"id"`
	Name       string          `json:"name"`
	Type       string          `json:"type"`  // Tiled 1.8 and earlier, 1.10 and later
	Class      string          `json:"class"` // Tiled 1.9
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Rotation   float64         `json:"rotation"`
	GID        uint32          `json:"gid"`
	Point      bool            `json:"point"`
	Ellipse    bool            `json:"ellipse"`
	Polygon    json.RawMessage `json:"polygon"`
	Polyline   json.RawMessage `json:"polyline"`
	Text       json.RawMessage `json:"text"`
	Template   string          `json:"template"`
	Properties []tmjProperty   `json:"properties"`
}

// tmjTileset is a map's tileset entry (firstgid with source, or firstgid
// with the tileset inline) and also an external .tsj file.
type tmjTileset struct {
	FirstGID   int64         `json:"firstgid"`
	Source     string        `json:"source"`
	Type       string        `json:"type"`
	Name       string        `json:"name"`
	TileCount  int           `json:"tilecount"`
	Tiles      []tmjTile     `json:"tiles"`
	Properties []tmjProperty `json:"properties"`
}

type tmjTile struct {
	ID         int           `json:"id"`
	Type       string        `json:"type"`
	Class      string        `json:"class"`
	Properties []tmjProperty `json:"properties"`
}

type tmjProperty struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// The flip and rotation flags Tiled keeps in a global tile ID's top bits.
const (
	gidFlags = 0xF0000000
	gidMask  = ^uint32(gidFlags)
)
