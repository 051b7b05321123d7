package fov

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

func drawMap(t *rapid.T) (floor []int32, w, h int32) {
	w = rapid.Int32Range(1, 24).Draw(t, "w")
	h = rapid.Int32Range(1, 24).Draw(t, "h")
	pct := rapid.IntRange(0, 45).Draw(t, "wallPct")
	floor = make([]int32, w*h)
	for i := range floor {
		floor[i] = 1
		if rapid.IntRange(0, 99).Draw(t, fmt.Sprint("wall", i)) < pct {
			floor[i] = 0
		}
	}
	return floor, w, h
}

// TestSymmetric: for every pair of floor squares a, b within the radius of
// each other, a sees b iff b sees a.
func TestSymmetric(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		floor, w, h := drawMap(t)
		r := rapid.Int32Range(1, 30).Draw(t, "r")
		c, err := New(floor, int(w), int(h))
		if err != nil {
			t.Fatal(err)
		}
		n := w * h
		seen := make([][]bool, n)
		v := NewView(int(n))
		for a := int32(0); a < n; a++ {
			if floor[a] == 0 {
				continue
			}
			c.Compute(a%w, a/w, r, v)
			seen[a] = make([]bool, n)
			for b := int32(0); b < n; b++ {
				seen[a][b] = v.Visible(b)
			}
		}
		for a := int32(0); a < n; a++ {
			for b := int32(0); b < n; b++ {
				if floor[a] == 0 || floor[b] == 0 {
					continue
				}
				if seen[a][b] != seen[b][a] {
					t.Fatalf("(%d,%d) sees (%d,%d) = %v; the reverse = %v", a%w, a/w, b%w, b/w, seen[a][b], seen[b][a])
				}
			}
		}
	})
}

// TestMatchesRay compares Compute with the ray rule of the package doc on
// the squares where the algorithm defines visibility by that rule: floor
// squares within the radius, the origin excluded (walls are "expansive",
// not compared). The reference walks the ray with exact rationals over
// every column near it, independently of Compute's scan; LineOfSight must
// agree too.
func TestMatchesRay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		floor, w, h := drawMap(t)
		r := rapid.Int32Range(1, 30).Draw(t, "r")
		c, _ := New(floor, int(w), int(h))
		ox := rapid.Int32Range(0, w-1).Draw(t, "ox")
		oy := rapid.Int32Range(0, h-1).Draw(t, "oy")
		v := NewView(int(w * h))
		c.Compute(ox, oy, r, v)
		for b := int32(0); b < w*h; b++ {
			bx, by := b%w, b/w
			dx, dy := bx-ox, by-oy
			if floor[b] == 0 || dx*dx+dy*dy > r*r || b == oy*w+ox {
				continue
			}
			want := refClear(floor, w, h, ox, oy, bx, by)
			if got := v.Visible(b); got != want {
				t.Fatalf("from (%d,%d): (%d,%d) visible got = %v; want %v", ox, oy, bx, by, got, want)
			}
			if got := c.LineOfSight(ox, oy, bx, by); got != want {
				t.Fatalf("LineOfSight (%d,%d)-(%d,%d) got = %v; want %v", ox, oy, bx, by, got, want)
			}
		}
	})
}

// refClear applies the package doc's rule: at depth d the ray sits at
// column C*d/D; off = 2*(C*d - m*D) compares it with column m's center
// (|off| < D: strictly inside m; off == D: where m and m+1 meet).
func refClear(floor []int32, w, h, ax, ay, bx, by int32) bool {
	dx, dy := bx-ax, by-ay
	D, C := dx, dy
	xMajor := true
	if abs(dy) > abs(dx) {
		D, C, xMajor = dy, dx, false
	}
	sd := int32(1)
	if D < 0 {
		sd, D = -1, -D
	}
	wall := func(d, m int32) bool {
		x, y := ax+sd*d, ay+m
		if !xMajor {
			x, y = ax+m, ay+sd*d
		}
		return x < 0 || y < 0 || x >= w || y >= h || floor[y*w+x] == 0
	}
	alongLo, alongHi := false, false
	for d := int32(1); d < D; d++ {
		for m := -abs(C) - 1; m <= abs(C)+1; m++ {
			off := 2 * (C*d - m*D)
			if abs(off) < D && wall(d, m) {
				return false
			}
			if off != D {
				continue
			}
			lo, hi := wall(d, m), wall(d, m+1)
			if (alongLo && alongHi) || (alongLo && hi) || (alongHi && lo) || (lo && hi) {
				return false
			}
			alongLo = alongLo || lo
			alongHi = alongHi || hi
		}
	}
	return true
}

func TestComputeTable(t *testing.T) {
	// A 7x5 room with a pillar at (3, 2); the viewer stands at (1, 2).
	floor := []int32{
		1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 0, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1,
	}
	c, _ := New(floor, 7, 5)
	v := NewView(len(floor))
	c.Compute(1, 2, 10, v)
	tests := []struct {
		x, y int32
		want bool
	}{
		{3, 2, true},  // the pillar itself
		{4, 2, false}, // right behind it
		{6, 2, false},
		{6, 0, true},
		{6, 4, true},
		{5, 1, true}, // the ray at slope -1/4 passes the pillar's edge at depth 2
	}
	for _, tt := range tests {
		if got := v.Visible(tt.y*7 + tt.x); got != tt.want {
			t.Errorf("(%d,%d) visible got = %v; want %v", tt.x, tt.y, got, tt.want)
		}
	}
	c.Compute(1, 2, 2, v)
	if v.Visible(2*7+4) || !v.Visible(2*7+3) {
		t.Errorf("radius 2: (4,2) = %v, (3,2) = %v; want false, true", v.Visible(2*7+4), v.Visible(2*7+3))
	}
}

func TestComputeAllocs(t *testing.T) {
	floor := make([]int32, 64*64)
	for i := range floor {
		floor[i] = int32(1 - (i*7919%13)/12) // a scatter of walls
	}
	c, _ := New(floor, 64, 64)
	v := NewView(len(floor))
	if got := testing.AllocsPerRun(100, func() { c.Compute(30, 30, 16, v) }); got != 0 {
		t.Errorf("Compute allocs got = %v; want 0", got)
	}
}

func ExampleCaster_Compute() {
	floor := []int32{
		1, 1, 1, 1, 1,
		1, 1, 0, 1, 1,
		1, 1, 1, 1, 1,
	}
	c, _ := New(floor, 5, 3)
	v := NewView(len(floor))
	c.Compute(0, 1, 8, v)
	for y := int32(0); y < 3; y++ {
		for x := int32(0); x < 5; x++ {
			switch {
			case x == 0 && y == 1:
				fmt.Print("@")
			case !v.Visible(y*5 + x):
				fmt.Print(" ")
			case floor[y*5+x] == 0:
				fmt.Print("#")
			default:
				fmt.Print(".")
			}
		}
		fmt.Println("|")
	}
	fmt.Println(c.LineOfSight(0, 1, 4, 1), c.LineOfSight(0, 1, 4, 0))
	// Output:
	// .....|
	// @.#  |
	// .....|
	// false true
}
