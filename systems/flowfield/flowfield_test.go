package flowfield

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// bruteDist relaxes every square until nothing changes (Bellman-Ford): the
// reference distances under the package's cost and step rules.
func bruteDist(floor []int32, w, h, target int32, diagonal bool) []int32 {
	dist := make([]int32, len(floor))
	for i := range dist {
		dist[i] = Unreached
	}
	if floor[target] == 0 {
		return dist
	}
	dist[target] = 0
	for changed := true; changed; {
		changed = false
		for c := int32(0); c < w*h; c++ {
			if floor[c] == 0 {
				continue
			}
			x, y := c%w, c/w
			for k := 0; k < NumDirs; k++ {
				if k&1 == 1 && !diagonal {
					continue
				}
				nx, ny := x+DX[k], y+DY[k]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				nc := ny*w + nx
				if floor[nc] == 0 || dist[nc] == Unreached {
					continue
				}
				if k&1 == 1 && (floor[y*w+nx] == 0 || floor[ny*w+x] == 0) {
					continue
				}
				if d := dist[nc] + floor[nc]; d < dist[c] {
					dist[c] = d
					changed = true
				}
			}
		}
	}
	return dist
}

func drawMap(t *rapid.T) (floor []int32, w, h int32) {
	w = rapid.Int32Range(1, 20).Draw(t, "w")
	h = rapid.Int32Range(1, 20).Draw(t, "h")
	wallPct := rapid.IntRange(0, 50).Draw(t, "wallPct")
	maxCost := rapid.Int32Range(1, 5).Draw(t, "maxCost")
	floor = make([]int32, w*h)
	for i := range floor {
		floor[i] = rapid.Int32Range(1, maxCost).Draw(t, fmt.Sprint("cost", i))
		if rapid.IntRange(0, 99).Draw(t, fmt.Sprint("wall", i)) < wallPct {
			floor[i] = 0
		}
	}
	if rapid.Bool().Draw(t, "dear") { // one square dearer than the bucket queue takes
		floor[rapid.IntRange(0, len(floor)-1).Draw(t, "dearSquare")] = maxBucketCost + 1
	}
	return floor, w, h
}

func TestSweepMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		floor, w, h := drawMap(t)
		target := rapid.Int32Range(0, w*h-1).Draw(t, "target")
		diagonal := rapid.Bool().Draw(t, "diagonal")
		f := NewField(int(w), int(h))
		if err := f.Sweep(floor, target, diagonal); err != nil {
			t.Fatal(err)
		}
		want := bruteDist(floor, w, h, target, diagonal)
		for c := range want {
			if got := f.Dist[c]; got != want[c] {
				t.Fatalf("square %d: dist got = %d; want %d", c, got, want[c])
			}
		}
		for c := int32(0); c < w*h; c++ {
			d := f.Dir[c]
			switch {
			case c == target || f.Dist[c] == Unreached:
				if d != NoDir {
					t.Fatalf("square %d: dir got = %d; want NoDir", c, d)
				}
				continue
			case d >= NumDirs || (d&1 == 1 && !diagonal):
				t.Fatalf("square %d: dir got = %d; want a legal step", c, d)
			}
			x, y := c%w, c/w
			nx, ny := x+DX[d], y+DY[d]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				t.Fatalf("square %d: dir %d leaves the grid", c, d)
			}
			nc := ny*w + nx
			if floor[nc] == 0 || (d&1 == 1 && (floor[y*w+nx] == 0 || floor[ny*w+x] == 0)) {
				t.Fatalf("square %d: dir %d is not a legal step", c, d)
			}
			if got, want := f.Dist[nc], f.Dist[c]-floor[nc]; got != want {
				t.Fatalf("square %d: dir %d leads to dist %d; want %d (dist %d minus entry cost)", c, d, got, want, f.Dist[c])
			}
		}
	})
}

func TestResumedSweepEqualsWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		floor, w, h := drawMap(t)
		target := rapid.Int32Range(0, w*h-1).Draw(t, "target")
		chunk := rapid.IntRange(1, 7).Draw(t, "chunk")
		whole := NewField(int(w), int(h))
		if err := whole.Sweep(floor, target, true); err != nil {
			t.Fatal(err)
		}
		part := NewField(int(w), int(h))
		var s sweep
		s.start(part, floor, target)
		for {
			if _, done := s.run(part, floor, true, chunk); done {
				break
			}
		}
		for c := range whole.Dist {
			if part.Dist[c] != whole.Dist[c] || part.Dir[c] != whole.Dir[c] {
				t.Fatalf("square %d: resumed (%d,%d); want (%d,%d)", c, part.Dist[c], part.Dir[c], whole.Dist[c], whole.Dir[c])
			}
		}
	})
}

func open(w, h int) []int32 {
	f := make([]int32, w*h)
	for i := range f {
		f[i] = 1
	}
	return f
}

func TestRegistryRecomputesOnlyOnCellChange(t *testing.T) {
	floor := open(16, 16)
	r, err := NewRegistry(DefaultConfig(16, 16), floor)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Acquire(7, 5)
	if got := r.Field(a); got != nil {
		t.Fatalf("field before its first sweep got = %v; want nil", got)
	}
	b := r.Acquire(7, 5) // a second user shares it
	if a != b {
		t.Fatalf("second acquire got = %d; want %d", b, a)
	}
	r.RunAll()
	steps := []struct {
		target int32
		sweeps uint64
	}{
		{5, 1}, {5, 1}, {6, 2}, {6, 2}, {6, 2}, {40, 3}, {40, 3},
	}
	for i, s := range steps {
		r.Retarget(a, s.target)
		r.RunAll()
		if got := r.Sweeps(); got != s.sweeps {
			t.Fatalf("step %d (target %d): sweeps got = %d; want %d", i, s.target, got, s.sweeps)
		}
		if got := r.Field(a).Target; got != s.target {
			t.Fatalf("step %d: field target got = %d; want %d", i, got, s.target)
		}
	}
	r.Release(a)
	if got := r.Users(a); got != 1 {
		t.Fatalf("users after one release got = %d; want 1", got)
	}
	r.Release(b)
	if got := r.Users(a); got != 0 {
		t.Fatalf("users after both releases got = %d; want 0", got)
	}
}

func TestRegistryStaleUntilDone(t *testing.T) {
	const w, h = 64, 64
	floor := open(w, h)
	cfg := DefaultConfig(w, h)
	cfg.Budget = 1 // one chunk per Run
	r, err := NewRegistry(cfg, floor)
	if err != nil {
		t.Fatal(err)
	}
	id := r.Acquire(1, 0)
	for !r.Run() {
	}
	r.Retarget(id, w*h-1)
	if r.Run() {
		t.Fatalf("a %d-square sweep finished within one chunk", w*h)
	}
	if got := r.Field(id).Target; got != 0 {
		t.Fatalf("mid-sweep field target got = %d; want the old 0", got)
	}
	// The target moves again mid-sweep: the running sweep finishes, then
	// the field is swept once more for the newest square.
	r.Retarget(id, 100)
	for !r.Run() {
	}
	if got, want := r.Field(id).Target, int32(100); got != want {
		t.Fatalf("field target got = %d; want %d", got, want)
	}
	if got, want := r.Sweeps(), uint64(3); got != want {
		t.Fatalf("sweeps got = %d; want %d", got, want)
	}
}

func TestRegistryInvalidate(t *testing.T) {
	const w, h = 16, 16
	floor := open(w, h)
	// A wall splits the map at x = 8.
	for y := int32(0); y < h; y++ {
		floor[y*w+8] = 0
	}
	r, _ := NewRegistry(DefaultConfig(w, h), floor)
	left := r.Acquire(1, 0)
	r.RunAll()
	tests := []struct {
		square int32
		sweeps uint64
	}{
		{12, 1},      // in the far half: untouched
		{3*w + 3, 2}, // in the reached half
		{5*w + 8, 3}, // the wall itself, next to reached squares
	}
	for _, tt := range tests {
		if tt.square == 5*w+8 {
			floor[tt.square] = 1 // open a door
		} else {
			floor[tt.square] = 0
		}
		r.Invalidate(tt.square)
		r.RunAll()
		if got := r.Sweeps(); got != tt.sweeps {
			t.Fatalf("after a change at %d: sweeps got = %d; want %d", tt.square, got, tt.sweeps)
		}
	}
	if !r.Field(left).Reached(13) {
		t.Fatalf("square 13 not reached through the door")
	}
}

