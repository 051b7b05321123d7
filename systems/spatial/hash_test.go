package spatial

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"pgregory.net/rapid"
)

type slot struct {
	e ecs.Entity
	c ecs.Cell
}

// snapshot lists each hash cell's (entity, square) pairs as the hash holds
// them, sorted.
func snapshot(h *Hash) [][]slot {
	out := make([][]slot, h.Cells())
	for hc := range out {
		for id := h.First(int32(hc)); id >= 0; id = h.Next(id) {
			out[hc] = append(out[hc], slot{h.Entity(id), h.Square(id)})
		}
		slices.SortFunc(out[hc], func(a, b slot) int { return int(a.e.ID()) - int(b.e.ID()) })
	}
	return out
}

// brute recomputes every hash cell's content from the ECS.
func brute(a *ecs.Area, h *Hash) [][]slot {
	out := make([][]slot, h.Cells())
	q := ecs.NewFilter2[ecs.Position, ecs.Body]().Query(&a.World)
	for q.Next() {
		p, _ := q.Get()
		c := a.Grid.Cell(p.X, p.Y)
		hc := h.CellAt(p.X, p.Y)
		out[hc] = append(out[hc], slot{q.Entity(), c})
	}
	for hc := range out {
		slices.SortFunc(out[hc], func(a, b slot) int { return int(a.e.ID()) - int(b.e.ID()) })
	}
	return out
}

func TestHashMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.IntRange(1, 40).Draw(t, "w")
		hgt := rapid.IntRange(1, 40).Draw(t, "h")
		size := rapid.IntRange(1, 9).Draw(t, "size")
		a, err := ecs.NewArea(ecs.Config{ID: 1, W: w, H: hgt})
		if err != nil {
			t.Fatal(err)
		}
		// A wanderer system moves bodies; spatial runs after it.
		if err := a.Use(&wanderer{}); err != nil {
			t.Fatal(err)
		}
		h, err := Attach(a, size)
		if err != nil {
			t.Fatal(err)
		}
		var log []ecs.Move
		a.AfterTick = func(a *ecs.Area) { log = append(log[:0], a.Moves...) }
		var alive []ecs.Entity
		prev := snapshot(h)
		prevVer := make([]uint32, h.Cells())
		ticks := rapid.IntRange(1, 30).Draw(t, "ticks")
		for tick := 0; tick < ticks; tick++ {
			before := len(alive)
			for k := rapid.IntRange(0, 3).Draw(t, "despawns"); k > 0 && before > 0; k-- {
				i := rapid.IntRange(0, before-1).Draw(t, "victim")
				a.Despawn(alive[i])
				alive[i] = alive[before-1]
				alive = alive[:before-1]
				before--
			}
			for k := rapid.IntRange(0, 4).Draw(t, "spawns"); k > 0; k-- {
				x := rapid.Int32Range(0, int32(w-1)).Draw(t, "x")
				y := rapid.Int32Range(0, int32(hgt-1)).Draw(t, "y")
				if e, err := a.SpawnWanderer(x, y, uint32(tick*7+k), 1, 1); err == nil {
					alive = append(alive, e)
				}
			}
			a.Step()
			got, want := snapshot(h), brute(a, h)
			touched := make([]bool, h.Cells())
			for _, m := range log {
				for _, c := range []ecs.Cell{m.From, m.To} {
					if c != ecs.NoCell {
						touched[h.CellOf(c)] = true
					}
				}
			}
			for hc := range want {
				if !slices.Equal(got[hc], want[hc]) {
					t.Fatalf("tick %d, hash cell %d: got = %v; want %v", tick, hc, got[hc], want[hc])
				}
				// A cell's content changes when a logged move enters or
				// leaves it (even if it ends the tick as it began).
				changed := !slices.Equal(prev[hc], got[hc])
				if changed && !touched[hc] {
					t.Fatalf("tick %d, hash cell %d changed without a logged move", tick, hc)
				}
				if bumped := h.Version(int32(hc)) != prevVer[hc]; bumped != touched[hc] {
					t.Fatalf("tick %d, hash cell %d: version bumped = %v; want %v (content %v -> %v)", tick, hc, bumped, touched[hc], prev[hc], got[hc])
				}
				if got, want := h.Count(int32(hc)), len(want[hc]); got != want {
					t.Fatalf("tick %d, hash cell %d: count got = %d; want %d", tick, hc, got, want)
				}
				prevVer[hc] = h.Version(int32(hc))
			}
			prev = got
		}
	})
}

