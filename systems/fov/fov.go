package fov

import "fmt"

// View is a visibility buffer for one grid: Visible(c) reports whether
// square c was marked by the latest Compute into it. Marks are stamps, so
// a Compute costs the squares it reaches, not w*h.
type View struct {
	mark []uint32
	gen  uint32
}

// NewView returns a View for grids of n squares (w*h).
func NewView(n int) *View { return &View{mark: make([]uint32, n), gen: 1} }

// Visible reports whether square c was seen by the latest Compute.
func (v *View) Visible(c int32) bool { return v.mark[c] == v.gen }

// reset starts a new field of view.
func (v *View) reset() {
	v.gen++
	if v.gen == 0 { // wrapped: old stamps could look current
		clear(v.mark)
		v.gen = 1
	}
}

// Caster casts fields of view over a floor layer (0 a wall).
type Caster struct {
	floor []int32
	w, h  int32
}

// New returns a Caster over floor, the w x h grid's floor layer (aliased).
func New(floor []int32, w, h int) (*Caster, error) {
	if w < 1 || h < 1 || len(floor) != w*h {
		return nil, fmt.Errorf("fov: floor of %d squares for a %dx%d grid", len(floor), w, h)
	}
	return &Caster{floor: floor, w: int32(w), h: int32(h)}, nil
}

// frac is a slope num/den with den > 0.
type frac struct{ num, den int32 }

// quadrant transform: (depth, col) -> (x, y) offsets.
type quad struct{ dxd, dxc, dyd, dyc int32 }

// north, east, south, west, as in Ford's reference.
var quads = [4]quad{
	{0, 1, -1, 0}, // north: x = ox + col, y = oy - depth
	{1, 0, 0, 1},  // east:  x = ox + depth, y = oy + col
	{0, 1, 1, 0},  // south: x = ox + col, y = oy + depth
	{-1, 0, 0, 1}, // west:  x = ox - depth, y = oy + col
}

type cast struct {
	c      *Caster
	v      *View
	ox, oy int32
	r, r2  int32
	q      quad
}

// Compute marks in v the squares square (ox, oy) sees within radius r
// (see the package doc for the exact rule). The origin must be on the
// grid. Cost: O(r*r) squares; it allocates nothing (the recursion is on
// the goroutine stack, at most r deep).
func (c *Caster) Compute(ox, oy, r int32, v *View) {
	v.reset()
	if ox < 0 || oy < 0 || ox >= c.w || oy >= c.h {
		return
	}
	v.mark[oy*c.w+ox] = v.gen
	if r <= 0 {
		return
	}
	k := cast{c: c, v: v, ox: ox, oy: oy, r: r, r2: r * r}
	for _, q := range quads {
		k.q = q
		k.scan(1, frac{-1, 1}, frac{1, 1})
	}
}

// at maps (depth, col) to a square, or -1 off the grid.
func (k *cast) at(depth, col int32) int32 {
	x := k.ox + k.q.dxd*depth + k.q.dxc*col
	y := k.oy + k.q.dyd*depth + k.q.dyc*col
	if x < 0 || y < 0 || x >= k.c.w || y >= k.c.h {
		return -1
	}
	return y*k.c.w + x
}

func (k *cast) wall(sq int32) bool { return sq < 0 || k.c.floor[sq] == 0 }

func (k *cast) reveal(sq, depth, col int32) {
	if sq >= 0 && depth*depth+col*col <= k.r2 {
		k.v.mark[sq] = k.v.gen
	}
}

