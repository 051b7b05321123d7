package engine_test

import (
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/statics"
	"github.com/leyworks/ley/systems/tell"
	"github.com/leyworks/ley/web/engine"
)

// replay is one round of TestReplicaPredictsTheServer's: what the replica
// predicted and where the server put the body.
type replay struct{ compared, skipped, wrong, doors int }

// predictRounds plays rounds of a player's intents (steps and actions,
// doors among them) on a village Sim, the server, while a Replica told
// what a client is told (area_info, and each cell's static when its
// version changed, through the wire's encoding) predicts each round's
// end from the pose and bodies before it. Rounds in which another body
// moved are not compared: prediction holds while the world it knows
// stands still. told false tells the replica no static at all (a client
// that knows no map).
func predictRounds(t *testing.T, rounds int, told bool) replay {
	t.Helper()
	lib := content.Default()
	sim, err := engine.NewSim(lib, "village", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for acct := uint64(1); acct <= 8; acct++ {
		id, err := sim.Join(acct, true, nil, 0, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	me := ids[0]
	b := sim.Built()
	info := roundTrip(t, tell.AreaInfo(b, 1, tell.Pacing{SnapshotEvery: 2, InterestRadius: 24})).(*wire.AreaInfo)
	rep, err := engine.NewReplica(info)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := make([]uint32, b.Hash.Cells())
	var st wire.Static
	rng := rand.New(rand.NewPCG(11, 12))
	var res replay
	var doors []statics.Object
	for _, o := range b.Map.Objects() {
		if o.Kind == wire.ObjectDoor {
			doors = append(doors, o)
		}
	}
	for round := range rounds {
		if told {
			for hc := range mirrored {
				if v := b.Map.Version(int32(hc)); v != mirrored[hc] {
					b.Map.Static(int32(hc), &st)
					if err := rep.Static(roundTrip(t, &st).(*wire.Static)); err != nil {
						t.Fatal(err)
					}
					mirrored[hc] = v
				}
			}
		}
		self, others := bodies(sim, me)
		// Half the intents head for a door (the round's target, the next
		// door in turn every 40 rounds), half go anywhere.
		door := doors[(round/40)%len(doors)]
		var batch []engine.Pending
		for range 1 + rng.IntN(6) {
			kind, dir := ecs.IntentStep, ecs.Dir(rng.IntN(8))
			if rng.IntN(4) == 0 {
				kind = ecs.IntentAction
			}
			if rng.IntN(2) == 0 {
				dir = ecs.DirOf(door.X-self.X, door.Y-self.Y, dir)
			}
			batch = append(batch, engine.Pending{Kind: kind, Dir: dir})
		}
		want := rep.Predict(self, others, batch)
		first := uint32(1000)
		for i, p := range batch {
			if _, err := sim.Post(me, ecs.Intent{Seq: first + uint32(i), Kind: p.Kind, Dir: p.Dir}); err != nil {
				t.Fatal(err)
			}
		}
		doorsBefore := doorStates(b.Map.Objects())
		answered, still := 0, true
		for tick := 0; answered < len(batch) && tick < 400; tick++ {
			sim.Step()
			for _, a := range sim.Answers() {
				if a.Body == me {
					answered++
				}
			}
			if _, now := bodies(sim, me); movedNear(others, now, self, int32(len(batch)+2)) {
				still = false
			}
		}
		if answered != len(batch) {
			t.Fatalf("the server answered %d of %d intents", answered, len(batch))
		}
		if doorStates(b.Map.Objects()) != doorsBefore {
			res.doors++
		}
		got, _ := bodies(sim, me)
		switch {
		case !still:
			res.skipped++
		case got != want:
			res.wrong++
			if told && res.wrong == 1 {
				t.Errorf("from %+v, %v: predicted %+v, the server %+v", self, batch, want, got)
			}
			res.compared++
		default:
			res.compared++
		}
	}
	return res
}

// doorStates spells which of the map's doors are open.
func doorStates(objs []statics.Object) string {
	var b []byte
	for _, o := range objs {
		if o.Kind == wire.ObjectDoor {
			b = append(b, "01"[o.State()])
		}
	}
	return string(b)
}

// bodies returns body me's pose and every other body's square (x, y).
func bodies(sim *engine.Sim, me uint32) (engine.Pose, []int32) {
	var self engine.Pose
	var others []int32
	all := sim.Bodies(nil)
	for ; len(all) >= 5; all = all[5:] {
		if uint32(all[0]) == me {
			self = engine.Pose{X: all[1], Y: all[2], Facing: ecs.Dir(all[3])}
			continue
		}
		others = append(others, all[1], all[2])
	}
	return self, others
}

// movedNear reports whether the bodies on squares before (x, y pairs) are
// not all on the squares now, counting only squares within r of p: a body
// farther away cannot change where p's next r steps end.
func movedNear(before, now []int32, p engine.Pose, r int32) bool {
	near := func(sq []int32) map[[2]int32]int {
		m := map[[2]int32]int{}
		for i := 0; i+1 < len(sq); i += 2 {
			if max(sq[i]-p.X, p.X-sq[i], sq[i+1]-p.Y, p.Y-sq[i+1]) <= r {
				m[[2]int32{sq[i], sq[i+1]}]++
			}
		}
		return m
	}
	a, b := near(before), near(now)
	if len(a) != len(b) {
		return true
	}
	for k, n := range a {
		if b[k] != n {
			return true
		}
	}
	return false
}

// roundTrip encodes m as the server sends it and decodes it as a client
// reads it.
func roundTrip(t *testing.T, m wire.Message) wire.Message {
	t.Helper()
	b, err := wire.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplicaPredictsTheServer: a client's replica of a village, told
// what a client is told, predicts where the server puts its player after
// each round of steps and actions (walls, water, corners, doors it opens
// and closes, other players in the way): every round compared agrees.
// A replica told no map does not (the comparison can fail).
func TestReplicaPredictsTheServer(t *testing.T) {
	res := predictRounds(t, 1500, true)
	t.Logf("%d rounds compared, %d skipped (another body moved), %d wrong; %d rounds opened or closed a door", res.compared, res.skipped, res.wrong, res.doors)
	if res.doors == 0 {
		t.Fatal("no round opened or closed a door")
	}
	if res.compared < 1000 {
		t.Fatalf("only %d of 1500 rounds compared", res.compared)
	}
	if res.wrong != 0 {
		t.Fatalf("%d of %d predictions wrong", res.wrong, res.compared)
	}
	blind := predictRounds(t, 600, false)
	if blind.wrong == 0 {
		t.Fatalf("a replica that knows no map predicted all %d rounds right: the rounds meet no wall or door", blind.compared)
	}
}
