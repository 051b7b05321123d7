// Package store is ley's persistence layer: the [Store] interface the
// director programs against, the domain types it speaks, and the errors it
// answers with. No SQL leaks out of it; the director is its only client
// (area hosts never hold database credentials).
//
// # Outline
//
// Two backends implement [Store] and pass the one conformance suite in
// store/storetest:
//
//   - store/pg: Postgres through pgx/v5 and a pgxpool, for production;
//   - store/sqlite: an embedded SQLite file (modernc.org/sqlite, pure Go),
//     the one-machine default of `ley run`.
//
// Both run the one SQL core of package store/sqlcore: every transaction
// is written there once, over a small dialect each backend supplies
// (placeholders are shared; times, row locks, batch parameters and error
// codes are not). Each carries its own embedded, versioned SQL
// migrations, applied by Migrate and at Open. Version 2 is a Go
// migration shared by both (sqlcore.CanonicalEmails): it rewrote the
// stored emails into [CanonicalEmail]'s form (SQL files take versions 1
// and 3 on). Version 4 gave every Area a template, its kind's name for
// the Areas stored before.
//
// # Model
//
// An Account has exactly one auth Identity (enforced by a UNIQUE
// constraint) and any number of Sessions, stored by the SHA-256 of their
// token ([HashToken]), never the token itself. A Session ends at its idle
// expiry (pushed forward by TouchSession), at its absolute expiry, or when
// revoked.
//
// An Area is a durable record (owner, kind, template, size, seed, rules)
// plus its latest snapshot: an opaque state blob at a snapshot Seq,
// written by the Area's current incarnation. BeginIncarnation bumps the
// Area's Epoch each time the director makes it live; WriteSnapshot is
// fenced by that Epoch (an older incarnation gets [ErrFenced] and
// changes nothing) and idempotent on Seq (an older or repeated Seq is a
// no-op reported as Applied=false, not an error). Seq is monotonic per
// Area across incarnations: a new incarnation continues from the stored
// Seq.
//
// A Character (one per account) is in exactly one Area. A snapshot writes a
// character only where the character row still names the snapshot's Area
// (a fenced write), so a stale Area never overwrites a player who moved on.
// A portal crossing moves the row in one transaction, idempotent on its
// TransferID: a replay answers the recorded Transfer and changes nothing.
// A pending transfer (BeginTransfer) that outlives its expiry is rejected
// with [ResultTimeout] by ExpireTransfers; the character row never left its
// source Area, so the player is restored there.
//
// Membership (owner or member, via invite codes redeemed atomically), the
// single realm settings row and the director's per-minute samples complete
// the model.
//
// # The database goes away
//
// A database that restarts, is cut off, fills its disk or stays locked
// does not stop a Store: its calls fail with errors wrapping
// [ErrUnavailable] meanwhile (never for a constraint violation or a
// fence), and succeed again, on the same Store, once the database is
// back. A leadership is lost only to a newer term, never to a failed
// connection: while the Store cannot confirm its hold the [Leadership]
// is in doubt ([Leadership.InDoubt]), and its writes go on being fenced
// by the term in their own transactions (see [Store.Lead]).
//
// # Caveats
//
// Times are passed in by the caller (now) so that expiry is testable, and
// are kept to the millisecond by the SQLite backend (microsecond by
// Postgres): pass times already truncated to the millisecond when equality
// across backends matters. Emails are compared after [NormalizeEmail], so
// one address has one account however it is spelled (full-width letters,
// case).
// Unsigned IDs, seeds and sequence numbers are stored as signed 64-bit
// integers; Seq and Epoch must stay below 2^63.
package store
