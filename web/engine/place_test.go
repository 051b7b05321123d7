package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// BenchmarkPredict: one prediction of one step on a 64 x 64 Area with 50
// other bodies, 5 of which moved since the last (a snapshot's worth).
func BenchmarkPredict(b *testing.B) {
	r, err := NewReplica(&wire.AreaInfo{Area: 1, Kind: "village", W: 64, H: 64, CellSize: 8, TickHz: 20, Rules: wire.RuleDiagonal})
	if err != nil {
		b.Fatal(err)
	}
	var others []int32
	for i := int32(0); i < 50; i++ {
		others = append(others, 5+i%10*5, 5+i/10*5)
	}
	pending := []Pending{{Kind: ecs.IntentStep, Dir: ecs.East}}
	n := 0
	for b.Loop() {
		n++
		for k := range 5 {
			others[2*((n*5+k)%50)] ^= 1 // five bodies step aside and back
		}
		r.Predict(Pose{X: 32, Y: 33}, others, pending)
	}
}

// TestReplicaPlacesWhatItIsTold: whatever bodies a prediction is given,
// the replica's grid holds exactly them and the player's own, each once,
// however they moved since the last (the bodies it keeps, moves, spawns
// and despawns add up), and the grid stays consistent.
func TestReplicaPlacesWhatItIsTold(t *testing.T) {
	r, err := NewReplica(&wire.AreaInfo{Area: 1, Kind: "village", W: 24, H: 24, CellSize: 8, TickHz: 20, Rules: wire.RuleDiagonal})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	g := r.a.Grid
	for round := range 500 {
		self := Pose{X: rng.Int32N(24), Y: rng.Int32N(24)}
		want := map[ecs.Cell]bool{g.Cell(self.X, self.Y): true}
		var others []int32
		for range rng.IntN(40) {
			x, y := rng.Int32N(24), rng.Int32N(24)
			others = append(others, x, y) // duplicates and the player's own square among them
			want[g.Cell(x, y)] = true
		}
		r.Predict(self, others, nil)
		occ := g.Layer(ecs.LayerOccupant)
		got := 0
		for c, id := range occ {
			if id != 0 {
				got++
				if !want[ecs.Cell(c)] {
					t.Fatalf("round %d: a body on %d, which no one stands on", round, c)
				}
			}
		}
		if got != len(want) {
			t.Fatalf("round %d: %d bodies on the grid; want %d", round, got, len(want))
		}
		if err := r.a.CheckGrid(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
