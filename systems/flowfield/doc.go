// Package flowfield computes flow fields (Dijkstra maps) for crowds that
// converge on shared targets: one outward sweep from a target over a grid's
// movement costs gives every reachable square its distance to the target and
// the direction of its next step, so an agent heading there does one array
// lookup per tick instead of a search of its own.
//
// The package is pure: no ECS, only flat slices. The creature system feeds
// it the floor layer and the targets' squares.
//
// # Outline
//
//   - [Field]: one target's published distance and direction grids (flat
//     arrays indexed by square, y*w + x).
//   - [Registry]: the fields of one grid, shared by everything heading for
//     the same target ([Registry.Acquire] / [Registry.Release] count the
//     users), recomputed only when a target moves to another square
//     ([Registry.Retarget]) or a blocking change touches the field
//     ([Registry.Invalidate]), by a work queue whose work per call is capped
//     by a time budget ([Registry.Run]). A sweep that does not fit in one
//     call resumes in the next (the heap is kept); the finished field is
//     swapped in whole, so readers see either the old field or the new one.
//   - [Field.Sweep]: one whole sweep into a caller's Field, for tests, benchmarks
//     and callers without a registry.
//
// The cost model is the floor layer's: 0 is a wall, n > 0 costs n to enter.
// Steps go in the 8 compass directions (or 4), numbered like ecs.Dir
// (North = 0, clockwise, y grows southwards); a diagonal step needs both
// orthogonal neighbours to be non-walls (ecs.Grid.CheckStep's and A*'s rule).
// A square's distance is the cheapest cost of a walk from it to the target,
// counting the cost of every square entered (the target's included, the
// start's excluded).
//
// # Caveats
//
//   - A Registry and its Fields belong to one goroutine (the Area's).
//   - Distances are int32: keep w*h*(largest cost) below 2^31.
//   - The floor slice is read while sweeping, possibly over several Run
//     calls; a floor change must be reported with Invalidate, or fields go
//     stale silently.
//   - A Field returned by [Registry.Field] stays valid until the next Run,
//     Acquire, Release or Invalidate call; look it up again each tick.
package flowfield
