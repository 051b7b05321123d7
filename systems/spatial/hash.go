package spatial

import (
	"fmt"

	"github.com/leyworks/ley/ecs"
)

// none terminates the intrusive lists and marks "not in the hash".
const none int32 = -1

// Hash is a spatial hash over a w x h grid with square hash cells of side
// size. Everything is indexed by entity ID (next, prev, cell, square,
// entity) or by hash cell (head, count, version); the per-ID slices grow
// when a larger ID is inserted and never shrink, so a steady state
// allocates nothing.
//
// A Hash belongs to one goroutine.
type Hash struct {
	w, h   int32
	size   int32
	cw, ch int32 // hash cells across and down

	head    []int32  // per hash cell: first entity ID, or none
	count   []int32  // per hash cell: entities in it
	version []uint32 // per hash cell: bumped on every change of content

	next, prev []int32      // per ID: list links
	cell       []int32      // per ID: its hash cell, or none when absent
	square     []ecs.Cell   // per ID: its square
	ent        []ecs.Entity // per ID: the entity
	marked     []bool       // per ID: kept at the front of its list
	n          int
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
func (s *Hash) Next(id int32) int32 { return s.next[id] }

// Entity returns the entity stored for id.
func (s *Hash) Entity(id int32) ecs.Entity { return s.ent[id] }

// Square returns the square recorded for id.
func (s *Hash) Square(id int32) ecs.Cell { return s.square[id] }

// Marked reports whether id is marked (kept at the front of its list).
func (s *Hash) Marked(id int32) bool { return s.marked[id] }

// HasID reports whether an entity with ID id is in the hash (Entity(id)
// returns it).
func (s *Hash) HasID(id int32) bool { return int(id) < len(s.cell) && s.cell[id] != none }

// Has reports whether e is in the hash.
func (s *Hash) Has(e ecs.Entity) bool {
	id := int(e.ID())
	return id < len(s.cell) && s.cell[id] != none && s.ent[id] == e
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

// grow makes the per-ID slices hold id.
func (s *Hash) grow(id int) {
	for id >= len(s.cell) {
		s.next = append(s.next, none)
		s.prev = append(s.prev, none)
		s.cell = append(s.cell, none)
		s.square = append(s.square, ecs.NoCell)
		s.ent = append(s.ent, ecs.Entity{})
		s.marked = append(s.marked, false)
	}
}

// Insert puts e on square c. If e is in the hash already it is moved
// instead (so a spawn logged twice is harmless); another entity with e's
// ID (never removed) is replaced, unmarked. O(1); it allocates
// only when e's ID is the largest seen yet.
func (s *Hash) Insert(e ecs.Entity, c ecs.Cell) {
	id := int32(e.ID())
	s.grow(int(id))
	if s.cell[id] != none {
		if s.ent[id] != e { // the ID was reused without a Remove: a new entity
			s.unlink(id)
			s.marked[id] = false
			s.ent[id], s.square[id] = e, c
			s.link(id, s.CellOf(c))
			return
		}
		s.moveID(id, c)
		return
	}
	s.ent[id] = e
	s.square[id] = c
	s.link(id, s.CellOf(c))
	s.n++
}

// Remove takes e out of the hash; an absent e is ignored. O(1).
func (s *Hash) Remove(e ecs.Entity) {
	id := int32(e.ID())
	if int(id) >= len(s.cell) || s.cell[id] == none {
		return
	}
	s.unlink(id)
	s.square[id] = ecs.NoCell
	s.ent[id] = ecs.Entity{}
	s.marked[id] = false
	s.n--
}

// Changed implements ecs.BodyIndex: a change of state other than the
// square is nothing to a spatial hash.
func (s *Hash) Changed(ecs.Entity) {}

// Move records that e now stands on square c (inserting it if absent).
// Moving onto the same square changes nothing. O(1).
func (s *Hash) Move(e ecs.Entity, c ecs.Cell) { s.Insert(e, c) }

func (s *Hash) moveID(id int32, c ecs.Cell) {
	if s.square[id] == c {
		return
	}
	s.square[id] = c
	hc := s.CellOf(c)
	if hc == s.cell[id] {
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
	if !s.Has(e) || s.marked[id] == on {
		return
	}
	hc := s.cell[id]
	v := s.version[hc]
	s.unlink(id)
	s.marked[id] = on
	s.link(id, hc)
	s.version[hc] = v
}

// link puts id into hash cell hc: marked ones at the head, others right
// after the last marked one (at the head when there is none).
func (s *Hash) link(id, hc int32) {
	s.cell[id] = hc
	s.count[hc]++
	s.version[hc]++
	after := none
	if !s.marked[id] {
		for p := s.head[hc]; p != none && s.marked[p]; p = s.next[p] {
			after = p
		}
	}
	if after == none {
		first := s.head[hc]
		s.prev[id], s.next[id] = none, first
		if first != none {
			s.prev[first] = id
		}
		s.head[hc] = id
		return
	}
	nx := s.next[after]
	s.prev[id], s.next[id] = after, nx
	s.next[after] = id
	if nx != none {
		s.prev[nx] = id
	}
}

func (s *Hash) unlink(id int32) {
	hc := s.cell[id]
	p, n := s.prev[id], s.next[id]
	if p != none {
		s.next[p] = n
	} else {
		s.head[hc] = n
	}
	if n != none {
		s.prev[n] = p
	}
	s.prev[id], s.next[id], s.cell[id] = none, none, none
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
		for id := s.head[hc]; id != none; id = s.next[id] {
			count++
			e := s.ent[id]
			if !a.Alive(e) {
				return fmt.Errorf("spatial: hash cell %d holds entity %d, which is dead", hc, id)
			}
			if s.cell[id] != int32(hc) {
				return fmt.Errorf("spatial: entity %d listed in hash cell %d but recorded in %d", id, hc, s.cell[id])
			}
			if p, ok := a.PositionOf(e); ok && a.Grid.Cell(p.X, p.Y) != s.square[id] {
				return fmt.Errorf("spatial: entity %d stands on (%d,%d) but the hash has square %d", id, p.X, p.Y, s.square[id])
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
