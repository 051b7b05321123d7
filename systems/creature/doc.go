// Package creature is the creatures' AI: spawners that keep a number of
// creatures of one kind alive in their part of the map, and a small state
// machine per creature that senses what it hunts through the spatial hash,
// chases it along shared flow fields (players) or greedily (other
// creatures), attacks it, returns to its spawner when it strays past its
// leash, and wanders or idles otherwise — within its movement budget and
// never onto another body.
//
// # Outline
//
//   - [Kind]: what a creature of a kind is (health, pace, sense radius,
//     attack, what it hunts, whether it wanders); [Spawner]: where
//     creatures of a kind appear, how many are kept alive, how soon a dead
//     one comes back, and its leash; [Config] holds both.
//   - [System] ("creatures"): each tick it sweeps flow fields within its
//     budget, steps every ready creature and queues spawns through
//     ecs.Area.Defer (no structural change during the query).
//
// # States
//
// A creature with no target senses every SenseEvery ticks (staggered by
// entity ID): the nearest body within its kind's sense radius that it
// hunts (a player, if its kind hunts players and the Area's rules let
// creatures hunt them; a creature of a kind it preys on), standing within
// its leash, and — where the rules ask for it (SenseLOS) — in its line of
// sight (systems/fov over the grid's sight layer: walls, trees and closed
// doors hide). It then chases it ([Chase]): a player along the player's
// flow field, shared by every creature chasing that player and swept again
// only when the player changes square; a creature greedily, with A* around
// what blocks it. Next to its target (Chebyshev distance 1; diagonally only
// where the rules allow diagonal steps) it attacks ([Attack]) once every
// AttackEvery ticks, through ecs.Area.Hurt. A target that dies, leaves the
// world, crosses a portal, strays past the leash or may no longer be hunted
// is dropped. A creature past its leash with no target goes back towards
// its spawner ([Return]); otherwise it strolls ([Wander]) if its kind
// wanders, or rests ([Idle]).
//
// # Spawning
//
// On its first tick the system fills every spawner to its count. After a
// creature of a spawner dies, a new one appears Respawn ticks later on a
// free square of the spawner's area (or the nearest free square to it),
// one at a time.
//
// # Caveats
//
//   - A square whose floor changed (a door opened or closed) must be
//     reported with [System.FloorChanged] so that flow fields reaching it
//     are swept again.
//   - Sensing sees bodies where they stand at the moment of the query.
package creature
