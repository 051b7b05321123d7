// Package interest runs an Area's snapshot rounds: interest management
// over the spatial hash, per-cell deltas encoded once for every client
// that sees the cell, and line of sight where the rules ask for it. It is
// the engine's half of the snapshots; the area host keeps a [View] per
// session and delivers the frames [System.Build] makes.
//
// # Outline
//
//   - [New] attaches a [System] to an Area as its body index: every
//     spawn, move, despawn and change of state marks the entity touched.
//   - [System.Round] turns what changed since the last round into records,
//     each encoded once into a shared arena and grouped by hash cell.
//   - [System.Build] makes one client's frame of the round: its header,
//     then slices of the arena (the records of the cells it is in sync
//     with, whole cells it is not, forgets), in a [Frame] written with one
//     writev, and the cells whose map it must get first.
//   - A round with nothing new for a client (no record, no map, the same
//     ack_seq, its last frame written whole) makes it no frame
//     ([Frame].Quiet), until its last frame is the keep-alive's ticks old
//     ([System.SetKeepAlive]); an owner may then run no round at all
//     until a keep-alive is due ([System.Rests], [System.KeepAliveAt]).
//     When nothing in the Area changed since a client's cells were last
//     brought up to date, the round is found quiet without walking them:
//     an Area at rest costs a few loads per client a round.
//   - A client in step with the rounds (its last frame built for the last
//     round and not lost, its cells those of its last walk, the map as it
//     was then) gets its frame from the cells whose content changed this
//     round, without walking its cells ([System.Build]): a round costs it
//     what changed, not what it sees. The frame is the one a walk makes,
//     byte for byte.
//   - In line-of-sight Areas a client is sent only what symmetric
//     shadowcasting from its square lets it see (los.go).
//
// docs/protocol.md ("Snapshots") specifies what a client is sent; the
// tests hold every frame to net/view, the protocol's reference.
//
// # Caveats
//
// A System belongs to its Area's goroutine. A steady round allocates
// nothing: the arena, the scratch and each View settle at the size they
// need. A Frame's parts point into the arena of its round: the caller
// keeps that arena's array alive until the frame is written.
package interest
