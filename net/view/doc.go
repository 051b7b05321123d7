// Package view is the Go reference of a client's view of an Area: it
// applies the server's messages (area_info, static, presence, snapshots)
// exactly as docs/protocol.md says a client must, so that tests, the load
// driver and anyone writing a client can check a view against the server's
// world.
//
// # Outline
//
//   - [View]: the Area's geometry (from area_info), each cell's map (from
//     static), the bound players (from presence) and the entities in view
//     (from the snapshots' records). [View.Apply] takes any server message.
//   - The snapshot rule: a reset drops the view; records apply in order
//     (steps and positions move known entities, enter and cell records put
//     whole entities, forget drops a cell); then entities standing in a
//     cell the view does not hold are dropped.
//
// # Caveats
//
//   - A View belongs to one goroutine and allocates (maps): it is a
//     reference and a test tool, not a game client's hot path.
//   - Apply returns an error for a frame that breaks the protocol (a step
//     of an entity the view does not hold, a cell off the Area); the view
//     is then not to be trusted.
package view
