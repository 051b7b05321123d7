package statics

import (
	"fmt"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// Mirror lays a static message (what [Map.Static] made on the server) onto
// m: a client's copy of the map, as far as it has been told. The cell's
// ground and walls are set from its floor runs, its objects replaced by
// the message's, and the grid marked as the server's is: so a client's
// engine answers a step as the server's does. kinds are the realm's item
// kinds (area_info's): a placed item stops bodies and sight as its kind's
// flags say. Squares of cells never mirrored stay as [New] left them.
func (m *Map) Mirror(st *wire.Static, kinds []wire.ItemKind) error {
	g := m.grid
	hc := int32(st.Cell)
	if st.Cell >= uint32(m.hash.Cells()) {
		return fmt.Errorf("statics: static of cell %d: the map has %d cells", st.Cell, m.hash.Cells())
	}
	size := m.hash.Size()
	x0, y0 := (hc%m.hash.CellsAcross())*size, (hc/m.hash.CellsAcross())*size
	x1, y1 := min(x0+size, g.W()), min(y0+size, g.H())
	n := int((x1 - x0) * (y1 - y0))
	total := 0
	for i := 1; i < len(st.Floor); i += 2 {
		total += int(st.Floor[i])
	}
	if len(st.Floor)%2 != 0 || total != n {
		return fmt.Errorf("statics: static of cell %d: its floor runs cover %d squares, the cell has %d", st.Cell, total, n)
	}
	for _, i := range m.cell[hc] { // the cell's old objects go
		if m.objects[i].Item != 0 {
			m.items--
		}
		m.objects[i] = Object{}
		m.free = append(m.free, i)
	}
	m.cell[hc] = m.cell[hc][:0]
	run, k := 0, 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			for run == 0 {
				run = int(st.Floor[k+1])
				k += 2
			}
			run--
			c := g.Cell(x, y)
			kind := uint8(st.Floor[k-2])
			m.ground[c], m.objAt[c] = kind, 0
			if m.floorAt != nil {
				m.floorAt[c] = 0
			}
			switch {
			case kind == wire.FloorWall:
				g.SetWall(c)
			case !content.FloorKind(kind).Walkable():
				g.Set(ecs.LayerFloor, c, ecs.FloorWall) // void and water: nothing stands there; light crosses
				g.Set(ecs.LayerSight, c, 1)
			default:
				g.Set(ecs.LayerFloor, c, ecs.FloorOpen)
				g.Set(ecs.LayerSight, c, 1)
			}
		}
	}
	for _, wo := range st.Objects {
		if wo.X < x0 || wo.X >= x1 || wo.Y < y0 || wo.Y >= y1 {
			return fmt.Errorf("statics: static of cell %d: object %d at (%d, %d) lies outside it", st.Cell, wo.ID, wo.X, wo.Y)
		}
		o := Object{ID: wo.ID, Kind: wo.Kind, X: wo.X, Y: wo.Y, Open: wo.State == 1, Text: wo.Text, Item: wo.Item}
		if wo.Item != 0 {
			for _, ik := range kinds {
				if ik.Code == wo.Item {
					o.Floor = ik.Slot == 1
					o.Solid, o.Opaque = ik.Flags&wire.ItemBlocks != 0, ik.Flags&wire.ItemBlocksSight != 0
					break
				}
			}
		}
		m.mirrorAdd(o)
	}
	m.version[hc] = st.Version
	m.gen++
	return nil
}

// mirrorAdd puts a mirrored object on its square, in its slot, keeping its
// id: Place's bookkeeping without choosing one.
func (m *Map) mirrorAdd(o Object) {
	var i int32
	if n := len(m.free); n > 0 {
		i = m.free[n-1]
		m.free = m.free[:n-1]
		m.objects[i] = o
	} else {
		m.objects = append(m.objects, o)
		i = int32(len(m.objects) - 1)
	}
	hc := m.hash.CellAt(o.X, o.Y)
	m.cell[hc] = append(m.cell[hc], i)
	if o.Item != 0 {
		m.items++
	}
	c := m.grid.Cell(o.X, o.Y)
	switch {
	case o.Floor:
		if m.floorAt == nil {
			m.floorAt = make([]int32, m.grid.Len())
		}
		m.floorAt[c] = i + 1
	case o.Kind == wire.ObjectPortal:
		m.objAt[c] = i + 1 // a portal blocks nothing
	default:
		m.mark(int(i))
	}
}
