// Package ecs is ley's engine core: an [Area] is one world (an arche ECS
// world plus a flat [Grid]), ticked by a host-level [Clock] that drives
// many Areas from a small worker pool. It knows nothing of sockets,
// sessions or the director, but it is not game-agnostic: it holds the
// components every ley game shares (bodies on squares, players, health,
// creatures' AI state) and the Area kinds' rule sets; the rules that act
// on them are systems (package systems).
//
// # Outline
//
//   - [Grid]: the map as flat []int32 layers (floor, occupant, sight),
//     value (layer*h + y)*w + x. Hot loops take a layer with [Grid.Layer]
//     and index it by [Cell].
//   - [Area]: world, grid, tick counter, inbox, outbox, rule set and the
//     systems that run every tick in a fixed order ([Area.Use], [System]).
//     Bodies (entities with [Position] and [Body]) occupy exactly one
//     occupant square; [Area.SpawnPlayer], [Area.MoveBody] and
//     [Area.Despawn] keep grid and ECS in step, [Area.CheckGrid] verifies it.
//   - [Rules]: what an Area of a [Kind] allows (home, village, arena,
//     offline); systems consult it instead of branching on the kind.
//   - Components: [Position], [Body], [Player], [Health], [Creature],
//     [Mover], [Intents], [Path], [Wander], [Transit]; plain structs
//     without pointers.
//   - [Event]: what a tick did that the host may tell its players (a hit,
//     a death, a door), in [Area.Events] until AfterTick has run.
//   - [Intent] and [Outcome]: every intent is answered exactly once in the
//     Area's Outbox; the host maps outcomes to wire codes.
//   - [Clock]: one loop for all of a host's Areas. Active Areas tick at
//     20 Hz; frozen ones (nobody bound, nobody coming) only have their
//     inbox drained and their timer checked, 4 times a second, and only
//     while something is posted or a timer set: the rest cost nothing.
//     An active Area in which nothing can change (nothing posted, no move
//     pending, every system an idle [Idler]) rests through ticks its owner
//     has no work in either ([Area.Rest]), asleep in the Clock's wheel:
//     no system runs and the Clock does not visit it until its owner's
//     work, its timer or something posted to it comes. The rest through
//     an Area's next slot is decided at the end of the tick before it
//     ([Area.Ahead]), so that a woken Area costs its Clock one visit, not
//     a second to find it at rest.
//   - [Area.Park]: a frozen Area lets go of its world, grid and systems,
//     keeping its shell (inbox, timer, tick, Clock, hooks); the restore it
//     is given builds it again ([Area.Renew]) before whatever runs it
//     next. Its owner keeps the state it needs for that.
//   - [Area.Stats]: p50/p95/p99/max tick time over the last [StatsWindow]
//     ticks, time per system, lateness, entity counts, mode.
//
// The ECS types systems need ([Entity], [Filter2], [Query2], [Map], ...)
// are re-exported here as aliases of arche's, so that arche stays behind
// this package.
//
// # Concurrency
//
// An Area is ticked or polled by one goroutine at a time (the Clock's slot
// ends only when all its Areas are done). Other goroutines reach it only
// through [Area.Post] (intents), [Area.PostControl] (functions run at the
// start of the next tick or poll), [Area.Wake], [Area.Freeze], [Area.Mode]
// and [Area.Stats].
//
// # Caveats
//
//   - No structural ECS change while a query iterates: spawn and despawn
//     from [Area.Defer] (Despawn defers itself when the world is locked).
//   - A steady-state tick allocates nothing; systems build their filters in
//     Init and keep their scratch.
//   - A frozen Area's time stands still: its Tick does not advance. A
//     resting Area's goes on: the ticks it rests through count.
package ecs
