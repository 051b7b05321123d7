package area

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
)

// TestClientViewTellsTheTruth applies every delivered frame to each
// client's view (net/view, the protocol's reference), loses a third of the
// frames as a slow reader would (replaced before written), and checks
// after each delivered frame that every client's view is exactly the
// entities standing in the cells within its radius, each in its exact
// state (square, facing, flags), and nothing else. Players step at random
// (across cells, into walls and bodies: a blocked step still turns them),
// and some leave and come back, so spawns, despawns, entrants and ID reuse
// all occur.
func TestClientViewTellsTheTruth(t *testing.T) {
	for _, radius := range []int{12, 0} {
		f := newFanout(t, 40, radius)
		rng := rand.New(rand.NewPCG(3, uint64(radius)))
		bc := &f.ha.bcast
		info := &wire.AreaInfo{Area: 1, W: uint32(f.ha.a.Grid.W()), H: uint32(f.ha.a.Grid.H()), CellSize: uint16(bc.hash.Size())}
		views := map[*peer]*view.View{}
		var delivered []*peer
		bc.deliver = func(p *peer, fr *gate.Frame) {
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
			v := views[p]
			if v == nil {
				v = view.New()
				views[p] = v
				if err := v.Apply(info); err != nil {
					t.Fatal(err)
				}
			}
			if err := v.Apply(m); err != nil {
				t.Fatalf("radius %d: the frame breaks the protocol: %v", radius, err)
			}
			fr.Delivered.Store(fr.Round)
			delivered = append(delivered, p)
		}
		for round := 0; round < 300; round++ {
			f.tick()
			if round%7 == 3 { // a player leaves, another comes
				f.churn(rng)
			}
			delivered = delivered[:0]
			bc.send()
			for _, p := range delivered {
				var b *body
				for _, x := range f.ha.order {
					if x.peer == p {
						b = x
					}
				}
				if b == nil {
					continue // left this round
				}
				pos := bc.pos.Get(b.entity)
				want := map[uint32]wire.EntityState{}
				for _, hc := range bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, nil) {
					for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
						e := bc.hash.Entity(id)
						want[e.ID()] = bc.state(e, bc.hash.Square(id))
					}
				}
				if got := views[p].Entities; !reflect.DeepEqual(got, want) {
					for id, w := range want {
						if got[id] != w {
							t.Fatalf("radius %d round %d: entity %d seen as %+v; want %+v", radius, round, id, got[id], w)
						}
					}
					for id, g := range got {
						if _, ok := want[id]; !ok {
							t.Fatalf("radius %d round %d: the client sees %+v, which is not in its view", radius, round, g)
						}
					}
				}
			}
		}
	}
}

// churn removes a random player's body and spawns a new one with a new
// peer (its ID may be the one just freed).
func (f *fanout) churn(rng *rand.Rand) {
	i := rng.IntN(len(f.ha.order))
	b := f.ha.order[i]
	f.ha.a.Despawn(b.entity)
	x, y, _ := nearestFree(f.ha.a.Grid, rng.Int32N(f.ha.a.Grid.W()), rng.Int32N(f.ha.a.Grid.H()), nil)
	e, err := f.ha.a.SpawnPlayer(b.account, x, y)
	if err != nil {
		panic(err)
	}
	nb := &body{account: b.account, entity: e, peer: &peer{h: f.ha.h}}
	f.ha.order[i] = nb
	f.ha.bodies[nb.account] = nb
	f.players[i] = e
}
