//go:build leytest

package interest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/statics"
)

// TestInStepFramesAreWalkedFrames: a client in step with the rounds
// (System.inStep) gets its frame from the cells that changed this round,
// without a walk of its cells (System.stepOn), and that frame is byte for
// byte the one a walk builds. Two Areas run the same rounds, one building
// every frame by a walk (walkAlways): 30 players of whom a few step each
// tick and most stand (so a standing client sees others step, enter its
// view from out of it and leave it), frames lost as a slow reader loses
// them, players that leave and come, floor tiles laid (the map changes),
// new sessions, ack_seqs that move and rounds in which a client's frame is
// not built; and with line of sight among walls, where no client is ever
// in step. It also counts the frames built in step, so that it cannot pass
// by never taking the path.
func TestInStepFramesAreWalkedFrames(t *testing.T) {
	for _, tc := range []struct {
		radius int
		los    bool
	}{{12, false}, {0, false}, {12, true}, {0, true}} {
		t.Run(fmt.Sprintf("radius=%d/los=%v", tc.radius, tc.los), func(t *testing.T) {
			radius := tc.radius
			rules := ecs.RulesFor(ecs.KindVillage)
			rules.StepsPerSecond = 20
			rules.LineOfSight = tc.los
			stepped, walked := newFanoutSized(t, rules, 30, radius, 64), newFanoutSized(t, rules, 30, radius, 64)
			rng := rand.New(rand.NewPCG(11, uint64(radius)))
			if tc.los { // walls on free squares, the same in both Areas
				for range 300 {
					c := stepped.a.Grid.Cell(rng.Int32N(64), rng.Int32N(64))
					if stepped.a.Grid.Free(c) && walked.a.Grid.Free(c) {
						stepped.a.Grid.SetWall(c)
						walked.a.Grid.SetWall(c)
					}
				}
			}
			acks := make([]uint32, 30)
			var inStep, frames, lost int
			for round := 1; round <= 800; round++ {
				for range 2 { // two ticks a round
					var steps []int // per client: the direction of its step, or -1
					for range stepped.clients {
						d := -1
						if rng.IntN(6) == 0 {
							d = rng.IntN(8)
						}
						steps = append(steps, d)
					}
					for _, f := range []*fanout{stepped, walked} {
						f.seq++
						for i, c := range f.clients {
							if steps[i] >= 0 {
								f.a.Post(c.e, ecs.Intent{Seq: f.seq, Kind: ecs.IntentStep, Dir: ecs.Dir(steps[i])})
							}
						}
						f.a.Step()
					}
				}
				churn := round%13 == 0
				who := rng.IntN(30)
				if churn {
					for _, f := range []*fanout{stepped, walked} {
						f.a.Despawn(f.clients[who].e)
						f.clients = slices.Delete(f.clients, who, who+1)
						f.spawn(uint64(1000 + round))
					}
				}
				if round%17 == 0 { // a floor tile laid under a player: its cell's map changes
					for _, f := range []*fanout{stepped, walked} {
						pos := f.s.pos.Get(f.clients[who].e)
						if f.m.Free(f.a.Grid.Cell(pos.X, pos.Y), true) {
							f.m.Place(statics.Object{Kind: wire.ObjectItem, X: pos.X, Y: pos.Y, Item: 1, Floor: true})
						}
					}
				}
				if round%23 == 0 { // a new session
					stepped.clients[who].v.Reset()
					walked.clients[who].v.Reset()
				}
				if rng.IntN(5) == 0 {
					acks[who]++ // an intent applied that changed nothing in view
				}
				stepped.arena = stepped.s.Round(stepped.arena[:0])
				walkAlways = true
				walked.arena = walked.s.Round(walked.arena[:0])
				walkAlways = false
				skip := -1
				if rng.IntN(3) == 0 {
					skip = rng.IntN(30) // a client whose frame is not built this round
				}
				for i := range stepped.clients {
					if i == skip {
						continue
					}
					sc, wc := stepped.clients[i], walked.clients[i]
					stepped.arena = stepped.s.Build(&sc.v, sc.e, acks[i], stepped.arena, &stepped.frame)
					walkAlways = true
					walked.arena = walked.s.Build(&wc.v, wc.e, acks[i], walked.arena, &walked.frame)
					walkAlways = false
					if sc.v.walked == stepped.s.rnd && sc.v.marked != stepped.s.rnd {
						inStep++
					}
					sm, wm := message(&stepped.frame), message(&walked.frame)
					if !bytes.Equal(sm, wm) || stepped.frame.Quiet != walked.frame.Quiet ||
						!slices.Equal(stepped.frame.Statics, walked.frame.Statics) {
						t.Fatalf("round %d, client %d: the frame in step is\n%x (quiet %v, statics %v)\nthe walk's\n%x (quiet %v, statics %v)",
							round, i, sm, stepped.frame.Quiet, stepped.frame.Statics, wm, walked.frame.Quiet, walked.frame.Statics)
					}
					if len(sm) == 0 {
						continue
					}
					frames++
					if rng.IntN(4) == 0 {
						lost++ // replaced before it was written
						continue
					}
					sc.v.Written.Store(stepped.frame.Round)
					wc.v.Written.Store(walked.frame.Round)
				}
			}
			t.Logf("%d frames, %d lost; %d built in step", frames, lost, inStep)
			if tc.los {
				if inStep > 0 {
					t.Fatalf("%d frames built in step with line of sight", inStep)
				}
				return
			}
			if inStep < frames/4 {
				t.Fatalf("%d of %d frames built in step; the test does not exercise the path", inStep, frames)
			}
		})
	}
}
