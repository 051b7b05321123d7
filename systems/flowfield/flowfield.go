package flowfield

import (
	"fmt"
	"math"
)

// Unreached is the distance of a square no walk reaches the target from
// (a wall, or a square walled off).
const Unreached int32 = math.MaxInt32

// NoDir is the direction of the target's own square and of unreached ones.
const NoDir uint8 = 255

// NumDirs is the number of step directions, numbered like ecs.Dir: North = 0,
// then clockwise; odd ones are diagonal.
const NumDirs = 8

// DX and DY are the offsets of a step in each direction (y grows southwards),
// the same as ecs.Dir.Delta.
var (
	DX = [NumDirs]int32{0, 1, 1, 1, 0, -1, -1, -1}
	DY = [NumDirs]int32{-1, -1, 0, 1, 1, 1, 0, -1}
)

// Field is one target's flow field on a w x h grid: Dist[c] is the cost of
// the cheapest walk from square c to Target (Unreached if none), Dir[c] the
// direction of its first step (NoDir on the target and unreached squares).
// Squares are indexed y*w + x. Stepping Dir[c] from c always lands on a
// square with a smaller Dist.
//
// A Field is plain data; the Registry owns the fields it hands out.
type Field struct {
	W, H   int32
	Target int32
	Dist   []int32
	Dir    []uint8

	sw *sweep // Sweep's scratch, kept between sweeps
}

// NewField returns a w x h field with nothing reached. It allocates
// 5*w*h bytes.
func NewField(w, h int) *Field {
	return &Field{W: int32(w), H: int32(h), Target: -1, Dist: make([]int32, w*h), Dir: make([]uint8, w*h)}
}

// Reached reports whether square c has a way to the target.
func (f *Field) Reached(c int32) bool { return f.Dist[c] != Unreached }

// Sweep fills f with the field of target over floor (0 a wall, n > 0 the
// cost to enter), in one go. diagonal allows the four diagonal steps. A
// target off the grid or on a wall reaches nothing. It allocates only to
// grow f's open set, which it keeps for the next sweep; the cost is O(n)
// for n reachable squares when no cost exceeds 1,024 (a bucket queue),
// O(n log n) otherwise (a heap).
func (f *Field) Sweep(floor []int32, target int32, diagonal bool) error {
	if len(floor) != len(f.Dist) {
		return fmt.Errorf("flowfield: floor of %d squares for a %dx%d field", len(floor), f.W, f.H)
	}
	if f.sw == nil {
		f.sw = new(sweep)
	}
	f.sw.start(f, floor, target)
	f.sw.run(f, floor, diagonal, -1)
	return nil
}

// maxBucketCost bounds the floor costs the bucket queue handles; a floor
// with a dearer square is swept with the binary heap instead.
const maxBucketCost = 1024

// sweep is the state of one resumable Dijkstra sweep. Floor costs are small
// integers, so the open set is a bucket queue (Dial's algorithm: a ring of
// maxCost+1 stacks indexed by distance), O(1) per push and pop; floors with
// a cost above maxBucketCost use a binary min-heap of dist<<32 | square.
// Both delete lazily: a popped square whose distance improved since is
// skipped.
type sweep struct {
	buckets [][]int32
	k       int32 // ring size in use: max cost + 1; 0 when the heap is used
	cur     int32 // the distance being expanded
	curIdx  int32 // cur % k, kept without dividing
	queued  int   // squares in the buckets
	heap    []uint64
	reach   int32 // the farthest walking cost expanded to (0: no bound); set after start
}

// start resets f and seeds the open set with target.
func (s *sweep) start(f *Field, floor []int32, target int32) {
	for i := range f.Dist {
		f.Dist[i] = Unreached
	}
	for i := range f.Dir {
		f.Dir[i] = NoDir
	}
	f.Target = target
	s.heap = s.heap[:0]
	for i := range s.buckets {
		s.buckets[i] = s.buckets[i][:0]
	}
	s.cur, s.curIdx, s.queued, s.reach = 0, 0, 0, 0
	if target < 0 || int(target) >= len(floor) || floor[target] == 0 {
		return
	}
	maxCost := int32(0)
	for _, v := range floor {
		maxCost = max(maxCost, v)
	}
	s.k = 0
	if maxCost <= maxBucketCost {
		s.k = maxCost + 1
		for int32(len(s.buckets)) < s.k {
			s.buckets = append(s.buckets, make([]int32, 0, 64))
		}
	}
	f.Dist[target] = 0
	s.add(0, target)
}

