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
//     [Hash.Apply] folds an Area's move log (ecs.Area.Moves) in;
//     [Hash.Insert] and [Hash.Remove] add non-body entities (static
//     emitters). Iterate a cell with [Hash.First] / [Hash.Next]; list the
//     cells near a point with [Hash.CellsWithin]; [Hash.Version] counts the
//     changes of a cell's content, for snapshot builders.
//   - Entities marked with [Hash.Mark] (emitters) are kept at the front of
//     their cell's list, so a query for them stops at the first unmarked one.
//   - [System]: the thin ECS system ("spatial") that applies the move log
//     each tick. It must run after every system that moves, spawns or
//     despawns bodies.
//
// # Caveats
//
//   - A Hash belongs to the goroutine ticking its Area.
//   - The hash knows an entity by its ID; arche reuses IDs, and the move log
//     orders a despawn before the spawn that reuses its ID.
//   - Bodies moved after the spatial system ran in a tick are missed (the
//     log is emptied at the tick's end): keep it last among movers.
//   - A non-body entity inserted by hand must be removed by hand before it
//     is despawned; queries skip dead entities anyway.
package spatial
