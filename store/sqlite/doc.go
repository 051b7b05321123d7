// Package sqlite is the embedded [store.Store]: one SQLite database file
// through modernc.org/sqlite (pure Go, no cgo), the default of `ley run` on
// one machine (./data/ley.db).
//
// # Outline
//
// [Open] creates the file's directory if needed, opens the database in WAL
// mode with a busy timeout, foreign keys on and synchronous=FULL (a
// snapshot the director acks is on disk), and applies the embedded
// migrations (migrations/*.sql, run by goose). [Store.Migrate] runs them
// again for `ley migrate`. The transactions are package sqlcore's,
// written once for both backends; this package gives them database/sql
// and SQLite's dialect: Unix milliseconds, no row locks, a snapshot's
// characters as a VALUES list, SQLite's result codes.
//
// The connection keeps the statements it writes with prepared (up to
// 128, by their SQL text), so a write parses and plans its SQL once per
// connection, not once per call: a snapshot's writes are the same two
// statements every time, and SQLite's parser was a quarter of their CPU.
// Queries, and statements without arguments, are prepared each time.
//
// # Caveats
//
// The Store holds ONE connection (database/sql with SetMaxOpenConns(1)):
// every query and transaction serialises on it, which is what makes the
// read-check-write transactions (WriteSnapshot, MoveCharacter,
// RedeemInvite) atomic, and also bounds throughput to one statement at a
// time. Transactions begin IMMEDIATE so another process sharing the file
// waits on the busy timeout instead of failing at its first write; past
// it ([BusyTimeout]), the write fails with [store.ErrUnavailable], as do
// the calls that meet a full disk, an I/O error, or a file that cannot be
// opened or written. They work again on the same Store once the cause is
// gone. Times are stored as Unix milliseconds. A Store is safe for
// concurrent use.
//
// SQLite serves one director: [Store.Lead] leads at once in the constant
// term 1 and fences nothing. A realm with several directors (one leading,
// the others waiting to take over) needs Postgres.
package sqlite
