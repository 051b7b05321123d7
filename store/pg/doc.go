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
// The transactions are package sqlcore's, written once for both
// backends; this package gives them pgx's pool and transactions as they
// are (pgx.Rows and pgx.Row pass through the sqlcore interfaces
// unwrapped) and Postgres's dialect: timestamptz, FOR UPDATE / FOR SHARE,
// a snapshot's characters as array parameters, SQLSTATE codes. Every
// query is parameterised and runs on the extended protocol (the pool's
// default exec mode, statement-cached); the simple protocol is never
// enabled. Changes spanning rows run in one transaction at READ
// COMMITTED, ordered by row locks: WriteSnapshot locks the Area row with
// a conditional UPDATE, so concurrent writers of one Area serialise and
// the highest Seq wins; MoveCharacter claims the transfer id with INSERT
// ... ON CONFLICT DO NOTHING and then locks it, so replays wait for the
// first crossing and answer its result.
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
// # The database goes away
//
// A Store outlives its database's restarts and network cuts: while
// Postgres cannot be reached (connections refused, reset or closed; the
// server stopping, starting, recovering, or out of connections) each
// call fails with an error wrapping [store.ErrUnavailable], and the pool
// reconnects by itself once Postgres is back. A lost connection is not a
// lost leadership: when the lock's connection fails, the
// [store.Leadership] is in doubt while the Store reconnects (100 ms
// doubling to 2 s between attempts), takes the lock back with
// pg_try_advisory_lock and reads the term. Still its own: the leadership
// is held again, in the same term. Moved on: another Store led meanwhile,
// and the leadership is lost. The lock held by another session, the term
// still its own: the Store's own old session, which Postgres ends within
// about 11 s, or a Store about to raise the term; it tries again, and a
// newer term fences its writes meanwhile ([Store.Lead] has the
// reasoning). A Store waiting for the lock in Lead waits on through an
// outage, but queues again only 3 s after it reconnected (longer than
// the 2 s a leader waits between attempts), so the leader whose hold the
// same outage put in doubt takes its lock back first: a database restart
// does not move the leadership.
//
// # Caveats
//
// Times are stored as timestamptz (microseconds). A Store is safe for
// concurrent use; its pool's size bounds the concurrent queries.
package pg
