package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
)

// maxCached bounds the statements a connection keeps prepared. The
// store's own are a few dozen, and a snapshot's characters statement
// has one text per count of characters (up to an Area's capacity); past
// the bound a statement is prepared each time, as without a cache.
const maxCached = 128

// connector opens the driver's connections wrapped in a cachingConn
// (the wrapping modernc.org/sqlite's NewConnector documents).
type connector struct{ driver.Connector }

// Connect implements driver.Connector.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newCachingConn(conn)
}

// sqliteConn is what the driver's connections implement, and a
// cachingConn forwards: a wrapper that only embedded driver.Conn would
// hide the context-aware methods from database/sql.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a driver connection that keeps each statement it
// executes with arguments prepared, by its SQL text, and executes it
// again without parsing and planning it again: the store's writes are
// the same few statements over and over (a home's snapshot is two), and
// SQLite's parser was a quarter of their CPU. Statements without
// arguments (migrations, pragmas) are prepared each time, so schema
// changes never sit in the cache; a cached statement the schema changed
// under is prepared again by SQLite itself (sqlite3_prepare_v2).
//
// Only Exec is cached: a cached statement is reset when its execution
// returns, so no two uses of one can overlap, where a query's rows would
// keep it busy until they are closed. Like the driver's connection, a
// cachingConn is used by one goroutine at a time.
type cachingConn struct {
	sqliteConn
	stmts map[string]driver.Stmt
}

// newCachingConn wraps conn, which must be the driver's.
func newCachingConn(conn driver.Conn) (*cachingConn, error) {
	c, ok := conn.(sqliteConn)
	if !ok {
		return nil, errors.Join(errors.New("sqlite: the driver's connection lacks a context-aware method"), conn.Close())
	}
	return &cachingConn{sqliteConn: c, stmts: map[string]driver.Stmt{}}, nil
}

// Unwrap returns the driver's connection (modernc.org/sqlite's Limit
// looks through a wrapper with it).
func (c *cachingConn) Unwrap() driver.Conn { return c.sqliteConn }

// ExecContext implements driver.ExecerContext: through the statement
// cached for query, prepared on its first use while the cache has room.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, ok := c.stmts[query]
	if !ok {
		if len(args) == 0 || len(c.stmts) >= maxCached {
			return c.sqliteConn.ExecContext(ctx, query, args)
		}
		var err error
		if s, err = c.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		c.stmts[query] = s
	}
	return s.(driver.StmtExecContext).ExecContext(ctx, args)
}

// Close implements driver.Conn: the cached statements are finalized
// first, as SQLite asks of a connection it closes.
func (c *cachingConn) Close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}
