// Package sqlcore is the one SQL core of ley's [store.Store] backends: the
// transactions behind accounts, sessions, Areas, members, invites,
// incarnations, snapshots, characters, portal transfers (the fenced
// MoveCharacter among them), realm settings and samples, written once
// over a small [Dialect] and a [DB] that runs statements and
// transactions. store/pg (pgx/v5) and store/sqlite (modernc.org/sqlite)
// embed a [Core] and keep only what is theirs: connecting, migrations,
// leadership, and the Dialect.
//
// # Outline
//
// [New] makes a [Core] of a DB, a Dialect and an optional [Fence]. The
// Core's methods are store.Store's, with the guarantees store.Store
// documents; a backend embeds *Core and adds Migrate, Close, Lead and
// Leader. [CanonicalEmails] is migration 2, shared by both backends'
// migration providers.
//
// The SQL is the subset both databases read alike: $n placeholders
// (modernc.org/sqlite binds $n by number), true and false, NOT on a
// boolean column, CASE, INSERT ... ON CONFLICT DO NOTHING, and RETURNING.
// What differs goes through the Dialect: how a time is stored (Postgres
// timestamptz, SQLite Unix milliseconds), a duration in SQL, the row
// locks (FOR UPDATE, FOR SHARE; none in SQLite, whose transactions take
// the database's write lock at BEGIN IMMEDIATE), the rows a snapshot
// writes in one statement (Postgres array parameters through unnest, a
// VALUES list in SQLite), and the driver's errors.
//
// # Concurrency
//
// Changes spanning rows run in one transaction, ordered by row locks
// where the Dialect has them: WriteSnapshot locks the Area row with its
// conditional UPDATE, so concurrent writers of one Area serialise and the
// highest Seq wins; MoveCharacter and BeginTransfer claim the transfer id
// with INSERT ... ON CONFLICT DO NOTHING and then lock its row, so
// replays wait for the first crossing and answer its result; a fenced
// MoveCharacter locks the source Area's row, so the decision and a new
// incarnation are ordered; RedeemInvite locks the invite's row.
//
// # Fencing
//
// A [Fence] carries a leadership term (store.Store.Lead). Once it holds
// one, every write runs in a transaction that first reads the leadership
// row's term (FOR SHARE): a new leader's term bump waits for writes in
// flight, and a write that starts after it sees the new term and fails
// with store.ErrDeposed. A Core without a held Fence writes one-statement
// changes straight on the pool. Only a backend whose schema has the
// one-row leadership table (term) may hold a Fence: store/pg; SQLite
// never fences.
//
// # Caveats
//
// The Core maps a QueryRow that finds no row (sql.ErrNoRows, which
// pgx.ErrNoRows matches) to store.ErrNotFound, and every other driver
// error through Dialect.Err.
package sqlcore
