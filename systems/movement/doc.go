// Package movement holds the systems that turn players' intents into moves:
// [Intake] queues each tick's intents on their entities, [Movement] applies
// them, one move per tick within each body's movement budget.
//
// # Rules
//
// Every intent gets exactly one answer in the Area's Outbox:
//
//   - at arrival: OutcomeEntityGone (no such body), OutcomePortalInProgress
//     (the body is crossing a portal), OutcomeInvalid (an unknown kind or
//     direction), OutcomeNotAllowed (a diagonal step where the rules forbid
//     them), OutcomeTooFast (the body's queue of 8 is full);
//   - in the queue, in seq order: OutcomeSuperseded (a newer move-to or a
//     stop replaced it), OutcomeApplied, OutcomeBlocked (a wall or a body,
//     or a diagonal that would cut a wall's corner), OutcomeOutOfBounds,
//     OutcomeNoPath (no route to a move-to target).
//
// So answers to queued intents come in seq order; an intent refused at
// arrival is answered at once, possibly before older queued ones.
//
// A step waits at the head of the queue until the body's budget allows it
// (Mover.Period ticks between steps; a step intent's turns keep their pace,
// Mover.Paced: a late step does not delay the next); a move-to is applied when its path is
// planned (A*, a bounded number of searches per tick) and the body then
// walks it one step per budget, re-planning around bodies in its way. A step
// or a stop cancels the walk.
package movement
