package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/store"
)

// Row is one row of a result: QueryRow's, or the current row of Rows.
type Row interface {
	// Scan copies the row's columns into dest. QueryRow's Scan of no row
	// returns an error for which errors.Is(err, sql.ErrNoRows) holds
	// (pgx.ErrNoRows does).
	Scan(dest ...any) error
}

// Rows is a query's result: Next and Scan each row, then Close (Err
// reports what went wrong while reading, Close included).
type Rows interface {
	Row
	Next() bool
	Err() error
	Close()
}

// Querier runs statements: a backend's connection pool, or one of its
// transactions. Statements are written with Postgres's numbered
// placeholders ($1, $2, ...; a number may repeat or come out of order),
// which modernc.org/sqlite binds by number as well.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs a statement that returns rows. The Rows must be closed
	// even when err is not nil (Close is then a no-op).
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow runs a statement for its first row; its errors surface at
	// Scan.
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

// DB is a backend's database: a Querier on its pool, and the
// transactions it begins.
type DB interface {
	Querier
	// InTx runs f in one transaction, committing when f returns nil and
	// rolling back when it returns an error (which InTx returns) or
	// panics. The backend chooses the isolation: the Core relies on
	// row locks where the Dialect names them (ForUpdate, ForShare), or on
	// a transaction holding the whole database where it names none.
	InTx(ctx context.Context, f func(q Querier) error) error
}

// Dialect is what the core's SQL needs to know of the database beyond
// the statements both understand alike.
type Dialect interface {
	// Time returns t in the form the database stores times in, for a
	// statement's argument.
	Time(t time.Time) any
	// ScanTime returns a Scan destination that reads a time column into
	// *t, NULL as the zero time.
	ScanTime(t *time.Time) any
	// Millis returns the SQL for a duration of expr (an integer SQL
	// expression) milliseconds, to be added to a time column.
	Millis(expr string) string
	// ForUpdate and ForShare return the clause (with its leading space)
	// that ends a SELECT inside a transaction to lock the rows it reads
	// for writing, or against writers; "" where a transaction holds the
	// whole database's write lock from its start.
	ForUpdate() string
	ForShare() string
	// ForNoKeyUpdate is ForUpdate for a row whose key the transaction will
	// not change: it still excludes the row's other writers, but not a
	// reference to it (a foreign key's check), so a transaction that locks
	// an Area's row does not wait on one that moves a character into it.
	ForNoKeyUpdate() string
	// CharacterRows returns a FROM item named v, with the columns
	// account_id, x, y and state, that holds cs (whose States are not
	// nil), its placeholders numbered from $n, and their arguments: the
	// rows WriteSnapshot writes in one statement.
	CharacterRows(cs []store.CharacterState, n int) (from string, args []any)
	// Err maps an error of the database's driver to the store's errors,
	// keeping the driver's words: a unique violation to
	// store.ErrDuplicate, a foreign-key violation to store.ErrNotFound, a
	// check violation to store.ErrInvalid, and a failure to reach the
	// database or a transient refusal (see store.ErrUnavailable) to
	// store.ErrUnavailable, but never an error wrapping the context's
	// (the caller's deadline or cancellation). Any other error, nil
	// included, comes back as it is.
	Err(err error) error
}

// Fence carries a leadership term into a Core's writes (see
// store.Store.Lead). The zero Fence fences nothing; after Hold, every
// write of the Core checks, in its own transaction, that the term is
// still the realm's newest. Safe for concurrent use.
type Fence struct {
	lead atomic.Pointer[store.Leadership]
}

// Hold starts fencing by l's term: called once, when l began.
func (f *Fence) Hold(l *store.Leadership) { f.lead.Store(l) }

// held returns the leadership held, or nil (also for a nil Fence).
func (f *Fence) held() *store.Leadership {
	if f == nil {
		return nil
	}
	return f.lead.Load()
}

// Core is the store.Store's transaction logic over a DB and its Dialect:
// every method of store.Store but Migrate, Close, Lead and Leader, which
// are the backend's. A backend embeds it. Safe for concurrent use.
type Core struct {
	db    DB
	d     Dialect
	fence *Fence
}

// New returns the Core of db in dialect d, its writes fenced by fence
// (nil: never fenced).
func New(db DB, d Dialect, fence *Fence) *Core {
	return &Core{db: db, d: d, fence: fence}
}

// checkTerm checks, inside q's transaction, that the fence's term is
// still the realm's newest (nothing while no leadership is held).
// Reading the leadership row FOR SHARE makes a new leader's term bump
// wait for the transaction to end, and the transaction see a bump
// committed before it: a write commits before the next term begins, or
// fails with store.ErrDeposed.
func (c *Core) checkTerm(ctx context.Context, q Querier) error {
	l := c.fence.held()
	if l == nil {
		return nil
	}
	if err := l.Err(); err != nil {
		return err
	}
	var cur store.Term
	if err := q.QueryRow(ctx, `SELECT term FROM leadership`+c.d.ForShare()).Scan(&cur); err != nil {
		return fmt.Errorf("check the term: %w", err)
	}
	if cur != l.Term() {
		l.Lose(fmt.Errorf("the realm is in term %d", cur))
		return l.Err()
	}
	return nil
}

// tx runs f in a transaction fenced by the leadership term (see
// checkTerm).
func (c *Core) tx(ctx context.Context, f func(q Querier) error) error {
	return c.db.InTx(ctx, func(q Querier) error {
		if err := c.checkTerm(ctx, q); err != nil {
			return err
		}
		return f(q)
	})
}

// write runs a one-statement write f: on the pool while no leadership is
// held, in a transaction fenced by its term once one is.
func (c *Core) write(ctx context.Context, f func(q Querier) error) error {
	if c.fence.held() == nil {
		return f(c.db)
	}
	return c.tx(ctx, f)
}

// count runs a one-statement write and returns how many rows it changed,
// its error mapped.
func (c *Core) count(ctx context.Context, sql string, args ...any) (int, error) {
	var n int64
	err := c.write(ctx, func(q Querier) error {
		var err error
		n, err = q.Exec(ctx, sql, args...)
		return err
	})
	if err != nil {
		return 0, c.mapErr(err)
	}
	return int(n), nil
}

// execOne runs a write that must change exactly one row: none is
// store.ErrNotFound.
func (c *Core) execOne(ctx context.Context, what, sql string, args ...any) error {
	n, err := c.count(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// mapErr turns no-rows and the driver's errors into the store's errors.
// A fence's answer is final as it is: never mapped, so never
// store.ErrUnavailable.
func (c *Core) mapErr(err error) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case errors.Is(err, store.ErrDeposed), errors.Is(err, store.ErrFenced):
		return err
	}
	return c.d.Err(err)
}

// collect scans every row of a Query's result with scan.
func collect[T any](rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// nonNil returns b, or an empty slice for nil (blob columns are NOT NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
