package spatial

import (
	"fmt"

	"github.com/leyworks/ley/ecs"
)

// none terminates the intrusive lists and marks "not in the hash".
const none int32 = -1

// Hash is a spatial hash over a w x h grid with square hash cells of side
// size. Everything is indexed by entity ID (one idSlot each: next, prev,
// cell, square, entity, mark) or by hash cell (head, count, version); the
// slots grow when a larger ID is inserted and never shrink, so a steady
// state allocates nothing.
//
// A Hash belongs to one goroutine.
type Hash struct {
	w, h   int32
	size   int32
	cw, ch int32 // hash cells across and down

	head    []int32  // per hash cell: first entity ID, or none
	count   []int32  // per hash cell: entities in it
	version []uint32 // per hash cell: bumped on every change of content

	ids []idSlot // per ID
	n   int
}

// idSlot is what the hash knows of one entity ID, in one place: a body's
// move reads and writes its slot alone (and its hash cell's version),
// one cache line where a slice per field took five (bench/hostcost.sh).
type idSlot struct {
	ent        ecs.Entity // the entity
	next, prev int32      // list links
	cell       int32      // its hash cell, or none when absent
	square     ecs.Cell   // its square
	marked     bool       // kept at the front of its list
	_          [7]byte    // 32 bytes: two slots to a cache line
}

// New returns an empty hash for a w x h grid with hash cells of side size.
func New(w, h, size int) (*Hash, error) {
	if w < 1 || h < 1 || size < 1 {
		return nil, fmt.Errorf("spatial: %dx%d grid with hash cells of %d", w, h, size)
	}
	cw, ch := (w+size-1)/size, (h+size-1)/size
	s := &Hash{
		w: int32(w), h: int32(h), size: int32(size), cw: int32(cw), ch: int32(ch),
		head:    make([]int32, cw*ch),
		count:   make([]int32, cw*ch),
		version: make([]uint32, cw*ch),
	}
	for i := range s.head {
		s.head[i] = none
	}
	return s, nil
}

// Size is the side of a hash cell in squares.
func (s *Hash) Size() int32 { return s.size }

// Cells is the number of hash cells; they are numbered 0..Cells()-1,
// row by row.
func (s *Hash) Cells() int { return len(s.head) }

// CellsAcross is the number of hash cells in a row.
func (s *Hash) CellsAcross() int32 { return s.cw }

// Len is the number of entities in the hash.
func (s *Hash) Len() int { return s.n }

// CellOf returns the hash cell of square c of the grid.
func (s *Hash) CellOf(c ecs.Cell) int32 {
	x, y := int32(c)%s.w, int32(c)/s.w
	return (y/s.size)*s.cw + x/s.size
}

// CellAt returns the hash cell of square (x, y), which must be on the grid.
func (s *Hash) CellAt(x, y int32) int32 { return (y/s.size)*s.cw + x/s.size }

// Version returns hash cell hc's change counter: it is bumped whenever an
// entity enters, leaves or moves within the cell, and only then. It wraps
// around after 2^32 changes; compare for equality.
func (s *Hash) Version(hc int32) uint32 { return s.version[hc] }

// Count is the number of entities in hash cell hc.
func (s *Hash) Count(hc int32) int { return int(s.count[hc]) }

// First returns the ID of the first entity in hash cell hc, or -1 if it is
// empty. Marked entities come first. Iterate with Next:
//
//	for id := h.First(hc); id >= 0; id = h.Next(id) { e := h.Entity(id) ... }
//
// Do not insert, remove or move entities while iterating.
func (s *Hash) First(hc int32) int32 { return s.head[hc] }

// Next returns the ID after id in its hash cell, or -1 at the end.
func (s *Hash) Next(id int32) int32 { return s.ids[id].next }

// Entity returns the entity stored for id.
func (s *Hash) Entity(id int32) ecs.Entity { return s.ids[id].ent }

// Square returns the square recorded for id.
func (s *Hash) Square(id int32) ecs.Cell { return s.ids[id].square }

// Marked reports whether id is marked (kept at the front of its list).
func (s *Hash) Marked(id int32) bool { return s.ids[id].marked }

// HasID reports whether an entity with ID id is in the hash (Entity(id)
// returns it).
func (s *Hash) HasID(id int32) bool { return int(id) < len(s.ids) && s.ids[id].cell != none }

// Has reports whether e is in the hash.
func (s *Hash) Has(e ecs.Entity) bool {
	id := int(e.ID())
	return id < len(s.ids) && s.ids[id].cell != none && s.ids[id].ent == e
}

// CellsWithin appends to dst the hash cells that hold any square within r
// squares (Chebyshev distance) of (x, y), row by row, and returns it. r < 0
// appends every cell. It allocates only if dst is too small.
func (s *Hash) CellsWithin(x, y, r int32, dst []int32) []int32 {
	if r < 0 {
		for hc := range s.head {
			dst = append(dst, int32(hc))
		}
		return dst
	}
	x0, y0 := max(x-r, 0)/s.size, max(y-r, 0)/s.size
	x1, y1 := min(x+r, s.w-1)/s.size, min(y+r, s.h-1)/s.size
	if x+r < 0 || y+r < 0 || x-r >= s.w || y-r >= s.h {
		return dst
	}
	for cy := y0; cy <= y1; cy++ {
		for cx := x0; cx <= x1; cx++ {
			dst = append(dst, cy*s.cw+cx)
		}
	}
	return dst
}

