package area

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// TestClientViewTellsTheTruth applies every delivered frame to a model of
// each client (a chunk replaces a cell, an empty chunk clears it), drops a
// third of the frames as a slow reader would lose them, and checks after
// each delivered frame that every client's view is exactly the entities
// in the cells within its radius, and nothing outside it.
func TestClientViewTellsTheTruth(t *testing.T) {
	f := newFanout(t, 40, 12)
	rng := rand.New(rand.NewPCG(3, 4))
	views := map[*peer]map[uint32][]wire.EntityState{}
	var delivered []*peer
	f.ha.bcast.deliver = func(p *peer, fr *gate.Frame) {
		defer fr.Release()
		if rng.IntN(3) == 0 {
			return // lost: replaced before it was written
		}
		var msg []byte
		for _, part := range fr.Parts {
			msg = append(msg, part...)
		}
		m, err := wire.Decode(msg)
		if err != nil {
			t.Fatalf("frame does not decode: %v", err)
		}
		s := m.(*wire.Snapshot)
		v := views[p]
		if v == nil {
			v = map[uint32][]wire.EntityState{}
			views[p] = v
		}
		for _, c := range s.Cells {
			if len(c.Ents) == 0 {
				delete(v, c.Cell)
			} else {
				v[c.Cell] = c.Ents
			}
		}
		fr.Delivered.Store(fr.Round)
		delivered = append(delivered, p)
	}
	bc := &f.ha.bcast
	for round := 0; round < 300; round++ {
		f.tick()
		delivered = delivered[:0]
		bc.send()
		for _, p := range delivered {
			var b *body
			for _, x := range f.ha.order {
				if x.peer == p {
					b = x
				}
			}
			pos := bc.pos.Get(b.entity)
			want := map[uint32][]uint32{}
			for _, hc := range bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, nil) {
				for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
					want[uint32(hc)] = append(want[uint32(hc)], bc.hash.Entity(id).ID())
				}
			}
			got := map[uint32][]uint32{}
			for c, ents := range views[p] {
				for _, e := range ents {
					got[c] = append(got[c], e.ID)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("round %d: client sees %d cells; want %d", round, len(got), len(want))
			}
			for c, w := range want {
				g := got[c]
				slices.Sort(g)
				slices.Sort(w)
				if !slices.Equal(g, w) {
					t.Fatalf("round %d cell %d: client sees %v; want %v", round, c, g, w)
				}
			}
		}
	}
}