// floorDiv is floor(a / b) for b > 0.
func floorDiv(a, b int32) int32 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// scan walks one row of the quadrant (Ford's scan), recursing into the
// rows behind it.
func (k *cast) scan(depth int32, start, end frac) {
	if depth > k.r {
		return
	}
	// min col = round_ties_up(depth*start) = floor(depth*s + 1/2);
	// max col = round_ties_down(depth*end) = ceil(depth*e - 1/2).
	minCol := floorDiv(2*depth*start.num+start.den, 2*start.den)
	maxCol := -floorDiv(-(2*depth*end.num - end.den), 2*end.den)
	prev := 0 // 0 none, 1 wall, 2 floor
	for col := minCol; col <= maxCol; col++ {
		sq := k.at(depth, col)
		isWall := k.wall(sq)
		// symmetric: col >= depth*start and col <= depth*end.
		if isWall || (col*start.den >= depth*start.num && col*end.den <= depth*end.num) {
			k.reveal(sq, depth, col)
		}
		if prev == 1 && !isWall {
			start = frac{2*col - 1, 2 * depth}
		}
		if prev == 2 && isWall {
			k.scan(depth+1, start, frac{2*col - 1, 2 * depth})
		}
		if isWall {
			prev = 1
		} else {
			prev = 2
		}
	}
	if prev == 2 {
		k.scan(depth+1, start, end)
	}
}

// LineOfSight reports whether the ray from the center of (ax, ay) to the
// center of (bx, by) is unobstructed by the package doc's rule (the end
// squares themselves are not tested). For a floor square b within the
// radius it equals Compute's Visible(b), so it is symmetric between floor
// squares. Both squares must be on the grid. Cost: O(max(|dx|, |dy|)).
func (c *Caster) LineOfSight(ax, ay, bx, by int32) bool {
	dx, dy := bx-ax, by-ay
	adx, ady := abs(dx), abs(dy)
	if adx >= ady {
		return c.ray(ax, ay, dx, dy, adx, 1, 0)
	}
	return c.ray(ax, ay, dy, dx, ady, 0, 1)
}

// ray walks the major axis (unit step along x when xMajor) and checks, at
// each intermediate depth, the squares the ray crosses: the one whose
// middle segment it crosses strictly inside must be floor; at a meeting
// point of two segments the shadowcaster's row bounds decide (see the
// package doc): hugLo and hugHi record that the ray runs along the edge of
// a wall on its low or high side.
func (c *Caster) ray(ax, ay, dmaj, dmin, n int32, xMajor, yMajor int32) bool {
	smaj := int32(1)
	if dmaj < 0 {
		smaj = -1
	}
	hugLo, hugHi := false, false
	for d := int32(1); d < n; d++ {
		// The ray crosses row d at minor offset dmin*d/n.
		twice := 2 * dmin * d
		m := floorDiv(twice+n, 2*n) // round half up
		if twice%n != 0 || (twice/n)%2 == 0 {
			if c.opaque(ax, ay, smaj*d, m, xMajor, yMajor) {
				return false
			}
			continue
		}
		// Exactly where squares m-1 and m meet.
		lo := c.opaque(ax, ay, smaj*d, m-1, xMajor, yMajor)
		hi := c.opaque(ax, ay, smaj*d, m, xMajor, yMajor)
		switch {
		case hugLo && hugHi:
			return false
		case hugLo:
			if hi {
				return false
			}
		case hugHi:
			if lo {
				return false
			}
		case lo && hi:
			return false
		case lo:
			hugLo = true
		case hi:
			hugHi = true
		}
	}
	return true
}

// opaque reports whether the square at major offset maj and minor offset
// mnr from (ax, ay) is a wall or off the grid.
func (c *Caster) opaque(ax, ay, maj, mnr, xMajor, yMajor int32) bool {
	x := c.ax(ax, maj, mnr, xMajor)
	y := c.ax(ay, maj, mnr, yMajor)
	return x < 0 || y < 0 || x >= c.w || y >= c.h || c.floor[y*c.w+x] == 0
}

// ax gives one coordinate: along the major axis when major is 1, along the
// minor one otherwise.
func (c *Caster) ax(o, maj, mnr, major int32) int32 {
	if major == 1 {
		return o + maj
	}
	return o + mnr
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
