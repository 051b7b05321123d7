// Package sense answers "what can this creature sense from here": the
// emitters (entities with ecs.Position and ecs.Emitter) near a square, with
// their strength as perceived at that distance, optionally only those in
// line of sight.
//
// Emitters ride on the same spatial hash as interest management
// (systems/spatial), marked so that they lead their hash cell's list: a
// query visits the hash cells within reach and stops in each at the first
// entity that is no emitter, so crowds of creatures in a cell cost nothing.
//
// # Outline
//
//   - [Sensor]: the query. [Sensor.Sense] appends every emitter perceived
//     from a square to the caller's slice; [Sensor.Strongest] and
//     [Sensor.Nearest] pick one. No query allocates.
//   - [Perceived]: the falloff. Strength falls linearly with Chebyshev
//     distance d (the number of steps with diagonals): Strength*(Radius-d)/
//     Radius, full on the emitter's square, zero at Radius squares and past.
//     An emitter with Strength 0 (a quiet one) is never sensed.
//   - [System]: the ECS system "sense": each tick it (re)inserts every
//     emitter into the hash at its square, marks it, and records the
//     largest radius, which bounds the queries. It runs before the systems
//     that sense (creatures).
//
// # Caveats
//
//   - Bodies are where they stand (the Area keeps the hash in step); a
//     non-body emitter is where the sense system last put it, at most a
//     tick old. A despawned emitter leaves the hash at once.
//   - Line of sight is systems/fov's ray rule over the floor layer (walls
//     block; bodies do not).
package sense