// grow makes the slots hold id.
func (s *Hash) grow(id int) {
	for id >= len(s.ids) {
		s.ids = append(s.ids, idSlot{next: none, prev: none, cell: none, square: ecs.NoCell})
	}
}

// Insert puts e on square c. If e is in the hash already it is moved
// instead (so a spawn logged twice is harmless); another entity with e's
// ID (never removed) is replaced, unmarked. O(1); it allocates
// only when e's ID is the largest seen yet.
func (s *Hash) Insert(e ecs.Entity, c ecs.Cell) {
	id := int32(e.ID())
	s.grow(int(id))
	sl := &s.ids[id]
	if sl.cell != none {
		if sl.ent != e { // the ID was reused without a Remove: a new entity
			s.unlink(id)
			sl.marked = false
			sl.ent, sl.square = e, c
			s.link(id, s.CellOf(c))
			return
		}
		s.moveID(id, c)
		return
	}
	sl.ent = e
	sl.square = c
	s.link(id, s.CellOf(c))
	s.n++
}

// Remove takes e out of the hash; an absent e is ignored. O(1).
func (s *Hash) Remove(e ecs.Entity) {
	id := int32(e.ID())
	if int(id) >= len(s.ids) || s.ids[id].cell == none {
		return
	}
	s.unlink(id)
	sl := &s.ids[id]
	sl.square = ecs.NoCell
	sl.ent = ecs.Entity{}
	sl.marked = false
	s.n--
}

// Changed implements ecs.BodyIndex: a change of state other than the
// square is nothing to a spatial hash.
func (s *Hash) Changed(ecs.Entity) {}

// Move records that e now stands on square c (inserting it if absent).
// Moving onto the same square changes nothing. O(1).
func (s *Hash) Move(e ecs.Entity, c ecs.Cell) { s.Insert(e, c) }

func (s *Hash) moveID(id int32, c ecs.Cell) {
	sl := &s.ids[id]
	if sl.square == c {
		return
	}
	sl.square = c
	hc := s.CellOf(c)
	if hc == sl.cell {
		s.version[hc]++
		return
	}
	s.unlink(id)
	s.link(id, hc)
}

// Mark sets whether e is kept at the front of its hash cell's list (an
// emitter, say). Marking a square's order is no change of content: no
// version is bumped. e must be in the hash; otherwise nothing happens.
func (s *Hash) Mark(e ecs.Entity, on bool) {
	id := int32(e.ID())
	if !s.Has(e) || s.ids[id].marked == on {
		return
	}
	hc := s.ids[id].cell
	v := s.version[hc]
	s.unlink(id)
	s.ids[id].marked = on
	s.link(id, hc)
	s.version[hc] = v
}

// link puts id into hash cell hc: marked ones at the head, others right
// after the last marked one (at the head when there is none).
func (s *Hash) link(id, hc int32) {
	sl := &s.ids[id]
	sl.cell = hc
	s.count[hc]++
	s.version[hc]++
	after := none
	if !sl.marked {
		for p := s.head[hc]; p != none && s.ids[p].marked; p = s.ids[p].next {
			after = p
		}
	}
	if after == none {
		first := s.head[hc]
		sl.prev, sl.next = none, first
		if first != none {
			s.ids[first].prev = id
		}
		s.head[hc] = id
		return
	}
	nx := s.ids[after].next
	sl.prev, sl.next = after, nx
	s.ids[after].next = id
	if nx != none {
		s.ids[nx].prev = id
	}
}

func (s *Hash) unlink(id int32) {
	sl := &s.ids[id]
	hc := sl.cell
	p, n := sl.prev, sl.next
	if p != none {
		s.ids[p].next = n
	} else {
		s.head[hc] = n
	}
	if n != none {
		s.ids[n].prev = p
	}
	sl.prev, sl.next, sl.cell = none, none, none
	s.count[hc]--
	s.version[hc]++
}

// Check verifies that the hash agrees with Area a: every entity it holds
// is alive in a and stands on the square recorded for it (when it has a
// Position), every body of a is in it, and the counts add up. It walks
// everything; tests call it.
func (s *Hash) Check(a *ecs.Area) error {
	n := 0
	for hc := range s.head {
		count := int32(0)
		for id := s.head[hc]; id != none; id = s.ids[id].next {
			count++
			e := s.ids[id].ent
			if !a.Alive(e) {
				return fmt.Errorf("spatial: hash cell %d holds entity %d, which is dead", hc, id)
			}
			if s.ids[id].cell != int32(hc) {
				return fmt.Errorf("spatial: entity %d listed in hash cell %d but recorded in %d", id, hc, s.ids[id].cell)
			}
			if p, ok := a.PositionOf(e); ok && a.Grid.Cell(p.X, p.Y) != s.ids[id].square {
				return fmt.Errorf("spatial: entity %d stands on (%d,%d) but the hash has square %d", id, p.X, p.Y, s.ids[id].square)
			}
		}
		if count != s.count[hc] {
			return fmt.Errorf("spatial: hash cell %d lists %d entities, counts %d", hc, count, s.count[hc])
		}
		n += int(count)
	}
	if n != s.n {
		return fmt.Errorf("spatial: %d entities listed, Len %d", n, s.n)
	}
	var missing error
	a.EachBody(func(e ecs.Entity, p ecs.Position) bool {
		if !s.Has(e) {
			missing = fmt.Errorf("spatial: body %d at (%d,%d) is not in the hash", e.ID(), p.X, p.Y)
			return false
		}
		return true
	})
	return missing
}
