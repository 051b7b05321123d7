package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlcore"
)

// sqlQuerier is what a *sql.DB and a *sql.Tx both run statements with.
type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier is the sqlcore.Querier of the database or a transaction.
type querier struct{ q sqlQuerier }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlcore.Rows, error) {
	r, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return rows{}, err
	}
	return rows{r}, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlcore.Row {
	return q.q.QueryRowContext(ctx, query, args...)
}

// rows is a *sql.Rows as sqlcore.Rows; the zero rows is a failed
// query's. Close drops the driver's close error, as pgx's Rows.Close
// does: an error while reading shows in Err.
type rows struct{ r *sql.Rows }

func (r rows) Next() bool             { return r.r != nil && r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.r.Scan(dest...) }

func (r rows) Err() error {
	if r.r == nil {
		return nil
	}
	return r.r.Err()
}

func (r rows) Close() {
	if r.r != nil {
		_ = r.r.Close()
	}
}

// db is the sqlcore.DB of the database: its transactions begin
// IMMEDIATE (the _txlock of Open's DSN), holding the file's write lock
// from their start, so they need no row locks.
type db struct {
	querier
	db *sql.DB
}

func newDB(d *sql.DB) db { return db{querier{d}, d} }

func (d db) InTx(ctx context.Context, f func(sqlcore.Querier) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(querier{tx}); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// dialect is SQLite's sqlcore.Dialect: times as Unix milliseconds, no
// row locks (a transaction holds the database), and SQLite's result
// codes.
type dialect struct{}

func (dialect) Time(t time.Time) any { return t.UnixMilli() }

func (dialect) ScanTime(t *time.Time) any { return (*scanTime)(t) }

func (dialect) Millis(expr string) string { return expr }

func (dialect) ForUpdate() string { return "" }

func (dialect) ForShare() string { return "" }

func (dialect) ForNoKeyUpdate() string { return "" }

// CharacterRows lists the characters in a VALUES subquery, four
// parameters a character.
func (dialect) CharacterRows(cs []store.CharacterState, n int) (string, []any) {
	var b strings.Builder
	b.WriteString(`(SELECT column1 AS account_id, column2 AS x, column3 AS y, column4 AS state FROM (VALUES `)
	args := make([]any, 0, 4*len(cs))
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		k := n + 4*i
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d)", k, k+1, k+2, k+3)
		args = append(args, int64(c.Account), c.X, c.Y, c.State)
	}
	b.WriteString(`)) AS v`)
	return b.String(), args
}

func (dialect) Err(err error) error { return mapErr(err) }

// scanTime is a time.Time that scans Unix milliseconds, NULL as the zero
// time.
type scanTime time.Time

// Scan implements sql.Scanner.
func (t *scanTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = scanTime{}
	case int64:
		*t = scanTime(time.UnixMilli(v))
	default:
		return fmt.Errorf("scan a time: %T is not Unix milliseconds", src)
	}
	return nil
}

// mapErr turns constraint violations into the store's errors, and the
// result codes of a file that cannot be used for now into
// store.ErrUnavailable.
func mapErr(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %s", store.ErrDuplicate, se.Error())
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %s", store.ErrNotFound, se.Error())
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		return fmt.Errorf("%w: %s", store.ErrInvalid, se.Error())
	}
	switch se.Code() & 0xff { // the primary result code of an extended one
	case sqlite3.SQLITE_BUSY, // another connection or process holds the lock past the busy timeout
		sqlite3.SQLITE_LOCKED,   // a table locked by another connection of this process
		sqlite3.SQLITE_NOMEM,    // out of memory
		sqlite3.SQLITE_READONLY, // the file, or its directory, cannot be written (now)
		sqlite3.SQLITE_IOERR,    // the disk failed a read, write, sync or lock
		sqlite3.SQLITE_FULL,     // the disk (or max_page_count) is full
		sqlite3.SQLITE_CANTOPEN, // the file (or its journal) cannot be opened
		sqlite3.SQLITE_PROTOCOL: // the WAL locking protocol lost a race again and again
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}
