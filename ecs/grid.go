package ecs

import (
	"errors"
	"fmt"
)

// Cell is the index of one square of the grid within a layer: y*w + x.
// It is the engine's position currency in hot loops; NoCell marks "none".
type Cell int32

// NoCell is the Cell value meaning "no cell" (off the grid, no target).
const NoCell Cell = -1

// Layer names one of the grid's planes.
type Layer int32

// The grid's layers. Every layer is w*h int32 values in one flat slice.
const (
	// LayerFloor holds each square's movement cost: 0 is a wall (never
	// passable), 1 is open ground, higher values cost more to cross
	// (flow fields and A* weigh by it; a step onto any non-zero floor is one step).
	LayerFloor Layer = iota
	// LayerOccupant holds the ID of the body standing on the square, or 0.
	// A body is an entity with Position and Body; it occupies exactly one square.
	LayerOccupant
	// LayerSight holds whether light crosses the square: 1 where it does, 0
	// where it does not (a wall, a closed door, a tree). Line of sight
	// (systems/fov) reads it; a new grid is clear everywhere.
	LayerSight
	// NumLayers is the number of layers a Grid holds.
	NumLayers
)

// Floor values with a meaning of their own.
const (
	FloorWall int32 = 0 // never passable
	FloorOpen int32 = 1 // plain ground, cost 1
)

// MaxGridSide bounds either side of a grid; it keeps every index in an int32.
const MaxGridSide = 4096

// ErrGridSize reports a grid dimension out of range.
var ErrGridSize = errors.New("ecs: grid size out of range")

// Grid is an Area's map: NumLayers planes of w*h int32 values stored in one
// flat slice, value (layer*h + y)*w + x. Hot loops take a layer with Layer
// and index it by Cell directly.
//
// A Grid is owned by its Area and touched only by the goroutine ticking it.
type Grid struct {
	w, h  int32
	cells []int32
	// stops marks the squares a planned walk only ends on (portals): nil
	// until SetStop first marks one, so an Area without them pays nothing.
	stops []int32
}

// NewGrid returns a w x h grid with every floor open, clear to sight, and
// nothing on it.
func NewGrid(w, h int) (*Grid, error) {
	if w < 1 || h < 1 || w > MaxGridSide || h > MaxGridSide {
		return nil, fmt.Errorf("%w: %dx%d (each side 1..%d)", ErrGridSize, w, h, MaxGridSide)
	}
	g := &Grid{w: int32(w), h: int32(h), cells: make([]int32, int(NumLayers)*w*h)}
	floor, sight := g.Layer(LayerFloor), g.Layer(LayerSight)
	for i := range floor {
		floor[i], sight[i] = FloorOpen, 1
	}
	return g, nil
}

// W is the grid's width in squares.
func (g *Grid) W() int32 { return g.w }

// H is the grid's height in squares.
func (g *Grid) H() int32 { return g.h }

// Len is the number of squares in one layer (w*h).
func (g *Grid) Len() int { return int(g.w) * int(g.h) }

// In reports whether (x, y) lies on the grid.
func (g *Grid) In(x, y int32) bool { return x >= 0 && y >= 0 && x < g.w && y < g.h }

// Cell returns the index of (x, y). The caller checks In first.
func (g *Grid) Cell(x, y int32) Cell { return Cell(y*g.w + x) }

// XY returns the coordinates of c.
func (g *Grid) XY(c Cell) (x, y int32) { return int32(c) % g.w, int32(c) / g.w }

// Layer returns the flat slice of layer l, indexed by Cell. The slice aliases
// the grid: writes through it are writes to the grid. Writing LayerOccupant
// directly bypasses the Area's bookkeeping; use Area.MoveBody instead.
func (g *Grid) Layer(l Layer) []int32 {
	n := g.w * g.h
	return g.cells[int32(l)*n : (int32(l)+1)*n : (int32(l)+1)*n]
}

// At returns the value of layer l at c.
func (g *Grid) At(l Layer, c Cell) int32 { return g.cells[(int32(l)*g.h*g.w)+int32(c)] }

// Set stores v in layer l at c.
func (g *Grid) Set(l Layer, c Cell, v int32) { g.cells[(int32(l)*g.h*g.w)+int32(c)] = v }

// SetWall makes c a wall: no body stands on it, no light crosses it.
func (g *Grid) SetWall(c Cell) {
	g.Set(LayerFloor, c, FloorWall)
	g.Set(LayerSight, c, 0)
}

// SetStop marks c as a square a planned walk (a move-to) steps onto only
// as its target, never on its way: a portal, which a body crosses only by
// a step or at the end of its move-to.
func (g *Grid) SetStop(c Cell) {
	if g.stops == nil {
		g.stops = make([]int32, g.Len())
	}
	g.stops[c] = 1
}

// Stops returns the squares SetStop marked (non-zero), indexed by Cell,
// or nil when there are none. The slice aliases the grid.
func (g *Grid) Stops() []int32 { return g.stops }

// Walkable reports whether a body could stand on c: a non-wall floor.
// It ignores occupants; Free adds that check.
func (g *Grid) Walkable(c Cell) bool { return g.At(LayerFloor, c) != FloorWall }

// Free reports whether a body may step onto c now: walkable and unoccupied.
func (g *Grid) Free(c Cell) bool {
	return g.At(LayerFloor, c) != FloorWall && g.At(LayerOccupant, c) == 0
}

// Dir is one of the eight compass directions a step can take.
type Dir uint8

// The eight directions, clockwise from north (y grows southwards).
const (
	North Dir = iota
	NorthEast
	East
	SouthEast
	South
	SouthWest
	West
	NorthWest
	NumDirs
)

var dirDX = [NumDirs]int32{0, 1, 1, 1, 0, -1, -1, -1}
var dirDY = [NumDirs]int32{-1, -1, 0, 1, 1, 1, 0, -1}

// Delta returns the (dx, dy) of a step in direction d. d must be < NumDirs.
func (d Dir) Delta() (dx, dy int32) { return dirDX[d], dirDY[d] }

// DirOf returns the direction of a move by (dx, dy), judged by the sign of
// each axis; keep for no move at all.
func DirOf(dx, dy int32, keep Dir) Dir {
	sx, sy := sign(dx), sign(dy)
	for d := North; d < NumDirs; d++ {
		if dirDX[d] == sx && dirDY[d] == sy {
			return d
		}
	}
	return keep
}

func sign(v int32) int32 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// Diagonal reports whether d is one of the four diagonal directions.
func (d Dir) Diagonal() bool { return d&1 == 1 }

// CheckStep tells whether a body on (x0, y0) may step onto the neighbouring
// square (x1, y1) now: OutcomeApplied if it may, OutcomeOutOfBounds off the
// grid, OutcomeBlocked onto a wall or a body or across a wall's corner (a
// diagonal step needs both orthogonal neighbours to be non-walls; A* plans
// with the same rule).
func (g *Grid) CheckStep(x0, y0, x1, y1 int32) Outcome {
	if !g.In(x1, y1) {
		return OutcomeOutOfBounds
	}
	if !g.Free(g.Cell(x1, y1)) {
		return OutcomeBlocked
	}
	if x1 != x0 && y1 != y0 && !cornersCut() && (!g.Walkable(g.Cell(x1, y0)) || !g.Walkable(g.Cell(x0, y1))) {
		return OutcomeBlocked
	}
	return OutcomeApplied
}
