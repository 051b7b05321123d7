package content

import "time"

// The bounds on what the loader reads. A file's size is checked before it
// is read, a map's size before its squares are allocated, and an error
// says which bound was hit.
const (
	// MaxSide bounds a map's width and height in squares.
	MaxSide = 1024
	// MaxObjects bounds the objects of a map, all object layers together.
	MaxObjects = 65536
	// MaxFileSize bounds every file the loader reads (map, tileset, index).
	MaxFileSize = 32 << 20
)

// Point is a square of a map.
type Point struct{ X, Y int32 }

// Map is one loaded Tiled map: the ground, the walls, the static objects,
// where players appear, where creatures appear and the portals.
//
// A Map is built by [LoadMap] (or by [Load] for a template) and never
// changes afterwards: a Library's maps are shared by every Area made from
// them, so callers must not write to its slices. It is safe for concurrent
// reads.
type Map struct {
	// Path is the map's file, relative to its content folder ("maps/village.tmj").
	Path string
	// W, H are the map's size in squares.
	W, H int
	// Floor holds every square's floor kind, row-major: Floor[y*W+x].
	Floor []FloorKind
	// Wall marks the squares of the "walls" layer, row-major: a wall stops
	// bodies and line of sight.
	Wall []bool
	// Objects are the static objects, in the map's order. No two share a
	// square; none stands on a wall or on void.
	Objects []Object
	// Spawns are the squares where players appear (at least one), every
	// one walkable, none shared with a portal. A rectangle in the map gives
	// every square whose centre it contains, row by row.
	Spawns []Point
	// Spawners place creatures.
	Spawners []Spawner
	// Portals lead to other Areas. No two share a square; none shares one
	// with an object.
	Portals []Portal
	// Plots are where players may build when the Area's rules say
	// "plots" (a village): rectangles of the "plots" layer, each within
	// the map and holding at least one square of ground.
	Plots []Plot

	objAt []int32 // per square: index into Objects + 1, or 0; built by the loader
}

// Plot is a rectangle of the map where players may build: W x H squares
// from (X, Y).
type Plot struct {
	// ID and Name are the plot object's in the Tiled map.
	ID   int
	Name string
	X, Y int32
	W, H int32
}

// InPlot reports whether square (x, y) lies on one of the map's plots.
func (m *Map) InPlot(x, y int32) bool {
	for _, p := range m.Plots {
		if x >= p.X && x < p.X+p.W && y >= p.Y && y < p.Y+p.H {
			return true
		}
	}
	return false
}

// Spawner keeps Count creatures of one kind alive in an area of the map.
type Spawner struct {
	// ID and Name are the spawner object's in the Tiled map.
	ID   int
	Name string
	// X, Y, W, H is the area creatures appear in, in squares (a point in
	// the map gives W = H = 1). At least one of its squares is walkable and
	// holds no object and no portal.
	X, Y, W, H int32
	// Creature names the creature kind ([Library.Creature]).
	Creature string
	// Count is how many are alive at once (at least 1).
	Count int
	// Respawn is the wait before a dead creature is replaced (default 10 s).
	Respawn time.Duration
	// Leash is how far, in squares (Chebyshev), a creature may chase from
	// the spawner's area before it gives up and returns (default 12).
	Leash int32
}

// Portal is a square that sends a player to another Area.
type Portal struct {
	// ID and Name are the portal object's in the Tiled map.
	ID   int
	Name string
	// X, Y is the portal's square; it is walkable.
	X, Y int32
	// Target names the template of the Area it leads to; the director
	// resolves it to an Area of that template.
	Target string
	// ToX, ToY is the arrival square in the target's map when HasTo;
	// otherwise the player arrives on the target's spawn points.
	ToX, ToY int32
	HasTo    bool
}

// In reports whether (x, y) lies on the map.
func (m *Map) In(x, y int) bool { return x >= 0 && y >= 0 && x < m.W && y < m.H }

// FloorAt returns the floor of (x, y); void off the map.
func (m *Map) FloorAt(x, y int) FloorKind {
	if !m.In(x, y) {
		return FloorVoid
	}
	return m.Floor[y*m.W+x]
}

// WallAt reports whether (x, y) is a wall; false off the map.
func (m *Map) WallAt(x, y int) bool { return m.In(x, y) && m.Wall[y*m.W+x] }

// ObjectAt returns the static object on (x, y), if any.
func (m *Map) ObjectAt(x, y int) (Object, bool) {
	if !m.In(x, y) {
		return Object{}, false
	}
	if m.objAt == nil { // a hand-built Map
		for _, o := range m.Objects {
			if int(o.X) == x && int(o.Y) == y {
				return o, true
			}
		}
		return Object{}, false
	}
	if i := m.objAt[y*m.W+x]; i != 0 {
		return m.Objects[i-1], true
	}
	return Object{}, false
}

// Ground reports whether (x, y)'s terrain lets a body stand there: on the
// map, a walkable floor, no wall. It ignores objects.
func (m *Map) Ground(x, y int) bool {
	return m.In(x, y) && m.Floor[y*m.W+x].Walkable() && !m.Wall[y*m.W+x]
}

// Walkable reports whether a body may stand on (x, y) as the map was
// loaded: [Map.Ground] and no blocking object (a closed door blocks, an
// open one does not). Off the map is not walkable.
func (m *Map) Walkable(x, y int) bool {
	if !m.Ground(x, y) {
		return false
	}
	o, ok := m.ObjectAt(x, y)
	return !ok || !o.Blocks()
}

// Opaque reports whether (x, y) blocks line of sight as the map was
// loaded: a wall, or an object that blocks sight (a tree, a closed door).
// Floors never do (water is seen across). Off the map is opaque.
func (m *Map) Opaque(x, y int) bool {
	if !m.In(x, y) {
		return true
	}
	if m.Wall[y*m.W+x] {
		return true
	}
	o, ok := m.ObjectAt(x, y)
	return ok && o.BlocksSight()
}

// PortalAt returns the portal on (x, y), if any.
func (m *Map) PortalAt(x, y int) (Portal, bool) {
	for _, p := range m.Portals {
		if int(p.X) == x && int(p.Y) == y {
			return p, true
		}
	}
	return Portal{}, false
}
