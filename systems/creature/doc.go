// Package creature is the creatures' AI: spawners that put creatures into
// an Area at a rate up to a cap, and a small state machine per creature
// that follows shared flow fields to its target, seeks what it senses, or
// wanders, within its movement budget and never onto another body.
//
// # Outline
//
//   - [Config] and [Spawner]: where creatures come from (square, kind,
//     rate, cap, target entity) and the knobs of their behaviour.
//   - [System] ("creatures"): each tick it updates its targets (their
//     squares retarget the flow fields, which are recomputed only when a
//     target changes square, within the Config's FieldBudget), steps every
//     ready creature, and queues spawns through ecs.Area.Defer (no
//     structural change during the query).
//   - [Systems]: the two systems in their order: sense, creatures. Wire
//     them after movement and wander: intake, movement, wander, sense,
//     creatures. They share the Area's spatial hash (spatial.Attach), which
//     the Area keeps in step with every move as it happens.
//
// # States
//
// A creature with a target it may hunt, standing next to it (Chebyshev
// distance 1), attacks ([Attack]: it stands and the attack counter grows).
// Farther away it follows the target's flow field ([Follow]): the field's
// direction, or, when a body stands there, the neighbour with the smallest
// distance that still decreases it (a sidestep), or it waits. A target
// that is a player in an Area whose rules forbid hunting players makes it
// stand ([Stand]). Without a usable target (none, gone, or its field not
// swept yet, or unreachable) it senses every SenseEvery ticks and steps
// greedily towards the strongest emitter it perceives ([Seek]), or else
// strolls at random ([Wander]) or rests ([Idle]).
//
// # Caveats
//
//   - Fields are shared per target entity and dropped when no creature of
//     this system heads for it any more; their buffers go back to a pool.
//   - A wall placed or removed must be reported with [System.WallChanged].
//   - Sensing sees bodies where they stand at the moment of the query;
//     emitters' marks are refreshed by the sense system once a tick.
package creature
