package interest

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/fov"
)

// Line-of-sight interest (Areas whose rules say LineOfSight): a player is
// sent only what it can see. From its square the broadcaster casts its
// field of view (symmetric shadowcasting over the grid's sight layer, as
// far as the interest radius) and sorts the hash cells within reach:
//
//   - a cell it sees whole gets the shared path: the cell's records,
//     encoded once per round for every peer that sees it whole;
//   - a cell it sees in part gets a cell record of its own, with only the
//     entities that stand on squares it sees (encoded for this peer, every
//     round, never held in sync: these are the cells at the edge of its
//     sight, a few per player);
//   - a cell it does not see at all is not in its view: forgotten if held,
//     and its map (static) is not sent until it is seen.
//
// The field of view is cast again only when the player changed square or
// the map changed (a door: statics.Map.Generation); otherwise the last one
// holds.

// losView is a peer's last field of view, by hash cell.
type losView struct {
	at      ecs.Cell // the square it was cast from; NoCell: never cast
	ver     uint64   // the map's generation it was cast at
	castRnd uint64   // the round it was cast in
	cells   []int32  // hash cells with at least one square in sight
	masks   []uint64 // per entry of cells: words words of its squares in sight
}

// initLOS readies line-of-sight interest for the System's Area.
func (s *System) initLOS() error {
	g := s.a.Grid
	c, err := fov.New(g.Layer(ecs.LayerSight), int(g.W()), int(g.H()))
	if err != nil {
		return err
	}
	s.los, s.caster, s.fov = true, c, fov.NewView(g.Len())
	size := int(s.hash.Size())
	s.words = (size*size + 63) / 64
	n := s.hash.Cells()
	s.fullMask = make([]uint64, n*s.words)
	for hc := range n {
		x0, y0, x1, y1 := s.cellBounds(int32(hc))
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				i := int(y-y0)*size + int(x-x0)
				s.fullMask[hc*s.words+i/64] |= 1 << (i % 64)
			}
		}
	}
	return nil
}

// cellBounds is hash cell hc's squares: [x0, x1) x [y0, y1).
func (s *System) cellBounds(hc int32) (x0, y0, x1, y1 int32) {
	g := s.a.Grid
	size := s.hash.Size()
	x0, y0 = (hc%s.hash.CellsAcross())*size, (hc/s.hash.CellsAcross())*size
	return x0, y0, min(x0+size, g.W()), min(y0+size, g.H())
}

// sightCells sets v.cells to the hash cells the peer standing on (x, y)
// sees a square of, casting its field of view again if it moved or the
// sight layer changed since the last cast.
func (s *System) sightCells(v *View, x, y int32) {
	g := s.a.Grid
	here := g.Cell(x, y)
	lv := &v.los
	if gen := s.m.Generation(); lv.at != here || lv.ver != gen || len(lv.cells) == 0 {
		r := s.radius
		if r < 0 {
			r = max(g.W(), g.H())
		}
		s.caster.Compute(x, y, r, s.fov)
		lv.at, lv.ver, lv.castRnd = here, gen, s.rnd
		lv.cells, lv.masks = lv.cells[:0], lv.masks[:0]
		s.cellsBuf = s.hash.CellsWithin(x, y, r, s.cellsBuf[:0])
		size := int(s.hash.Size())
		for _, hc := range s.cellsBuf {
			at := len(lv.masks)
			for range s.words {
				lv.masks = append(lv.masks, 0)
			}
			any := false
			x0, y0, x1, y1 := s.cellBounds(hc)
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					if s.fov.Visible(int32(g.Cell(xx, yy))) {
						i := int(yy-y0)*size + int(xx-x0)
						lv.masks[at+i/64] |= 1 << (i % 64)
						any = true
					}
				}
			}
			if any {
				lv.cells = append(lv.cells, hc)
			} else {
				lv.masks = lv.masks[:at]
			}
		}
	}
	v.cells = append(v.cells[:0], lv.cells...)
}

// sightMask is the peer's mask of hash cell hc's squares in sight (hc is
// one of v.los.cells, at index i).
func (s *System) sightMask(v *View, i int) []uint64 {
	return v.los.masks[i*s.words : (i+1)*s.words]
}

// wholeInSight reports whether mask covers every square of hash cell hc.
func (s *System) wholeInSight(hc int32, mask []uint64) bool {
	full := s.fullMask[int(hc)*s.words : (int(hc)+1)*s.words]
	for i := range mask {
		if mask[i] != full[i] {
			return false
		}
	}
	return true
}

// appendSeen appends a cell record of hash cell hc holding only the
// entities on squares of mask (the peer's sight of the cell).
func (s *System) appendSeen(dst []byte, hc int32, mask []uint64) []byte {
	g := s.a.Grid
	h := s.hash
	size := h.Size()
	x0, y0, _, _ := s.cellBounds(hc)
	seen := func(sq ecs.Cell) bool {
		x, y := g.XY(sq)
		i := int(y-y0)*int(size) + int(x-x0)
		return mask[i/64]&(1<<(i%64)) != 0
	}
	n := 0
	for id := h.First(hc); id >= 0; id = h.Next(id) {
		if seen(h.Square(id)) {
			n++
		}
	}
	dst = wire.AppendCell(dst, uint32(hc), n)
	for id := h.First(hc); id >= 0; id = h.Next(id) {
		if sq := h.Square(id); seen(sq) {
			st := s.State(h.Entity(id), sq)
			dst = wire.AppendEntity(dst, &st)
		}
	}
	return dst
}