// wanderer steps every body with a Wander one square at random, like
// systems/wander (which this package does not import).
type wanderer struct {
	f *ecs.Filter2[ecs.Position, ecs.Wander]
}

func (*wanderer) Name() string { return "test-wander" }
func (w *wanderer) Init(*ecs.Area) error {
	w.f = ecs.NewFilter2[ecs.Position, ecs.Wander]()
	return nil
}
func (w *wanderer) Update(a *ecs.Area) {
	q := w.f.Query(&a.World)
	for q.Next() {
		p, w := q.Get()
		d := ecs.Dir(w.Next() % uint32(ecs.NumDirs+2)) // sometimes stand
		if d >= ecs.NumDirs {
			continue
		}
		dx, dy := d.Delta()
		if a.Grid.CheckStep(p.X, p.Y, p.X+dx, p.Y+dy) == ecs.OutcomeApplied {
			a.MoveBody(q.Entity(), p, p.X+dx, p.Y+dy)
		}
	}
}

func TestCellsWithin(t *testing.T) {
	h, err := New(40, 20, 8) // 5 x 3 hash cells
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		x, y, r int32
		want    []int32
	}{
		{0, 0, 0, []int32{0}},
		{0, 0, 8, []int32{0, 1, 5, 6}},
		{7, 7, 0, []int32{0}},
		{7, 7, 1, []int32{0, 1, 5, 6}},
		{39, 19, 3, []int32{14}},
		{20, 10, 100, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}},
		{-20, 5, 3, nil},
	}
	buf := make([]int32, 0, 16)
	for _, tt := range tests {
		got := h.CellsWithin(tt.x, tt.y, tt.r, buf[:0])
		if !slices.Equal(got, tt.want) {
			t.Errorf("CellsWithin(%d, %d, %d) got = %v; want %v", tt.x, tt.y, tt.r, got, tt.want)
		}
	}
	if got := testing.AllocsPerRun(100, func() { buf = h.CellsWithin(20, 10, 12, buf[:0]) }); got != 0 {
		t.Errorf("CellsWithin allocs got = %v; want 0", got)
	}
}

func TestMarkedFirst(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 8, H: 8})
	h, _ := New(8, 8, 8)
	var es []ecs.Entity
	for i := int32(0); i < 5; i++ {
		e, _ := a.SpawnWanderer(i, 0, 1, 1, 1)
		es = append(es, e)
		h.Insert(e, a.Grid.Cell(i, 0))
	}
	v := h.Version(0)
	h.Mark(es[3], true)
	h.Mark(es[1], true)
	if got := h.Version(0); got != v {
		t.Errorf("version after marking got = %d; want %d", got, v)
	}
	h.Insert(es[4], a.Grid.Cell(4, 1)) // a move keeps marks first
	var got []bool
	for id := h.First(0); id >= 0; id = h.Next(id) {
		got = append(got, h.Marked(id))
	}
	if want := []bool{true, true, false, false, false}; !slices.Equal(got, want) {
		t.Errorf("marks in list order got = %v; want %v", got, want)
	}
	h.Remove(es[1])
	if h.Has(es[1]) || h.Len() != 4 {
		t.Errorf("after remove: has = %v, len = %d; want false, 4", h.Has(es[1]), h.Len())
	}
}

func TestAttachedHashSteadyStateAllocs(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 64, H: 64})
	if err := a.Use(&wanderer{}); err != nil {
		t.Fatal(err)
	}
	h, err := Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 200; i++ {
		if _, err := a.SpawnWanderer(i%64, i/64*5, uint32(i+1), 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		a.Step()
	}
	// Ticks of wandering bodies keep the attached hash in step without
	// allocating once every ID has been seen.
	if got := testing.AllocsPerRun(100, a.Step); got != 0 {
		t.Errorf("tick with an attached hash allocs got = %v; want 0", got)
	}
	if err := h.Check(a); err != nil {
		t.Fatal(err)
	}
}

