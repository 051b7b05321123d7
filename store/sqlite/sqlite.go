package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	sqlite "modernc.org/sqlite"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlcore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite store.Store: the SQL core (package sqlcore) on one
// connection, plus migrations and a leadership of one. It is safe for
// concurrent use; all its work serialises on the connection.
type Store struct {
	*sqlcore.Core
	db *sql.DB

	leadMu sync.Mutex    // guards leader
	leader *store.Leader // recorded by Lead; nil before
}

var _ store.Store = (*Store)(nil)

// BusyTimeout is how long a statement waits for another process's lock on
// the database file before failing with store.ErrUnavailable.
const BusyTimeout = 5 * time.Second

// Open opens (creating if needed) the database file at path, applies
// pending migrations and returns the Store.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	base, err := sqlite.NewConnector("file:" + path + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db := sql.OpenDB(connector{base})
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	s := &Store{Core: sqlcore.New(newDB(db), dialect{}, nil), db: db}
	if err := s.Migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %s: %w", path, err), db.Close())
	}
	return s, nil
}

// Migrate applies the pending embedded migrations.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.provider()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	return nil
}

// provider returns the goose provider of the embedded migrations, the SQL
// files and the Go ones.
func (s *Store) provider() (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectSQLite3, s.db, sub, goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(goose.NewGoMigration(2, &goose.GoFunc{RunTx: sqlcore.CanonicalEmails}, &goose.GoFunc{RunTx: sqlcore.Noop})))
}

// Close closes the database. It returns once the connection is closed
// (its write-ahead log checkpointed into the database file and removed),
// or after BusyTimeout: database/sql's Close closes only an idle
// connection, and one still in use (a transaction its caller's context
// cancelled, which database/sql rolls back in a goroutine of its own) is
// closed when that ends.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
	}
	deadline := time.Now().Add(BusyTimeout)
	for s.db.Stats().OpenConnections > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("close sqlite: a statement still held the connection after %v", BusyTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Lead implements store.Store: SQLite serves one director, which leads at
// once, in the constant term 1; its writes are not fenced (there is no
// other director to fence them from). A realm with several directors
// needs Postgres.
func (s *Store) Lead(ctx context.Context, me store.Leader) (*store.Leadership, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lead: %w", err)
	}
	s.leadMu.Lock()
	defer s.leadMu.Unlock()
	if s.leader != nil {
		return nil, fmt.Errorf("lead: %w: this Store led already", store.ErrInvalid)
	}
	me.Term, me.Since = 1, time.Now()
	s.leader = &me
	return store.NewLeadership(1), nil
}

// Leader implements store.Store: the director that led through this Store.
func (s *Store) Leader(context.Context) (store.Leader, error) {
	s.leadMu.Lock()
	defer s.leadMu.Unlock()
	if s.leader == nil {
		return store.Leader{}, fmt.Errorf("leader: %w: no director has led", store.ErrNotFound)
	}
	return *s.leader, nil
}
