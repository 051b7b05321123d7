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
//     [Config] tunes it, per-account quotas included. Every route is
//     specified in openapi.yaml (OpenAPI 3.1, served at GET
//     /v1/openapi.yaml): the route table (routeTable) and the document are
//     held to each other by the tests, which also validate every request
//     and answer of the API tests against it. Ids that can exceed 2^53
//     (join_id) are strings in JSON.
//   - Areas are made from the realm's content (Config.Content, package
//     content: the director runs no simulation, it only names kinds and
//     templates and reads maps' sizes and portals): a new Area's kind,
//     template and size follow newAreaShape (templates.go), the built-in
//     EmptyTemplate aside. When an Area is made live, its map's portals
//     are resolved to the oldest Area of their target template and sent
//     with the owner's portals (mapportals.go).
//   - Sign-up makes a new account a member of each starter Area
//     (Config.StarterAreas, AddStarterAreas), so it has somewhere to go;
//     invites and owning an Area are the other ways in.
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
//   - A host speaks only for the Areas placed on it, at their current
//     epoch, and a snapshot is written only if its blob decodes, its
//     characters stand on the grid and its seq is one the incarnation
//     could have reached (registry/guard.go); before registering, a control
//     connection is held to a small frame, a deadline and a cap. Every
//     refusal is counted by reason and logged, rate-limited.
//   - Spawned hosts get an environment built from scratch (no database
//     URL, no host key, no listen address meant for the director) and
//     their spawn token in it, never on their command line; one that exits
//     before registering is reported by GET /readyz, and joins are refused
//     at once while it does.
//   - GET /metrics is served on a listener of its own (Config.Metrics,
//     loopback by default), never on the public API's port.
//   - A host whose link closes or whose heartbeats stop is unregistered at
//     once; its Areas come back (re-homed) on their next join.
//   - The control listener serves mutual TLS 1.3 (Config.ControlTLS) to a
//     host that opens with a handshake: a certificate of the realm's CA
//     registers it. A plain connection registers with a spawn token, or
//     the host key from this machine (or from anywhere with
//     Config.ControlInsecure).
//   - Several directors may share one store (Postgres; leader.go): Run
//     follows until store.Lead lets it lead in a new term, which fences
//     every write of the leaders before it. A follower forwards the API to
//     the leader and sends hosts to it; a leader that loses its term stops
//     (Run returns ErrDeposed).
//
// # Files
//
// The files read from the bottom up: each needs only files above it in
// this list (internal/filegraph's test holds them to it).
//
//   - apierrors.go (the API's error type, refusals, decoding a body),
//     config.go, sessions.go, fences_release.go.
//   - director.go (the Director and the state it holds), request.go (path
//     values, JSON shapes).
//   - The handlers and their helpers, one concern a file (invites.go,
//     quota.go, realm.go, templates.go, ...), then those that use others
//     (join.go, admin.go, mapportals.go, origin.go, ...), leader.go,
//     spectate.go, api.go (accounts, sessions, Areas, members) and
//     hostsetup.go (what the registry and spawner are given).
//   - routes.go: the route table; run.go: New, Run and the leading loop.
//
// # Caveats
//
// Spawned hosts die with the director (a parent-death signal on Linux), so
// a restarted director starts from the store, never from orphans.
package director
