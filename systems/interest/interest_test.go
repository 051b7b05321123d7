package interest

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/leyworks/ley/ecs"
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
		info := &wire.AreaInfo{Area: 1, W: uint32(f.a.Grid.W()), H: uint32(f.a.Grid.H()), CellSize: uint16(f.hash.Size())}
		views := map[*client]*view.View{}
		streams := map[*client]*wire.Stream{} // each client's connection
		var delivered []*client
		f.deliver = func(c *client, fr *Frame) bool {
			if rng.IntN(3) == 0 {
				return false // lost: replaced before it was written
			}
			if streams[c] == nil {
				streams[c] = new(wire.Stream)
			}
			m, err := streams[c].Decode(message(fr))
			if err != nil {
				t.Fatalf("frame does not decode: %v", err)
			}
			if s := m.(*wire.Snapshot); s.Tick != f.a.Tick {
				t.Fatalf("radius %d: the client reads tick %d; the Area is at %d", radius, s.Tick, f.a.Tick)
			}
			v := views[c]
			if v == nil {
				v = view.New()
				views[c] = v
				if err := v.Apply(info); err != nil {
					t.Fatal(err)
				}
			}
			if err := v.Apply(m); err != nil {
				t.Fatalf("radius %d: the frame breaks the protocol: %v", radius, err)
			}
			delivered = append(delivered, c)
			return true
		}
		for round := 0; round < 300; round++ {
			f.tick()
			if round%7 == 3 { // a player leaves, another comes
				f.churn(rng)
			}
			delivered = delivered[:0]
			f.round()
			for _, c := range delivered {
				if !slices.Contains(f.clients, c) {
					continue // left this round
				}
				want := f.inView(c.e)
				if got := views[c].Entities; !reflect.DeepEqual(got, want) {
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
// client (its ID may be the one just freed).
func (f *fanout) churn(rng *rand.Rand) {
	i := rng.IntN(len(f.clients))
	c := f.clients[i]
	f.a.Despawn(c.e)
	f.clients = slices.Delete(f.clients, i, i+1)
	nc := f.spawn(uint64(1000 + rng.IntN(1<<20)))
	_ = nc
}

// TestAwayIsShown: a player whose connection dropped (ecs.Player.Away)
// is shown with the away flag to the others, and without it once back.
func TestAwayIsShown(t *testing.T) {
	f := newFanout(t, 2, 0)
	watcher, other := f.clients[0], f.clients[1]
	v := view.New()
	if err := v.Apply(&wire.AreaInfo{Area: 1, W: 128, H: 128, CellSize: 8}); err != nil {
		t.Fatal(err)
	}
	var watcherStream wire.Stream
	f.deliver = func(c *client, fr *Frame) bool {
		if c == watcher {
			m, err := watcherStream.Decode(message(fr))
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Apply(m); err != nil {
				t.Fatal(err)
			}
		}
		return true
	}
	players := ecs.NewMap[ecs.Player](&f.a.World)
	set := func(away bool) {
		players.Get(other.e).Away = away
		f.a.Touch(other.e)
		f.a.Step()
		f.round()
	}
	f.round()
	for _, away := range []bool{true, false, true} {
		set(away)
		got := v.Entities[other.e.ID()].Flags&wire.FlagAway != 0
		if got != away {
			t.Fatalf("away %v: the watcher sees the flag %v", away, got)
		}
	}
}
