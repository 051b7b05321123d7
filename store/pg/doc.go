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
// # Caveats
//
// Times are stored as timestamptz (microseconds). A Store is safe for
// concurrent use; its pool's size bounds the concurrent queries.
package pg
