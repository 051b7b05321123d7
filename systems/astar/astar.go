package astar

import (
	"errors"
	"fmt"
)

// Sentinel answers of a search.
var (
	// ErrNoPath: the goal cannot be reached from the start.
	ErrNoPath = errors.New("astar: no path")
	// ErrBudget: the search expanded its budget of squares without reaching
	// the goal; a path may exist.
	ErrBudget = errors.New("astar: expansion budget exhausted")
)

var dx8 = [8]int32{0, 1, 0, -1, 1, 1, -1, -1}
var dy8 = [8]int32{-1, 0, 1, 0, -1, 1, 1, -1}

type node struct {
	f    int32
	cell int32
}

// Searcher runs A* searches on grids of one size, reusing its buffers.
type Searcher struct {
	w, h   int32
	g      []int32  // cost from the start, valid where seen == gen
	parent []int32  // previous square on the best path
	seen   []uint32 // generation stamp: avoids clearing g between searches
	closed []uint32
	gen    uint32
	open   []node // binary min-heap on f
	// Expanded is the number of squares the last search expanded.
	Expanded int
}

// New returns a Searcher for w x h grids.
func New(w, h int) *Searcher {
	n := w * h
	return &Searcher{
		w: int32(w), h: int32(h),
		g: make([]int32, n), parent: make([]int32, n),
		seen: make([]uint32, n), closed: make([]uint32, n),
		open: make([]node, 0, 256),
	}
}

// Query is one search's question.
type Query struct {
	// Floor is the grid's floor layer: 0 is a wall, n > 0 costs n to enter.
	Floor []int32
	// Occupant, when not nil, blocks every non-zero square but the goal.
	Occupant []int32
	// Avoid, when not nil, blocks every non-zero square but the goal too:
	// squares a path may end on but never cross (portals).
	Avoid []int32
	// From and To are the start and goal squares (y*w + x).
	From, To int32
	// Diagonal allows the four diagonal steps (cost as an orthogonal one).
	Diagonal bool
	// Budget caps the squares expanded; 0 means w*h.
	Budget int
}

// Search finds a cheapest path for q and appends its squares to dst in
// order, the start excluded and the goal included; From == To gives an
// empty path. It answers ErrNoPath or ErrBudget when it finds none.
func (s *Searcher) Search(q Query, dst []int32) ([]int32, error) {
	n := s.w * s.h
	if int32(len(q.Floor)) != n || (q.Occupant != nil && int32(len(q.Occupant)) != n) || (q.Avoid != nil && int32(len(q.Avoid)) != n) {
		return dst, fmt.Errorf("astar: layers of %d squares for a %dx%d searcher", len(q.Floor), s.w, s.h)
	}
	if q.From < 0 || q.From >= n || q.To < 0 || q.To >= n {
		return dst, fmt.Errorf("astar: square out of range (from %d, to %d, %d squares)", q.From, q.To, n)
	}
	if q.From == q.To {
		return dst, nil
	}
	if q.Floor[q.To] == 0 {
		return dst, ErrNoPath
	}
	budget := q.Budget
	if budget <= 0 {
		budget = int(n)
	}
	dirs := 4
	if q.Diagonal {
		dirs = 8
	}
	s.nextGen()
	gen := s.gen
	tx, ty := q.To%s.w, q.To/s.w
	s.open = s.open[:0]
	s.g[q.From], s.seen[q.From], s.parent[q.From] = 0, gen, -1
	s.push(node{f: s.h0(q.From, tx, ty, q.Diagonal), cell: q.From})
	s.Expanded = 0
	for len(s.open) > 0 {
		cur := s.pop()
		c := cur.cell
		if s.closed[c] == gen {
			continue
		}
		if c == q.To {
			return s.walkBack(q.From, q.To, dst), nil
		}
		s.closed[c] = gen
		s.Expanded++
		if s.Expanded > budget {
			return dst, ErrBudget
		}
		x, y := c%s.w, c/s.w
		for d := 0; d < dirs; d++ {
			nx, ny := x+dx8[d], y+dy8[d]
			if nx < 0 || ny < 0 || nx >= s.w || ny >= s.h {
				continue
			}
			nc := ny*s.w + nx
			cost := q.Floor[nc]
			if cost == 0 || s.closed[nc] == gen {
				continue
			}
			if q.Avoid != nil && q.Avoid[nc] != 0 && nc != q.To {
				continue
			}
			if q.Occupant != nil && q.Occupant[nc] != 0 && nc != q.To {
				continue
			}
			if d >= 4 && (q.Floor[y*s.w+nx] == 0 || q.Floor[ny*s.w+x] == 0) {
				continue // never cut a wall's corner
			}
			ng := s.g[c] + cost
			if s.seen[nc] == gen && ng >= s.g[nc] {
				continue
			}
			s.g[nc], s.seen[nc], s.parent[nc] = ng, gen, c
			s.push(node{f: ng + s.h0(nc, tx, ty, q.Diagonal), cell: nc})
		}
	}
	return dst, ErrNoPath
}

// h0 is the admissible heuristic: Chebyshev distance with diagonals,
// Manhattan without (every square costs at least 1).
func (s *Searcher) h0(c, tx, ty int32, diagonal bool) int32 {
	dx, dy := c%s.w-tx, c/s.w-ty
	if dx < 0 {
		dx = -dx
	}
	if dy < 0 {
		dy = -dy
	}
	if diagonal {
		return max(dx, dy)
	}
	return dx + dy
}

func (s *Searcher) walkBack(from, to int32, dst []int32) []int32 {
	start := len(dst)
	for c := to; c != from; c = s.parent[c] {
		dst = append(dst, c)
	}
	p := dst[start:]
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return dst
}

func (s *Searcher) nextGen() {
	s.gen++
	if s.gen == 0 { // wrapped: stale stamps could look current
		clear(s.seen)
		clear(s.closed)
		s.gen = 1
	}
}

func (s *Searcher) push(n node) {
	s.open = append(s.open, n)
	i := len(s.open) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s.open[p].f <= n.f {
			break
		}
		s.open[i] = s.open[p]
		i = p
	}
	s.open[i] = n
}

func (s *Searcher) pop() node {
	top := s.open[0]
	last := len(s.open) - 1
	n := s.open[last]
	s.open = s.open[:last]
	if last == 0 {
		return top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		if r := l + 1; r < last && s.open[r].f < s.open[l].f {
			l = r
		}
		if s.open[l].f >= n.f {
			break
		}
		s.open[i] = s.open[l]
		i = l
	}
	s.open[i] = n
	return top
}
