package statics

import (
	"fmt"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/spatial"
)

// Object is one static object standing on a square: a door, a tree, a
// sign, a rock, a chest, a portal square, or an item a player placed.
type Object struct {
	ID   uint32
	Kind uint16 // a wire.Object* kind; 0 only for a removed object's slot
	X, Y int32
	Open bool   // a door's state
	Text string // a sign's words
	// Item is a placed item's kind (its content code), 0 for the map's
	// own objects; Stack the placed stack's id. A placed door piece is a
	// wire.ObjectDoor, any other placed item a wire.ObjectItem.
	Item  uint16
	Stack ecs.ItemID
	// Floor: a placed item in the square's floor slot (a floor tile),
	// which blocks nothing; any other object stands in its occupant slot.
	Floor bool
	// Solid and Opaque are a placed item's: it stops bodies, it stops
	// sight (a placed door: both while closed, as a map door).
	Solid, Opaque bool
}

// Blocks reports whether o stops bodies now.
func (o *Object) Blocks() bool {
	switch {
	case o.Floor:
		return false
	case o.Kind == wire.ObjectDoor:
		return !o.Open
	case o.Item != 0:
		return o.Solid
	case o.Kind == wire.ObjectPortal:
		return false
	}
	return true
}

// BlocksSight reports whether o stops line of sight now.
func (o *Object) BlocksSight() bool {
	switch {
	case o.Floor:
		return false
	case o.Kind == wire.ObjectDoor:
		return !o.Open
	case o.Item != 0:
		return o.Opaque
	case o.Kind == wire.ObjectTree:
		return true
	}
	return false
}

// State is o's state on the wire: 1 for an open door, else 0.
func (o *Object) State() uint8 {
	if o.Open {
		return 1
	}
	return 0
}

// Map is an Area's static map beside its ECS world: the ground clients
// draw, the objects, the squares where players appear, and each
// spatial-hash cell's objects and map version. It keeps the grid's floor
// and sight layers in step with its objects (a closed door blocks both).
//
// A Map belongs to its Area and is touched only by the goroutine ticking
// it.
type Map struct {
	grid    *ecs.Grid
	hash    *spatial.Hash
	ground  []uint8 // per square: its wire floor kind
	objects []Object
	objAt   []int32   // per square: its occupant slot's object, index into objects + 1, or 0
	floorAt []int32   // per square: its floor slot's item likewise; nil until a floor item is placed
	free    []int32   // indexes of removed objects, for reuse
	items   int       // placed items standing now
	cell    [][]int32 // per hash cell: its objects' indexes, in the order added
	version []uint32  // per hash cell: its map's version (bumped by every change)
	gen     uint64    // bumped by every change of any cell
	spawns  []ecs.Cell
}

// New returns the Map of a fresh grid: grass everywhere, no object. The
// hash gives the cells whose versions it keeps.
func New(g *ecs.Grid, h *spatial.Hash) *Map {
	m := &Map{grid: g, hash: h, ground: make([]uint8, g.Len()), objAt: make([]int32, g.Len()),
		cell: make([][]int32, h.Cells()), version: make([]uint32, h.Cells())}
	for i := range m.ground {
		m.ground[i] = wire.FloorGrass
	}
	for i := range m.version {
		m.version[i] = 1
	}
	return m
}

// LayMap lays a content map onto the grid: floors bodies cannot cross,
// walls, objects (blocking and hiding as their state says) and spawn
// points. The map must be the grid's size.
func (m *Map) LayMap(cm *content.Map) error {
	g := m.grid
	if cm.W != int(g.W()) || cm.H != int(g.H()) {
		return fmt.Errorf("statics: map %s is %dx%d, the grid %dx%d", cm.Path, cm.W, cm.H, g.W(), g.H())
	}
	floor := g.Layer(ecs.LayerFloor)
	for i, fk := range cm.Floor {
		m.ground[i] = uint8(fk)
		if !fk.Walkable() {
			floor[i] = ecs.FloorWall // void and water: nothing stands there; light crosses
		}
		if cm.Wall[i] {
			g.SetWall(ecs.Cell(i))
			m.ground[i] = wire.FloorWall
		}
	}
	for _, o := range cm.Objects {
		m.Add(Object{ID: uint32(o.ID), Kind: uint16(o.Class), X: o.X, Y: o.Y, Open: o.Open, Text: o.Text})
	}
	for _, sp := range cm.Spawns {
		m.spawns = append(m.spawns, g.Cell(sp.X, sp.Y))
	}
	return nil
}

// Add puts o on its square (which must be on the grid and hold no other
// object) and marks the grid: a blocking object's square cannot be
// crossed, a hiding one's cannot be seen through.
func (m *Map) Add(o Object) {
	m.objects = append(m.objects, o)
	i := len(m.objects) - 1
	hc := m.hash.CellAt(o.X, o.Y)
	m.cell[hc] = append(m.cell[hc], int32(i))
	m.mark(i)
}

