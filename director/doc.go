// Package director runs a realm: the only database client, it owns
// accounts and sessions, Area records and membership, the realm door, the
// registry of area hosts (and the host processes it spawns), Area
// lifecycle, join grants, and the persistence of every Area's snapshots.
//
// # Outline
//
//   - [Director] serves the HTTP API (JSON under /v1; every refusal, 404
//     and 405 included, as {code, message}, an internal one with an
//     error_id logged beside its cause, a 429 with Retry-After), the
//     control channel hosts register on, and the housekeeping loops;
//     [Config] tunes it, per-account quotas included.
//   - A join (POST /v1/areas/{id}/join) checks membership, the account's
//     quotas and the realm door, makes the Area live (picks a host with
//     room or spawns one within the process rail, begins a new incarnation
//     — the epoch that fences older ones — and hydrates the Area from its
//     last snapshot), registers a single-use grant on the host, and only
//     then answers {grant, ws_url, join_id}. Every refusal says why:
//     NO_SUCH_AREA (a missing Area and another's alike), QUOTA_EXCEEDED,
//     REALM_CLOSED, REALM_FULL, NEW_PLAYERS_CLOSED, AT_CAPACITY,
//     GRANT_FAILED, IN_ANOTHER_AREA.
//   - Hosts' snapshots are written idempotently (area, seq) and fenced by
//     epoch, then acked; presence reports drive the door's head count and
//     the closing of Areas idle past AreaIdleGrace.
//   - A host whose link closes or whose heartbeats stop is unregistered at
//     once; its Areas come back (re-homed) on their next join.
//
// # Caveats
//
// Spawned hosts die with the director (a parent-death signal on Linux), so
// a restarted director starts from the store, never from orphans.
package director