// TestAttachedHashFollowsEveryRemoval: a body despawned anywhere (in a
// system, a control function, a timer, the after-tick hook) leaves the
// hash at once, so a reader of the hash never meets a dead entity.
func TestAttachedHashFollowsEveryRemoval(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 32, H: 32})
	h, err := Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	var es []ecs.Entity
	for i := int32(0); i < 4; i++ {
		e, err := a.SpawnWanderer(2+i, 2, uint32(i+1), 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	hc := h.CellAt(2, 2)
	checkAfter := func(when string) {
		t.Helper()
		for id := h.First(hc); id >= 0; id = h.Next(id) {
			if !a.Alive(h.Entity(id)) {
				t.Fatalf("%s: the hash still lists dead entity %d", when, id)
			}
		}
		if err := h.Check(a); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	a.PostControl(func(a *ecs.Area) { a.Despawn(es[0]) })
	a.Step()
	checkAfter("control function")
	a.OnTimer = func(a *ecs.Area, _ time.Time) { a.Despawn(es[1]) }
	a.SetTimer(time.Unix(1, 0))
	a.AfterTick = func(a *ecs.Area) {
		checkAfter("timer")
		a.Despawn(es[2])
		checkAfter("after-tick")
	}
	a.Step()
	a.AfterTick = nil
	a.Despawn(es[3])
	checkAfter("between ticks")
	if h.Len() != 0 {
		t.Fatalf("hash holds %d entities; want 0", h.Len())
	}
}

func TestAttachSharesOneHash(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 32, H: 32})
	e, _ := a.SpawnWanderer(3, 3, 1, 1, 1)
	h1, err := Attach(a, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !h1.Has(e) {
		t.Fatal("a body spawned before Attach is not in the hash")
	}
	if h2, err := Attach(a, 0); err != nil || h2 != h1 {
		t.Fatalf("Attach(0) = %p, %v; want the same hash %p", h2, err, h1)
	}
	if _, err := Attach(a, 16); err == nil {
		t.Fatal("Attach with another cell size succeeded")
	}
}

func ExampleHash() {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 32, H: 32})
	h, _ := New(32, 32, 16) // 2 x 2 hash cells
	e, _ := a.SpawnWanderer(3, 4, 1, 1, 1)
	h.Insert(e, a.Grid.Cell(3, 4))
	hc := h.CellAt(3, 4)
	v := h.Version(hc)
	h.Move(e, a.Grid.Cell(20, 4)) // into the next hash cell
	fmt.Println(hc, h.Count(hc), h.Version(hc) != v)
	next := h.CellAt(20, 4)
	for id := h.First(next); id >= 0; id = h.Next(id) {
		x, y := a.Grid.XY(h.Square(id))
		fmt.Println(next, h.Entity(id) == e, x, y)
	}
	fmt.Println(h.CellsWithin(15, 15, 1, nil))
	// Output:
	// 0 0 true
	// 1 true 20 4
	// [0 1 2 3]
}

func TestInsertReusedID(t *testing.T) {
	a, _ := ecs.NewArea(ecs.Config{ID: 1, W: 8, H: 8})
	h, _ := New(8, 8, 4)
	e1, _ := a.SpawnWanderer(1, 1, 1, 1, 1)
	c := a.Grid.Cell(1, 1)
	h.Insert(e1, c)
	h.Mark(e1, true)
	a.Despawn(e1) // never removed from the hash
	e2, _ := a.SpawnWanderer(1, 1, 1, 1, 1)
	if e2.ID() != e1.ID() {
		t.Skipf("arche did not reuse ID %d (got %d)", e1.ID(), e2.ID())
	}
	v := h.Version(h.CellOf(c))
	h.Insert(e2, c)
	id := int32(e2.ID())
	if h.Entity(id) != e2 || h.Marked(id) || h.Len() != 1 || h.Version(h.CellOf(c)) == v {
		t.Errorf("after reuse: entity %v (want %v), marked %v, len %d, version bumped %v; want unmarked, 1, bumped",
			h.Entity(id), e2, h.Marked(id), h.Len(), h.Version(h.CellOf(c)) != v)
	}
}