func (s *sweep) add(d, c int32) {
	if s.k == 0 {
		s.push(uint64(d)<<32 | uint64(c))
		return
	}
	// d - cur <= max cost < k: one conditional subtraction wraps the ring.
	i := s.curIdx + d - s.cur
	if i >= s.k {
		i -= s.k
	}
	b := &s.buckets[i]
	*b = append(*b, c)
	s.queued++
}

// next takes the open square with the smallest distance.
func (s *sweep) next() (c, d int32, ok bool) {
	if s.k == 0 {
		if len(s.heap) == 0 {
			return 0, 0, false
		}
		k := s.pop()
		return int32(uint32(k)), int32(k >> 32), true
	}
	for s.queued > 0 {
		b := &s.buckets[s.curIdx]
		if n := len(*b); n > 0 {
			c = (*b)[n-1]
			*b = (*b)[:n-1]
			s.queued--
			return c, s.cur, true
		}
		s.cur++
		if s.curIdx++; s.curIdx == s.k {
			s.curIdx = 0
		}
	}
	return 0, 0, false
}

// run expands up to limit squares (all when limit < 0) and reports the
// number expanded and whether the sweep is complete.
func (s *sweep) run(f *Field, floor []int32, diagonal bool, limit int) (int, bool) {
	w, h := f.W, f.H
	step := int32(2)
	if diagonal {
		step = 1
	}
	dist, dir := f.Dist, f.Dir
	var off [NumDirs]int32 // square offsets of the eight steps
	for k := range off {
		off[k] = DY[k]*w + DX[k]
	}
	n := 0
	for {
		if n == limit {
			return n, s.k == 0 && len(s.heap) == 0 || s.k != 0 && s.queued == 0
		}
		c, d, ok := s.next()
		if !ok {
			return n, true
		}
		if d != dist[c] {
			continue // a stale entry: c was reached cheaper since
		}
		n++
		nd := d + floor[c] // a neighbour's walk enters c
		if s.reach > 0 && nd > s.reach {
			continue // past the field's reach: its neighbours stay unreached
		}
		x, y := c%w, c/w
		if x > 0 && y > 0 && x < w-1 && y < h-1 {
			// Inside the border: no coordinate checks, offsets only.
			for k := int32(0); k < NumDirs; k += step {
				nc := c + off[k&7]
				if floor[nc] == 0 || dist[nc] <= nd {
					continue
				}
				// A diagonal's orthogonal neighbours are the steps k-1, k+1.
				if k&1 == 1 && (floor[c+off[(k-1)&7]] == 0 || floor[c+off[(k+1)&7]] == 0) {
					continue // never cut a wall's corner
				}
				dist[nc] = nd
				dir[nc] = uint8((k + 4) & 7) // from nc back towards c
				s.add(nd, nc)
			}
			continue
		}
		for k := int32(0); k < NumDirs; k += step {
			nx, ny := x+DX[k], y+DY[k]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			nc := ny*w + nx
			if floor[nc] == 0 || dist[nc] <= nd {
				continue
			}
			if k&1 == 1 && (floor[y*w+nx] == 0 || floor[ny*w+x] == 0) {
				continue // never cut a wall's corner
			}
			dist[nc] = nd
			dir[nc] = uint8((k + 4) & 7) // from nc back towards c
			s.add(nd, nc)
		}
	}
}

func (s *sweep) push(k uint64) {
	s.heap = append(s.heap, k)
	hp := s.heap
	i := len(hp) - 1
	for i > 0 {
		p := (i - 1) / 2
		if hp[p] <= k {
			break
		}
		hp[i] = hp[p]
		i = p
	}
	hp[i] = k
}

func (s *sweep) pop() uint64 {
	hp := s.heap
	top := hp[0]
	last := len(hp) - 1
	k := hp[last]
	s.heap = hp[:last]
	if last == 0 {
		return top
	}
	hp = hp[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		if r := l + 1; r < last && hp[r] < hp[l] {
			l = r
		}
		if hp[l] >= k {
			break
		}
		hp[i] = hp[l]
		i = l
	}
	hp[i] = k
	return top
}