// PlacedIDBase is the first object ID of placed items: map object IDs
// (Tiled's) and portal squares' stay below it.
const PlacedIDBase = 1 << 30

// Free reports whether a placed item of the given slot may go on square
// c: on the grid's walkable ground (no wall, no water), with nothing in
// that slot, and, for the occupant slot, no body standing there.
func (m *Map) Free(c ecs.Cell, floor bool) bool {
	g := m.grid
	if m.ground[c] == wire.FloorWall || !content.FloorKind(m.ground[c]).Walkable() {
		return false
	}
	if floor {
		return m.floorAt == nil || m.floorAt[c] == 0
	}
	return m.objAt[c] == 0 && g.At(ecs.LayerOccupant, c) == 0 && g.Walkable(c)
}

// Place puts the placed item o on its square, in its slot (o.Floor), for
// every system at once: the grid's floor and sight layers, the cell's map
// version. The caller checks Free first. It reuses a removed object's
// slot, so placing and taking back does not grow the Map. Its object ID
// is PlacedIDBase plus its slot's index: unique in the Area while it
// stands.
func (m *Map) Place(o Object) uint32 {
	var i int
	if n := len(m.free); n > 0 {
		i = int(m.free[n-1])
		m.free = m.free[:n-1]
	} else {
		m.objects = append(m.objects, Object{})
		i = len(m.objects) - 1
	}
	o.ID = PlacedIDBase + uint32(i)
	m.objects[i] = o
	hc := m.hash.CellAt(o.X, o.Y)
	m.cell[hc] = append(m.cell[hc], int32(i))
	m.items++
	c := m.grid.Cell(o.X, o.Y)
	if o.Floor {
		if m.floorAt == nil {
			m.floorAt = make([]int32, m.grid.Len())
		}
		m.floorAt[c] = int32(i) + 1
	} else {
		m.mark(i)
	}
	m.changed(o.X, o.Y)
	return o.ID
}

// PlacedAt returns the placed item on square c: its occupant slot's, or
// when that holds none (or a map object), its floor slot's; nil if none.
func (m *Map) PlacedAt(c ecs.Cell) *Object {
	if i := m.objAt[c]; i > 0 && m.objects[i-1].Item != 0 {
		return &m.objects[i-1]
	}
	if m.floorAt != nil {
		if i := m.floorAt[c]; i > 0 {
			return &m.objects[i-1]
		}
	}
	return nil
}

// Remove takes the placed item o (one PlacedAt returned) off its square,
// for every system at once, and returns what it was.
func (m *Map) Remove(o *Object) Object {
	g := m.grid
	c := g.Cell(o.X, o.Y)
	var i int32
	if o.Floor {
		i = m.floorAt[c] - 1
		m.floorAt[c] = 0
	} else {
		i = m.objAt[c] - 1
		m.objAt[c] = 0
		floor := ecs.FloorOpen
		if !content.FloorKind(m.ground[c]).Walkable() {
			floor = ecs.FloorWall
		}
		g.Set(ecs.LayerFloor, c, floor)
		g.Set(ecs.LayerSight, c, 1)
	}
	was := m.objects[i]
	hc := m.hash.CellAt(was.X, was.Y)
	list := m.cell[hc]
	for k, j := range list {
		if j == i {
			m.cell[hc] = append(list[:k], list[k+1:]...)
			break
		}
	}
	m.objects[i] = Object{}
	m.free = append(m.free, i)
	m.items--
	m.changed(was.X, was.Y)
	return was
}

// Grid returns the grid the Map marks.
func (m *Map) Grid() *ecs.Grid { return m.grid }

// Items is the number of placed items standing in the Area.
func (m *Map) Items() int { return m.items }

// AddPortal shows a portal square as an object (a client sees where it
// is), unless an object stands there already. id is its map object's id,
// or 0 for one of no map object (it gets an id past every map id).
func (m *Map) AddPortal(x, y int32, id uint32) {
	g := m.grid
	if !g.In(x, y) || m.objAt[g.Cell(x, y)] != 0 {
		return
	}
	if id == 0 {
		id = 1 << 24
		for i := range m.objects {
			if m.objects[i].ID >= id {
				id = m.objects[i].ID + 1
			}
		}
	}
	o := Object{ID: id, Kind: wire.ObjectPortal, X: x, Y: y}
	m.objects = append(m.objects, o)
	i := len(m.objects) - 1
	hc := m.hash.CellAt(x, y)
	m.cell[hc] = append(m.cell[hc], int32(i))
	m.objAt[g.Cell(x, y)] = int32(i) + 1 // a portal blocks nothing
}

