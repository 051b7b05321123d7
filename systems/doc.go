// Package systems is the home of ley's ECS systems, one sub-package per
// concern. Pure algorithms with no ECS in them (A*, and later flow fields,
// the spatial hash, field of view) are leaf packages with their own tests;
// the thin ECS systems that call them sit beside them.
//
// # Outline
//
//   - [github.com/leyworks/ley/systems/movement]: the intake of players'
//     intents into their queues and the movement that applies them.
//   - [github.com/leyworks/ley/systems/wander]: bodies that stroll at random.
//   - [github.com/leyworks/ley/systems/astar]: A* for one agent's unique
//     destination.
//   - [github.com/leyworks/ley/systems/flowfield]: Dijkstra flow fields
//     shared by everything heading for one target.
//   - [github.com/leyworks/ley/systems/spatial]: the spatial hash (interest
//     management and sensing).
//   - [github.com/leyworks/ley/systems/fov]: symmetric shadowcasting (fields
//     of view and line of sight over the grid's sight layer).
//   - [github.com/leyworks/ley/systems/creature]: spawners, sensing through
//     the spatial hash, and the creature state machine.
//   - [github.com/leyworks/ley/systems/persist]: an Area's durable state to
//     a blob and back.
//   - [github.com/leyworks/ley/systems/statics]: an Area's static map: the
//     ground, the objects on squares (doors, trees, signs, portals...),
//     each cell's map version; it keeps the grid's floor and sight layers
//     in step with them.
//   - [github.com/leyworks/ley/systems/action]: what an action does (open
//     a door, attack) and what follows a death: the engine's rules for
//     both, emitting events (ecs.Event) the host reads after the tick.
//   - [github.com/leyworks/ley/systems/interest]: the snapshot rounds:
//     interest over the spatial hash, per-cell deltas encoded once, line
//     of sight; the host keeps a View per session and delivers the frames.
//   - [github.com/leyworks/ley/systems/build]: an Area made from the
//     realm's content, with its systems in order: what the area host runs
//     and the browser's engine runs too.
//   - [github.com/leyworks/ley/systems/scenario]: populated Areas for the
//     demo and benchmarks.
//
// Systems import ley's ecs package only (and net/wire for message types);
// never arche directly, never the area host or the director.
package systems
