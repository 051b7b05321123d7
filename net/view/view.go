package view

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/leyworks/ley/net/wire"
)

// Errors of View.Apply: the frame broke the protocol. They never leave the
// view half-updated in a way that hides them; a client that gets one
// should drop the view and join again.
var (
	// ErrNoAreaInfo: a snapshot or static arrived before area_info.
	ErrNoAreaInfo = errors.New("view: no area_info yet")
	// ErrUnknownEntity: a step, position, state or gone record names an
	// entity the view does not hold.
	ErrUnknownEntity = errors.New("view: record for an entity the view does not hold")
	// ErrBadCell: a cell number beyond the Area's cells.
	ErrBadCell = errors.New("view: cell beyond the area")
	// ErrOffGrid: an entity placed or stepped off the grid.
	ErrOffGrid = errors.New("view: entity off the grid")
)

// View is one client's view of an Area, kept exactly as docs/protocol.md
// says a client keeps it: the Area's geometry and rules from area_info, the
// map of each cell from static, who is there from presence, and the
// entities from the snapshots' records. A View belongs to one goroutine.
type View struct {
	// Info is the last area_info; nil before one.
	Info *wire.AreaInfo
	// Tick and AckSeq are the last snapshot's.
	Tick   uint64
	AckSeq uint32
	// Entities are the entities in view, by id.
	Entities map[uint32]wire.EntityState
	// Held are the cells the view holds (in view at the last snapshot).
	Held map[uint32]bool
	// Statics are the cells' maps, by cell.
	Statics map[uint32]*wire.Static
	// Players are the bound players' names, by entity (the last presence).
	Players map[uint32]string

	across uint32 // hash cells in a row
}

// New returns an empty view.
func New() *View {
	return &View{Entities: map[uint32]wire.EntityState{}, Held: map[uint32]bool{}, Statics: map[uint32]*wire.Static{}, Players: map[uint32]string{}}
}

// Apply applies one server message to the view; messages that do not
// change it (errors, intent results...) are ignored.
func (v *View) Apply(m wire.Message) error {
	switch m := m.(type) {
	case *wire.AreaInfo:
		if m.CellSize == 0 || m.W == 0 || m.H == 0 {
			return fmt.Errorf("view: area_info with size %dx%d and cells of %d", m.W, m.H, m.CellSize)
		}
		v.Info = m
		v.across = (m.W + uint32(m.CellSize) - 1) / uint32(m.CellSize)
	case *wire.Static:
		if v.Info == nil {
			return ErrNoAreaInfo
		}
		if m.Cell >= v.cells() {
			return fmt.Errorf("%w: static for cell %d", ErrBadCell, m.Cell)
		}
		v.Statics[m.Cell] = m
	case *wire.Presence:
		clear(v.Players)
		for _, p := range m.Players {
			v.Players[p.Entity] = p.Name
		}
	case *wire.Snapshot:
		return v.ApplySnapshot(m)
	case *wire.ShortSnapshot:
		// Its tick and ack_seq depend on the connection's snapshot before
		// it, which a View does not track across connections.
		return errors.New("view: a short snapshot: expand it first (wire.Stream, or client.Frame.Decode)")
	}
	return nil
}

// cells is the Area's number of hash cells.
func (v *View) cells() uint32 {
	cs := uint32(v.Info.CellSize)
	return v.across * ((v.Info.H + cs - 1) / cs)
}

// CellOf returns the hash cell of square (x, y).
func (v *View) CellOf(x, y int32) uint32 {
	cs := int32(v.Info.CellSize)
	return uint32(y/cs)*v.across + uint32(x/cs)
}

func (v *View) onGrid(x, y int32) bool {
	return x >= 0 && y >= 0 && uint32(x) < v.Info.W && uint32(y) < v.Info.H
}

