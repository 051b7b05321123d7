// Package pg is the Postgres [store.Store]: pgx/v5 over a pgxpool, for
// production realms (`ley director` with LEY_DATABASE_URL=postgres://...).
//
// # Outline
//
// [Open] parses a URL, [OpenConfig] takes a prepared pool config (to set
// a search_path, say); both apply the embedded migrations (migrations/*.sql,
// versioned and run by goose under a Postgres advisory lock, so concurrent
// directors migrate once) before returning. [Store.Migrate] runs them again
// for `ley migrate`.
//
// Every query is parameterised and runs on the extended protocol (the
// pool's default exec mode, statement-cached); the simple protocol is never
// enabled. Changes spanning rows run in one transaction at READ COMMITTED,
// ordered by row locks: WriteSnapshot locks the Area row with a conditional
// UPDATE, so concurrent writers of one Area serialise and the highest Seq
// wins; MoveCharacter claims the transfer id with INSERT ... ON CONFLICT DO
// NOTHING and then locks it, so replays wait for the first crossing and
// answer its result.
//
// # Leadership
//
// Several directors may share one database, one leading at a time
// ([Store.Lead]): the leader holds a session advisory lock (the key is
// random per realm, kept in the one-row leadership table) on a connection
// of its own, and raises the row's term as it begins to lead. Every write
// of a leading Store runs in a transaction that first reads the term FOR
// SHARE: a new leader's term bump waits for writes in flight, and a write
// that starts after it sees the new term and fails with
// [store.ErrDeposed]. A Store that never led writes unfenced.
//
// # Caveats
//
// Times are stored as timestamptz (microseconds). A Store is safe for
// concurrent use; its pool's size bounds the concurrent queries.
package pg
