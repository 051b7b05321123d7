// Package spatial is the spatial hash of an Area: the grid cut into square
// hash cells of a configurable side (8 or 16 squares, say), each holding the
// entities standing in it. Creatures' sensing and interest management for
// snapshots both ask it "who is near here".
//
// # Outline
//
//   - [Hash]: flat arrays only. Each hash cell is an intrusive doubly-linked
//     list threaded through next/prev slices indexed by entity ID, so
//     insert, remove and move are O(1) and a query allocates nothing.
//     Iterate a cell with [Hash.First] / [Hash.Next]; list the cells near a
//     point with [Hash.CellsWithin]; [Hash.Version] counts the changes of a
//     cell's content, for snapshot builders.
//   - [Attach] gives an Area its one hash and registers it as an
//     [ecs.BodyIndex]: the Area inserts, moves and removes bodies in it at
//     the moment it spawns, moves and despawns them, so the hash agrees with
//     the world at every instant, including after a despawn in a control
//     function, a timer or an after-tick hook. [Hash.Insert] and
//     [Hash.Remove] add non-body entities (emitters) by hand.
//   - Entities marked with [Hash.Mark] (emitters) are kept at the front of
//     their cell's list, so a query for them stops at the first unmarked one.
//   - [Hash.Check] verifies the hash against its Area, for tests.
//
// # Caveats
//
//   - A Hash belongs to the goroutine ticking its Area.
//   - The hash knows an entity by its ID; arche reuses IDs, and the Area
//     removes an entity from the hash before its ID can be reused.
//   - A non-body entity inserted by hand leaves the hash when the Area
//     despawns it (the Area removes every despawned entity from its
//     indexes).
package spatial
