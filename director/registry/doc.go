// Package registry is the director's record of a realm's area hosts and
// live Areas, and the control channel they speak on.
//
// # Outline
//
//   - [Registry.Serve] takes control connections: before it registers, a
//     connection is held to a small frame, a deadline and a share of the
//     waiting slots (per source address, the oldest shed for a newcomer).
//     A host registers with a spawn token (one this director issued, or
//     one of a host an earlier director spawned: [Registry.Recall]), a
//     certificate of the realm's CA, or the host key.
//   - Placement: [Registry.EnsureLive] makes an Area live on the host with
//     the most memory room for it (Areas cost by their size, not their
//     count), starting one when none has room, with a new incarnation
//     (epoch) and a fresh placement credential whose hash the store keeps.
//     A host that registers again has an Area adopted back only with that
//     credential, for the current epoch.
//   - [Registry.Grant] registers a single-use join grant on the Area's
//     host; [Registry.EvictElsewhere] makes sure a character has no body
//     anywhere else before it is let in (one character, one Area).
//   - [Registry.Spectate] registers a spectator grant for an admin (the
//     console's Spectate): a peer with no body, refused [ErrSpectatorsFull]
//     past the host's bounds.
//   - A host speaks only for the Areas placed on it, at their current
//     epoch; its snapshots are checked (seq bound, characters on the grid,
//     a blob a host could load, no more creatures than the map makes)
//     before they are written, and written again when the store was
//     unavailable ([Registry.StoreInDoubt]).
//   - Hosts outlive their director. A host whose link ended while its
//     process may still live keeps its sessions for its lease, so its
//     Areas are not made live elsewhere, nor its characters moved, before
//     the lease ran out ([Registry.Lost]); one known dead (its parent saw
//     it exit, or its process is gone from this machine) is replaced at
//     once.
//
// # Concurrency
//
// A Registry is safe for concurrent use; see the Registry type for what
// its lock guards.
package registry