// mark writes object i's state into the grid.
func (m *Map) mark(i int) {
	o := &m.objects[i]
	g := m.grid
	c := g.Cell(o.X, o.Y)
	m.objAt[c] = int32(i) + 1
	if m.ground[c] == wire.FloorWall {
		return // the loader keeps objects off walls
	}
	floor, sight := ecs.FloorOpen, int32(1)
	if o.Blocks() || !content.FloorKind(m.ground[c]).Walkable() {
		floor = ecs.FloorWall
	}
	if o.BlocksSight() {
		sight = 0
	}
	g.Set(ecs.LayerFloor, c, floor)
	g.Set(ecs.LayerSight, c, sight)
}

// At returns the object on square c, or nil.
func (m *Map) At(c ecs.Cell) *Object {
	if i := m.objAt[c]; i > 0 {
		return &m.objects[i-1]
	}
	return nil
}

// Object returns the placed item whose object ID is id (Place's answer),
// or nil when none stands under that ID now.
func (m *Map) Object(id uint32) *Object {
	if id < PlacedIDBase || int(id-PlacedIDBase) >= len(m.objects) {
		return nil
	}
	if o := &m.objects[id-PlacedIDBase]; o.Item != 0 {
		return o
	}
	return nil
}

// Objects returns every object, in the order added; the slot of a removed
// placed item reads Kind 0 until a new one takes it. The slice aliases
// the Map: it stays valid until the next Add or Place.
func (m *Map) Objects() []Object { return m.objects }

// Toggle opens or closes the door on square c for everyone: the grid
// (bodies and sight) and its cell's map version. It reports false, and
// changes nothing, when no door stands there.
func (m *Map) Toggle(c ecs.Cell) bool {
	i := m.objAt[c]
	if i == 0 || m.objects[i-1].Kind != wire.ObjectDoor {
		return false
	}
	o := &m.objects[i-1]
	o.Open = !o.Open
	m.mark(int(i - 1))
	m.changed(o.X, o.Y)
	return true
}

// changed bumps the version of the cell holding (x, y), and the Map's
// generation.
func (m *Map) changed(x, y int32) {
	m.version[m.hash.CellAt(x, y)]++
	m.gen++
}

// Generation counts the changes made to the map since it was laid: what
// a client sees may have changed when it moved (a door opened).
func (m *Map) Generation() uint64 { return m.gen }

// SetDoor sets the door of map id open or closed (restoring an Area's
// stored state); it reports false when no door has that id.
func (m *Map) SetDoor(id uint32, open bool) bool {
	for i := range m.objects {
		if o := &m.objects[i]; o.ID == id && o.Kind == wire.ObjectDoor {
			if o.Open != open {
				o.Open = open
				m.mark(i)
				m.changed(o.X, o.Y)
			}
			return true
		}
	}
	return false
}

// Version returns hash cell hc's map version: it changes whenever
// anything of the cell's map does.
func (m *Map) Version(hc int32) uint32 { return m.version[hc] }

// Versions returns every hash cell's map version, indexed by cell. The
// slice aliases the Map.
func (m *Map) Versions() []uint32 { return m.version }

// Ground returns square c's wire floor kind as clients draw it.
func (m *Map) Ground(c ecs.Cell) uint8 { return m.ground[c] }

// SpawnPoint returns the i-th spawn point (wrapping), or false if the map
// has none.
func (m *Map) SpawnPoint(i int) (int32, int32, bool) {
	if len(m.spawns) == 0 {
		return 0, 0, false
	}
	x, y := m.grid.XY(m.spawns[i%len(m.spawns)])
	return x, y, true
}

// Static fills st with the map of hash cell hc as the protocol's static
// message carries it: the floor of its squares as runs, row by row, and
// its objects. It reuses st's slices.
func (m *Map) Static(hc int32, st *wire.Static) {
	g := m.grid
	size := m.hash.Size()
	x0, y0 := (hc%m.hash.CellsAcross())*size, (hc/m.hash.CellsAcross())*size
	x1, y1 := min(x0+size, g.W()), min(y0+size, g.H())
	st.Cell, st.Version = uint32(hc), m.version[hc]
	st.Floor, st.Objects = st.Floor[:0], st.Objects[:0]
	run, kind := uint32(0), uint32(0)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			c := g.Cell(x, y)
			k := uint32(m.ground[c])
			if m.objAt[c] == 0 && g.At(ecs.LayerFloor, c) == ecs.FloorWall && g.At(ecs.LayerSight, c) == 0 {
				k = uint32(wire.FloorWall) // a wall made after the map was laid
			}
			if run > 0 && k != kind {
				st.Floor = append(st.Floor, kind, run)
				run = 0
			}
			kind = k
			run++
		}
	}
	if run > 0 {
		st.Floor = append(st.Floor, kind, run)
	}
	for _, i := range m.cell[hc] {
		o := &m.objects[i]
		st.Objects = append(st.Objects, wire.Object{ID: o.ID, Kind: o.Kind, X: o.X, Y: o.Y, State: o.State(), Text: o.Text, Item: o.Item})
	}
}
