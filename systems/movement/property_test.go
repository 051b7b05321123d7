package movement

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/wander"
	"pgregory.net/rapid"
)

// TestEveryIntentAnsweredOnce drives random intents (valid and not, for
// live, despawned and in-transit bodies) over random ticks among walls,
// wanderers and players, and checks after every tick: each seq answered at
// most once, answers to queued intents in seq order per entity, acks never
// going back, no two bodies on one square; and at the end, once the queues
// drained, every seq answered exactly once.
func TestEveryIntentAnsweredOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(4, 14).Draw(t, "size")
		rules := ecs.RulesFor(ecs.KindVillage)
		rules.Diagonal = rapid.Bool().Draw(t, "diagonal")
		a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: size, H: size})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Use(&Intake{}, &Movement{}, &wander.System{}); err != nil {
			t.Fatal(err)
		}
		for i := rapid.IntRange(0, size*size/5).Draw(t, "walls"); i > 0; i-- {
			a.Grid.Set(ecs.LayerFloor, ecs.Cell(rapid.IntRange(0, size*size-1).Draw(t, "wall")), ecs.FloorWall)
		}
		var players []ecs.Entity
		for i := rapid.IntRange(1, 6).Draw(t, "players"); i > 0; i-- {
			x, y := int32(rapid.IntRange(0, size-1).Draw(t, "x")), int32(rapid.IntRange(0, size-1).Draw(t, "y"))
			if e, err := a.SpawnPlayer(uint64(i), x, y); err == nil {
				players = append(players, e)
				period := uint8(rapid.IntRange(1, 4).Draw(t, "period"))
				movers := ecs.NewMap[ecs.Mover](&a.World)
				movers.Get(e).Period = period
			}
		}
		for i := rapid.IntRange(0, 10).Draw(t, "wanderers"); i > 0; i-- {
			a.SpawnWanderer(int32(rapid.IntRange(0, size-1).Draw(t, "x")), int32(rapid.IntRange(0, size-1).Draw(t, "y")), uint32(i), 1, 2)
		}
		if len(players) == 0 {
			t.Skip("no free square for a player")
		}
		type key struct {
			e   ecs.Entity
			seq uint32
		}
		answered := map[key]ecs.Outcome{}
		queuedAt := map[key]bool{} // refused at arrival or not: filled from outcomes
		lastQueued := map[ecs.Entity]uint32{}
		lastAck := map[ecs.Entity]uint32{}
		sent := map[key]bool{}
		seq := map[ecs.Entity]uint32{}
		a.AfterTick = func(a *ecs.Area) {
			for _, ans := range a.Outbox {
				k := key{ans.Entity, ans.Seq}
				if !sent[k] {
					t.Fatalf("answer to unsent %+v", ans)
				}
				if _, dup := answered[k]; dup {
					t.Fatalf("seq %d of entity %d answered twice", ans.Seq, ans.Entity.ID())
				}
				answered[k] = ans.Outcome
				switch ans.Outcome {
				case ecs.OutcomeTooFast, ecs.OutcomeEntityGone, ecs.OutcomePortalInProgress, ecs.OutcomeInvalid, ecs.OutcomeNotAllowed:
					// refused at arrival: may come before older queued ones
				default:
					queuedAt[k] = true
					if ans.Seq < lastQueued[ans.Entity] {
						t.Fatalf("entity %d: queued seq %d answered after %d", ans.Entity.ID(), ans.Seq, lastQueued[ans.Entity])
					}
					lastQueued[ans.Entity] = ans.Seq
				}
			}
		}
		playerMap := ecs.NewMap[ecs.Player](&a.World)
		ticks := rapid.IntRange(1, 60).Draw(t, "ticks")
		for tick := 0; tick < ticks; tick++ {
			for n := rapid.IntRange(0, 12).Draw(t, "intents"); n > 0; n-- {
				e := players[rapid.IntRange(0, len(players)-1).Draw(t, "who")]
				seq[e]++
				it := ecs.Intent{Seq: seq[e]}
				switch rapid.IntRange(0, 9).Draw(t, "kind") {
				case 0:
					it.Kind = ecs.IntentStop
				case 1, 2:
					it.Kind = ecs.IntentMoveTo
					it.X = int32(rapid.IntRange(-1, size).Draw(t, "tx"))
					it.Y = int32(rapid.IntRange(-1, size).Draw(t, "ty"))
				case 3:
					it.Kind = ecs.IntentKind(rapid.IntRange(0, 255).Draw(t, "junk"))
				default:
					it.Kind = ecs.IntentStep
					it.Dir = ecs.Dir(rapid.IntRange(0, 8).Draw(t, "dir"))
				}
				sent[key{e, it.Seq}] = true
				if !a.Post(e, it) {
					t.Fatal("inbox refused below its limit")
				}
			}
			switch rapid.IntRange(0, 30).Draw(t, "event") {
			case 0:
				a.Despawn(players[rapid.IntRange(0, len(players)-1).Draw(t, "victim")])
			case 1:
				if e := players[rapid.IntRange(0, len(players)-1).Draw(t, "traveller")]; a.Alive(e) {
					if err := a.SetTransit(e, 1, !a.InTransit(e)); err != nil {
						t.Fatal(err)
					}
				}
			}
			a.Step()
			if err := a.CheckGrid(); err != nil {
				t.Fatalf("tick %d: %v", tick, err)
			}
			for _, e := range players {
				if !a.Alive(e) {
					continue
				}
				ack := playerMap.Get(e).AckSeq
				if ack < lastAck[e] {
					t.Fatalf("entity %d: ack went back from %d to %d", e.ID(), lastAck[e], ack)
				}
				lastAck[e] = ack
			}
		}
		// Drain: no new intents; every queue empties within QueueLen*period ticks
		// (move-tos may walk on, but their intents are answered when planned).
		for i := 0; i < ecs.QueueLen*4+2; i++ {
			a.Step()
		}
		for k := range sent {
			if _, ok := answered[k]; !ok {
				// A body despawned with intents queued has no one left to answer
				// for it: the host answers ENTITY_GONE for a dropped body's
				// queue when it removes it. Here only live bodies must be complete.
				if a.Alive(k.e) {
					im := ecs.NewMap[ecs.Intents](&a.World)
					q := im.Get(k.e)
					t.Fatalf("seq %d of live entity %d never answered; queue len %d head %+v transit %v", k.seq, k.e.ID(), q.Len(), *q.Peek(), a.InTransit(k.e))
				}
			}
		}
	})
}
