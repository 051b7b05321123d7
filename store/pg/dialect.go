package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlcore"
)

// pgxQuerier is what a pgxpool.Pool and a pgx.Tx both run statements
// with.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// querier is the sqlcore.Querier of a pool or a transaction: pgx's own
// calls, its rows and row passed through as they are.
type querier struct{ q pgxQuerier }

func (q querier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (q querier) Query(ctx context.Context, sql string, args ...any) (sqlcore.Rows, error) {
	rows, err := q.q.Query(ctx, sql, args...)
	return rows, err
}

func (q querier) QueryRow(ctx context.Context, sql string, args ...any) sqlcore.Row {
	return q.q.QueryRow(ctx, sql, args...)
}

// db is the sqlcore.DB of a pool: transactions at the pool's default
// isolation (READ COMMITTED), ordered by the core's row locks.
type db struct {
	querier
	pool *pgxpool.Pool
}

func newDB(pool *pgxpool.Pool) db { return db{querier{pool}, pool} }

func (d db) InTx(ctx context.Context, f func(sqlcore.Querier) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return f(querier{tx}) })
}

// dialect is Postgres's sqlcore.Dialect: times as timestamptz (pgx
// encodes time.Time), row locks, and SQLSTATE codes.
type dialect struct{}

func (dialect) Time(t time.Time) any { return t }

func (dialect) ScanTime(t *time.Time) any { return (*scanTime)(t) }

func (dialect) Millis(expr string) string { return "(" + expr + " * interval '1 millisecond')" }

func (dialect) ForUpdate() string { return " FOR UPDATE" }

func (dialect) ForShare() string { return " FOR SHARE" }

func (dialect) ForNoKeyUpdate() string { return " FOR NO KEY UPDATE" }

// CharacterRows passes the characters as four array parameters, whatever
// their number: one statement, one plan in pgx's statement cache.
func (dialect) CharacterRows(cs []store.CharacterState, n int) (string, []any) {
	accts, xs, ys, states := make([]int64, len(cs)), make([]int32, len(cs)), make([]int32, len(cs)), make([][]byte, len(cs))
	for i, c := range cs {
		accts[i], xs[i], ys[i], states[i] = int64(c.Account), c.X, c.Y, c.State
	}
	return fmt.Sprintf(`unnest($%d::bigint[], $%d::integer[], $%d::integer[], $%d::bytea[]) AS v(account_id, x, y, state)`, n, n+1, n+2, n+3),
		[]any{accts, xs, ys, states}
}

func (dialect) Err(err error) error { return mapErr(err) }

// scanTime is a time.Time that scans a timestamptz, NULL as the zero
// time, on pgx's binary path (no sql.Scanner detour, no allocation).
type scanTime time.Time

// ScanTimestamptz implements pgtype.TimestamptzScanner.
func (t *scanTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*t = scanTime{}
		return nil
	}
	*t = scanTime(v.Time)
	return nil
}

// mapErr turns constraint violations into the store's errors, and the
// failures of a database that cannot be reached into
// store.ErrUnavailable.
func mapErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w: %s", store.ErrDuplicate, pe.ConstraintName)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w: %s", store.ErrNotFound, pe.ConstraintName)
		case "23514": // check_violation
			return fmt.Errorf("%w: %s", store.ErrInvalid, pe.ConstraintName)
		}
	}
	if unavailable(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// unavailable reports whether err says the database could not be reached
// or refused the work for now, rather than anything about the work.
func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's own deadline or cancellation
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) { // the server answered: its SQLSTATE says
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection_exception
			strings.HasPrefix(pe.Code, "53"), // insufficient_resources: disk full, out of memory, too many connections
			pe.Code == "57P01",               // admin_shutdown: a fast or smart stop
			pe.Code == "57P02",               // crash_shutdown: another backend crashed
			pe.Code == "57P03",               // cannot_connect_now: starting up, in recovery, shutting down
			pe.Code == "25006":               // read_only_sql_transaction: a standby, during a failover
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || // no connection (refused, unreachable, a TLS or DNS failure)
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) || // the connection died before the request left
		errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || // or while it ran
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}
