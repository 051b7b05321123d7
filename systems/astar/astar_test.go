package astar

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// bfs returns the fewest steps from `from` to `to` under the same step rules
// as the Searcher (unit costs), or -1.
func bfs(floor []int32, w, h, from, to int32, diagonal bool) int {
	dist := make([]int, len(floor))
	for i := range dist {
		dist[i] = -1
	}
	dist[from] = 0
	queue := []int32{from}
	dirs := 4
	if diagonal {
		dirs = 8
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		x, y := c%w, c/w
		for d := 0; d < dirs; d++ {
			nx, ny := x+dx8[d], y+dy8[d]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			nc := ny*w + nx
			if floor[nc] == 0 || dist[nc] >= 0 {
				continue
			}
			if d >= 4 && (floor[y*w+nx] == 0 || floor[ny*w+x] == 0) {
				continue
			}
			dist[nc] = dist[c] + 1
			queue = append(queue, nc)
		}
	}
	return dist[to]
}

func TestSearchMatchesBFS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.Int32Range(2, 24).Draw(t, "w")
		h := rapid.Int32Range(2, 24).Draw(t, "h")
		wallPct := rapid.IntRange(0, 45).Draw(t, "wallPct")
		diagonal := rapid.Bool().Draw(t, "diagonal")
		floor := make([]int32, w*h)
		for i := range floor {
			floor[i] = 1
			if rapid.IntRange(0, 99).Draw(t, fmt.Sprint("cell", i)) < wallPct {
				floor[i] = 0
			}
		}
		from := rapid.Int32Range(0, w*h-1).Draw(t, "from")
		to := rapid.Int32Range(0, w*h-1).Draw(t, "to")
		floor[from] = 1
		s := New(int(w), int(h))
		path, err := s.Search(Query{Floor: floor, From: from, To: to, Diagonal: diagonal}, nil)
		want := bfs(floor, w, h, from, to, diagonal)
		if want < 0 {
			if !errors.Is(err, ErrNoPath) {
				t.Fatalf("BFS finds no path, Search = %v, %v", path, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Search: %v; BFS finds %d steps", err, want)
		}
		if len(path) != want {
			t.Fatalf("path length = %d; want %d (BFS)", len(path), want)
		}
		// The path is a chain of legal single steps ending on the goal.
		prev := from
		for _, c := range path {
			ddx, ddy := c%w-prev%w, c/w-prev/w
			if ddx < -1 || ddx > 1 || ddy < -1 || ddy > 1 || (ddx != 0 && ddy != 0 && !diagonal) || floor[c] == 0 {
				t.Fatalf("illegal step %d -> %d", prev, c)
			}
			prev = c
		}
		if len(path) > 0 && path[len(path)-1] != to {
			t.Fatalf("path ends on %d; want %d", path[len(path)-1], to)
		}
	})
}

func TestSearchWalledOff(t *testing.T) {
	// A 5x5 map whose middle column is a wall: the right half is unreachable.
	w, h := int32(5), int32(5)
	floor := make([]int32, w*h)
	for i := range floor {
		floor[i] = 1
		if i%int(w) == 2 {
			floor[i] = 0
		}
	}
	s := New(int(w), int(h))
	if _, err := s.Search(Query{Floor: floor, From: 0, To: 4, Diagonal: true}, nil); !errors.Is(err, ErrNoPath) {
		t.Fatalf("err = %v; want ErrNoPath", err)
	}
	if _, err := s.Search(Query{Floor: floor, From: 0, To: 2}, nil); !errors.Is(err, ErrNoPath) {
		t.Fatalf("goal on a wall: err = %v; want ErrNoPath", err)
	}
}

func TestSearchBudgetAndOccupants(t *testing.T) {
	w, h := int32(32), int32(32)
	floor := make([]int32, w*h)
	for i := range floor {
		floor[i] = 1
	}
	s := New(int(w), int(h))
	if _, err := s.Search(Query{Floor: floor, From: 0, To: w*h - 1, Budget: 5}, nil); !errors.Is(err, ErrBudget) {
		t.Fatalf("err = %v; want ErrBudget", err)
	}
	// An occupant on the only corridor square blocks; the goal itself may be occupied.
	occ := make([]int32, w*h)
	for y := int32(0); y < h; y++ {
		floor[y*w+5] = 0
	}
	floor[10*w+5] = 1
	occ[10*w+5] = 7
	if _, err := s.Search(Query{Floor: floor, Occupant: occ, From: 0, To: 9}, nil); !errors.Is(err, ErrNoPath) {
		t.Fatalf("corridor occupied: err = %v; want ErrNoPath", err)
	}
	occ[9] = 3
	occ[10*w+5] = 0
	if _, err := s.Search(Query{Floor: floor, Occupant: occ, From: 0, To: 9}, nil); err != nil {
		t.Fatalf("occupied goal: err = %v; want a path", err)
	}
}

func TestSearchAllocatesNothingWarm(t *testing.T) {
	w, h := 64, 64
	floor := make([]int32, w*h)
	for i := range floor {
		floor[i] = 1
		if i%w == 30 && i/w != 50 {
			floor[i] = 0
		}
	}
	s := New(w, h)
	buf := make([]int32, 0, w*h)
	q := Query{Floor: floor, From: 0, To: int32(w*h - 1), Diagonal: true}
	if _, err := s.Search(q, buf); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		buf, _ = s.Search(q, buf[:0])
	})
	if allocs != 0 {
		t.Fatalf("allocs per warm search = %v; want 0", allocs)
	}
}

func ExampleSearcher_Search() {
	// 4x3 map, a wall at (1,0) and (1,1): walk round it from (0,0) to (2,0),
	// never cutting the wall's corners.
	floor := []int32{
		1, 0, 1, 1,
		1, 0, 1, 1,
		1, 1, 1, 1,
	}
	s := New(4, 3)
	path, err := s.Search(Query{Floor: floor, From: 0, To: 2, Diagonal: true}, nil)
	fmt.Println(path, err)
	// Output: [4 8 9 10 6 2] <nil>
}
