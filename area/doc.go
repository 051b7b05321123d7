// Package area is the area host: a pool of Areas in one process behind one
// WebSocket listener (net/gate), ticked by one ecs.Clock, with a control
// link to the director (net/control).
//
// # Outline
//
//   - [Host] runs it all; [Config] and [DefaultConfig] tune it.
//   - Sessions: a connection receives nothing but hello_ack or an error
//     until a valid hello{grant, join_id} binds it to its player's body.
//     Grants come from the director, are single-use and expire. A second
//     login of the account takes the body over (the old peer gets
//     taken_over before its close); a dropped peer's body stays for
//     Config.ResumeGrace, and resume{token, join_id} rebinds it. A peer
//     whose binding is removed under it is told rehello.
//   - Intents are rate limited per connection (token bucket; a flood is
//     closed with 1008), posted to the Area's inbox, and every one is
//     answered: rejections as intent_result, applied ones through the next
//     snapshot's ack_seq.
//   - The engine builds each Area (systems/build: its map, rules,
//     creatures, and the systems that run its rules, actions and deaths
//     included); the host sets none of the engine's rules. After each tick
//     the host's steps run in order (afterTick): crossings, chores,
//     answers, snapshots.
//   - Snapshots: every Config.SnapshotEvery ticks the engine's interest
//     rounds (systems/interest) encode each spatial-hash cell's changes
//     once; each bound peer's frame (its own small header plus the shared
//     records of the cells in its interest) is delivered latest-wins with
//     writev (deliver.go), the maps of cells that changed before it.
//   - Persistence: every Config.PersistEvery while active (put off to
//     the next of the host's persist slots, a 32nd of it, so that Areas
//     due together send together and the director writes them in one
//     transaction; presence reports keep slots of their own), on freeze
//     and on close, each Area sends
//     snapshot{area, epoch, seq, blob, characters} to the director and
//     keeps it until acked, resending after two intervals and on
//     reconnect.
//   - Portals: a player whose body steps onto a portal square crosses
//     through the director (portal_out, resent until answered); the host
//     moves the body out and sends portal_moved, or restores it beside the
//     portal with portal_transfer_rejected or, after its timeout,
//     portal_blocked{TIMEOUT} — and keeps asking, so a late success still
//     moves the player (see portal.go).
//   - Spectators (spectate.go): a spectator grant from the director binds
//     a peer with no body that the console watches an Area through: the
//     whole Area's cells that changed each round (encoded once for all),
//     or a player's own frames, or a creature's flow field (watch); its
//     intents are refused SPECTATOR. It never counts as a player and keeps
//     no Area awake; MaxSpectatorsPerArea and MaxSpectatorsPerHost bound
//     them.
//   - Rest (hostArea.rest): an active Area in which the engine finds
//     nothing that can change rests through the ticks until its chores
//     have something to do (hostArea.choresDue: a grant or a dropped
//     body's grace expires, a persist, resend or presence report is due,
//     or nobody is left and it freezes; not their 250 ms cadence), a
//     round it must run (a tick ran since the last, a client not at
//     rest) or its first keep-alive, whichever comes first; an intent or
//     control work posted to it wakes it in the next slot. A player alone
//     at home who stands still costs about one tick a second, not twenty.
//     The rest is decided at the end of each tick, while what the tick
//     touched is still in the caches (ecs.Area.Ahead), counting on the
//     round's frames being written whole by the next slot
//     (ecs.Area.Expect); the clock visits the Area in that slot only if
//     one is not.
//   - Lifecycle: an Area with nobody bound, no grant pending and no body
//     awaiting a resume freezes; a grant wakes it. Closing tells every peer
//     area_closing{reason, grace_ms}, runs through the grace, sends the
//     final snapshot and waits (bounded) for its ack.
//
// # Files
//
// The files read from the bottom up: each needs only files above it in
// this list (internal/filegraph's test holds them to it).
//
//   - config.go, cost.go, fences_release.go: settings, sizes, fences.
//   - state.go: what a Host holds (its Areas, peers, bodies, grants,
//     crossings, spectators, the control link) and who guards each part.
//   - link.go: sending to the director; peer.go: sending to one peer.
//   - index.go: the host's grant and Area indexes; items.go: inventories.
//   - watch.go: what spectators are sent; persist.go: snapshots and
//     presence for the director.
//   - deliver.go: the snapshot round, intent answers, a close's last words;
//     bind.go: binding, resuming, leaving and evicting bodies; inspect.go.
//   - fault.go: a failed or superseded Area; portal.go: crossings;
//     spectate.go: spectator grants and their sessions.
//   - hostarea.go: an Area's life (its tick's after-steps, its rest,
//     chores, close); session.go: the gate's callbacks, hello and join.
//   - host.go: New, Run, the control link's session and dispatch.
//
// # Concurrency
//
// Gate event loops run the session callbacks, the clock's workers tick the
// Areas, the link's goroutines talk to the director. A hostArea's state
// belongs to the goroutine ticking its Area; others reach it through
// ecs.Area.PostControl. A peer's binding is an atomic pointer to an
// immutable value.
package area
