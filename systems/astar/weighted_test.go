package astar

import (
	"errors"
	"fmt"
	"testing"

	"github.com/leyworks/ley/systems/flowfield"
	"pgregory.net/rapid"
)

// TestSearchCostMatchesFlowField closes a gap of TestSearchMatchesBFS:
// weighted floors (costs 1..9) and one Searcher reused across searches
// (its generation stamps). The oracle is a flow field swept from the goal:
// its distance at the start is the cheapest cost, entering squares counted.
func TestSearchCostMatchesFlowField(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.Int32Range(2, 20).Draw(t, "w")
		h := rapid.Int32Range(2, 20).Draw(t, "h")
		wallPct := rapid.IntRange(0, 40).Draw(t, "wallPct")
		diagonal := rapid.Bool().Draw(t, "diagonal")
		floor := make([]int32, w*h)
		for i := range floor {
			floor[i] = rapid.Int32Range(1, 9).Draw(t, fmt.Sprint("cost", i))
			if rapid.IntRange(0, 99).Draw(t, fmt.Sprint("wall", i)) < wallPct {
				floor[i] = 0
			}
		}
		s := New(int(w), int(h))
		f := flowfield.NewField(int(w), int(h))
		for k := range 4 {
			from := rapid.Int32Range(0, w*h-1).Draw(t, fmt.Sprint("from", k))
			to := rapid.Int32Range(0, w*h-1).Draw(t, fmt.Sprint("to", k))
			if floor[from] == 0 {
				continue
			}
			if err := f.Sweep(floor, to, diagonal); err != nil {
				t.Fatal(err)
			}
			path, err := s.Search(Query{Floor: floor, From: from, To: to, Diagonal: diagonal}, nil)
			if !f.Reached(from) {
				if !errors.Is(err, ErrNoPath) {
					t.Fatalf("search %d: no way by the field, Search = %v, %v", k, path, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("search %d: %v; the field finds cost %d", k, err, f.Dist[from])
			}
			cost := int32(0)
			for _, c := range path {
				cost += floor[c]
			}
			if cost != f.Dist[from] {
				t.Fatalf("search %d: path cost got = %d; want %d", k, cost, f.Dist[from])
			}
		}
	})
}