func TestRegistrySteadyStateAllocs(t *testing.T) {
	const w, h = 32, 32
	floor := open(w, h)
	r, _ := NewRegistry(DefaultConfig(w, h), floor)
	ids := []ID{r.Acquire(1, 0), r.Acquire(2, 500)}
	target := int32(0)
	cycle := func() {
		target = (target + 33) % (w * h)
		r.Retarget(ids[0], target)
		r.Retarget(ids[1], w*h-1-target)
		r.RunAll()
		r.Release(ids[1])
		ids[1] = r.Acquire(2, target)
		r.RunAll()
	}
	for range 4 {
		cycle()
	}
	if got := testing.AllocsPerRun(50, cycle); got != 0 {
		t.Fatalf("allocs per retarget, release and sweep cycle got = %v; want 0", got)
	}
}

func ExampleField_Sweep() {
	// A 5x3 map with a wall in the middle column but its bottom square.
	floor := []int32{
		1, 1, 0, 1, 1,
		1, 1, 0, 1, 1,
		1, 1, 1, 1, 1,
	}
	f := NewField(5, 3)
	_ = f.Sweep(floor, 0, true) // the target is the top-left square
	for y := 0; y < 3; y++ {
		fmt.Println(f.Dist[y*5 : y*5+5])
	}
	fmt.Println("first step from the top-right square:", f.Dir[4]) // 4 = south
	// Output:
	// [0 1 2147483647 6 6]
	// [1 1 2147483647 5 5]
	// [2 2 3 4 5]
	// first step from the top-right square: 4
}

func ExampleRegistry() {
	floor := open(8, 8)
	r, _ := NewRegistry(DefaultConfig(8, 8), floor)
	castle := r.Acquire(42, 0) // key: the castle's entity ID; it stands on square 0
	r.Run()                    // within the budget: this small sweep finishes
	f := r.Field(castle)
	fmt.Println(f.Dist[63], f.Dir[63], r.Sweeps())
	r.Retarget(castle, 0) // same square: nothing to do
	r.Run()
	r.Retarget(castle, 9) // moved: one more sweep
	r.Run()
	fmt.Println(r.Field(castle).Dist[63], r.Sweeps())
	r.Release(castle) // the last user: buffers go back to the pool
	// Output:
	// 7 7 1
	// 6 2
}

// TestRegistryReach: a bounded field reaches exactly the squares within
// its reach (as the whole field measures them), with the same distances
// and directions there, and nothing farther.
func TestRegistryReach(t *testing.T) {
	const w, h = 40, 30
	floor := open(w, h)
	for y := int32(0); y < 25; y++ {
		floor[y*w+20] = 0 // a wall with a gap at the bottom
	}
	whole := NewField(w, h)
	target := int32(10*w + 15)
	if err := whole.Sweep(floor, target, true); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(w, h)
	cfg.Reach = 12
	r, err := NewRegistry(cfg, floor)
	if err != nil {
		t.Fatal(err)
	}
	id := r.Acquire(1, target)
	r.RunAll()
	f := r.Field(id)
	reached := 0
	for c := range f.Dist {
		switch want := whole.Dist[c]; {
		case want <= cfg.Reach:
			reached++
			if f.Dist[c] != want || f.Dir[c] != whole.Dir[c] {
				t.Fatalf("square %d: dist %d dir %d; the whole field says %d, %d", c, f.Dist[c], f.Dir[c], want, whole.Dir[c])
			}
		case f.Dist[c] != Unreached:
			t.Fatalf("square %d at %d, past the reach %d, is reached (%d)", c, want, cfg.Reach, f.Dist[c])
		}
	}
	if reached < 100 {
		t.Fatalf("%d squares reached; want the ~(2*12)^2 around the target", reached)
	}
}
