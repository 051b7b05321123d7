// Package astar finds a shortest path on a grid for one agent with a
// destination nobody else shares (a player's click-to-move). Creatures that
// converge on shared targets use flow fields instead.
//
// # Outline
//
//   - [Searcher] holds every buffer a search needs and reuses them: after the
//     first search on a grid size, searches allocate nothing.
//   - [Searcher.Search] runs A* with an expansion budget and answers a path,
//     [ErrNoPath] or [ErrBudget].
//
// The grid is given as flat layers indexed y*w + x, as ley's ecs.Grid holds
// them: a floor layer (0 is a wall, n > 0 costs n to enter) and, optionally,
// an occupant layer (non-zero squares are blocked, except the goal).
//
// # Caveats
//
// Diagonal steps never cut a wall's corner: a diagonal step needs both of
// its orthogonal neighbours to be non-walls. Movement uses the same rule.
// A Searcher is not safe for concurrent use; keep one per Area.
package astar
