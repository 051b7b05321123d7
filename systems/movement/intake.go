package movement

import "github.com/leyworks/ley/ecs"

// Intake moves the tick's intents (Area.Intents) into their entities'
// queues, answering at once those that cannot be queued. An intent of a
// session that no longer drives its body (taken over) is refused
// OutcomeSuperseded.
type Intake struct {
	intents ecs.Map[ecs.Intents]
	players ecs.Map[ecs.Player]
}

// Name implements ecs.System.
func (*Intake) Name() string { return "intake" }

// Init implements ecs.System.
func (s *Intake) Init(a *ecs.Area) error {
	s.intents = ecs.NewMap[ecs.Intents](&a.World)
	s.players = ecs.NewMap[ecs.Player](&a.World)
	return nil
}

// Idle implements ecs.Idler: with nothing posted there is nothing to take
// in.
func (*Intake) Idle(*ecs.Area) bool { return true }

// Update implements ecs.System.
func (s *Intake) Update(a *ecs.Area) {
	for _, in := range a.Intents {
		e, it := in.Entity, in.Intent
		it.Superseded = false
		if !a.Alive(e) || !s.intents.Has(e) {
			a.Answer(e, &it, ecs.OutcomeEntityGone)
			continue
		}
		if pl := s.players.Get(e); pl != nil && pl.Session != it.Tag {
			a.Answer(e, &it, ecs.OutcomeSuperseded)
			continue
		}
		if a.InTransit(e) {
			a.Answer(e, &it, ecs.OutcomePortalInProgress)
			continue
		}
		switch it.Kind {
		case ecs.IntentStep, ecs.IntentAction:
			if it.Dir >= ecs.NumDirs {
				a.Answer(e, &it, ecs.OutcomeInvalid)
				continue
			}
			if it.Dir.Diagonal() && !a.Rules.Diagonal {
				a.Answer(e, &it, ecs.OutcomeNotAllowed)
				continue
			}
		case ecs.IntentPlace, ecs.IntentTake, ecs.IntentMoveItem, ecs.IntentCraft, ecs.IntentUse,
			ecs.IntentTrade, ecs.IntentOffer, ecs.IntentConfirm, ecs.IntentCancel, ecs.IntentPrice, ecs.IntentBuy:
			if it.Dir >= ecs.NumDirs {
				a.Answer(e, &it, ecs.OutcomeInvalid)
				continue
			}
		case ecs.IntentMoveTo, ecs.IntentStop:
		default:
			a.Answer(e, &it, ecs.OutcomeInvalid)
			continue
		}
		q := s.intents.Get(e)
		if q.Full() {
			a.Answer(e, &it, ecs.OutcomeTooFast)
			continue
		}
		// A stop supersedes everything queued; a move-to supersedes queued
		// move-tos. The superseded wait for their turn to be answered.
		if it.Kind != ecs.IntentStep {
			for i := 0; i < q.Len(); i++ {
				if old := q.At(i); it.Kind == ecs.IntentStop || old.Kind == ecs.IntentMoveTo {
					old.Superseded = true
				}
			}
		}
		q.Push(it)
		a.MovesPending++
	}
	a.Intents = a.Intents[:0]
}