// ApplySnapshot applies a snapshot: a reset drops the view first; the
// records apply in order; then every entity standing in a cell the view
// does not hold is dropped.
func (v *View) ApplySnapshot(s *wire.Snapshot) error {
	if v.Info == nil {
		return ErrNoAreaInfo
	}
	if s.Flags&wire.SnapshotReset != 0 {
		clear(v.Entities)
		clear(v.Held)
	}
	v.Tick, v.AckSeq = s.Tick, s.AckSeq
	r := wire.RecordReader{B: s.Records}
	var rec wire.Record
	for r.Next(&rec) {
		if err := v.record(&rec); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	for id, e := range v.Entities {
		if !v.Held[v.CellOf(e.X, e.Y)] {
			delete(v.Entities, id)
		}
	}
	return nil
}

func (v *View) record(rec *wire.Record) error {
	switch rec.Op {
	case wire.OpStep:
		e, ok := v.Entities[rec.ID]
		if !ok {
			return fmt.Errorf("%w: step of %d", ErrUnknownEntity, rec.ID)
		}
		dx, dy := rec.Dir.Delta()
		e.X, e.Y, e.Facing = e.X+dx, e.Y+dy, rec.Dir
		if !v.onGrid(e.X, e.Y) {
			return fmt.Errorf("%w: %d stepped to (%d,%d)", ErrOffGrid, rec.ID, e.X, e.Y)
		}
		v.Entities[rec.ID] = e
	case wire.OpPos:
		e, ok := v.Entities[rec.ID]
		if !ok {
			return fmt.Errorf("%w: position of %d", ErrUnknownEntity, rec.ID)
		}
		if !v.onGrid(rec.X, rec.Y) {
			return fmt.Errorf("%w: %d placed on (%d,%d)", ErrOffGrid, rec.ID, rec.X, rec.Y)
		}
		e.X, e.Y = rec.X, rec.Y
		v.Entities[rec.ID] = e
	case wire.OpGone:
		if _, ok := v.Entities[rec.ID]; !ok {
			return fmt.Errorf("%w: gone of %d", ErrUnknownEntity, rec.ID)
		}
		delete(v.Entities, rec.ID)
	case wire.OpState:
		e, ok := v.Entities[rec.ID]
		if !ok {
			return fmt.Errorf("%w: state of %d", ErrUnknownEntity, rec.ID)
		}
		e.HP, e.Flags, e.Facing = rec.HP, rec.Flags, rec.Facing
		v.Entities[rec.ID] = e
	case wire.OpEnter:
		if !v.onGrid(rec.Entity.X, rec.Entity.Y) {
			return fmt.Errorf("%w: %d entered on (%d,%d)", ErrOffGrid, rec.Entity.ID, rec.Entity.X, rec.Entity.Y)
		}
		v.Entities[rec.Entity.ID] = rec.Entity
	case wire.OpCell:
		if rec.Cell >= v.cells() {
			return fmt.Errorf("%w: cell %d", ErrBadCell, rec.Cell)
		}
		v.dropCell(rec.Cell)
		v.Held[rec.Cell] = true
	case wire.OpForget:
		if rec.Cell >= v.cells() {
			return fmt.Errorf("%w: forget of cell %d", ErrBadCell, rec.Cell)
		}
		v.dropCell(rec.Cell)
		delete(v.Held, rec.Cell)
	}
	return nil
}

func (v *View) dropCell(c uint32) {
	for id, e := range v.Entities {
		if v.CellOf(e.X, e.Y) == c {
			delete(v.Entities, id)
		}
	}
}

// Sorted returns the entities in view ordered by id, for comparisons.
func (v *View) Sorted() []wire.EntityState {
	out := make([]wire.EntityState, 0, len(v.Entities))
	for _, id := range slices.Sorted(maps.Keys(v.Entities)) {
		out = append(out, v.Entities[id])
	}
	return out
}

// Floor returns the floor kind of square (x, y) as the view's map of its
// cell says (ok is false before that cell's static arrived, or outside the
// Area).
func (v *View) Floor(x, y int32) (kind uint8, ok bool) {
	st, x0, y0, cw, found := v.staticOf(x, y)
	if !found {
		return 0, false
	}
	i := uint32((y-y0)*cw + (x - x0)) // the square's place in the cell, row by row
	for j := 0; j+1 < len(st.Floor); j += 2 {
		if i < st.Floor[j+1] {
			return uint8(st.Floor[j]), true
		}
		i -= st.Floor[j+1]
	}
	return 0, false
}

// ObjectAt returns the static object on square (x, y), if the view's map
// of its cell has one.
func (v *View) ObjectAt(x, y int32) (wire.Object, bool) {
	st, _, _, _, found := v.staticOf(x, y)
	if !found {
		return wire.Object{}, false
	}
	for _, o := range st.Objects {
		if o.X == x && o.Y == y {
			return o, true
		}
	}
	return wire.Object{}, false
}

// staticOf finds the static of (x, y)'s cell: its map, the cell's top
// left square and its width in squares (narrower at the right edge).
func (v *View) staticOf(x, y int32) (st *wire.Static, x0, y0, w int32, ok bool) {
	if v.Info == nil || v.Info.CellSize == 0 || x < 0 || y < 0 || uint32(x) >= v.Info.W || uint32(y) >= v.Info.H {
		return nil, 0, 0, 0, false
	}
	size := int32(v.Info.CellSize)
	across := (int32(v.Info.W) + size - 1) / size
	cell := uint32((y/size)*across + x/size)
	st, ok = v.Statics[cell]
	x0, y0 = (x/size)*size, (y/size)*size
	return st, x0, y0, min(size, int32(v.Info.W)-x0), ok
}
