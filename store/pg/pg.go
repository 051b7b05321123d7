package pg

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlcore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the Postgres store.Store: the SQL core (package sqlcore) on
// a pgxpool, plus migrations and the leadership. It is safe for
// concurrent use.
type Store struct {
	*sqlcore.Core
	pool *pgxpool.Pool
	// fence carries the leadership term into every write: empty until
	// Lead returns (the Store writes unfenced), then the term it leads in.
	fence sqlcore.Fence

	leadMu   sync.Mutex         // guards the fields below
	led      bool               // Lead was called
	stopKeep context.CancelFunc // stops keep
	keepDone chan error         // keep's close of the lock's connection, then closed
}

var _ store.Store = (*Store)(nil)

// Open connects to the Postgres database at url (a postgres:// URL or a
// key=value DSN), applies pending migrations and returns the Store.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: parse url: %w", err)
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig is Open with a prepared pool config; the config's exec mode
// must not be the simple protocol.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	if cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return nil, fmt.Errorf("open postgres: the simple query protocol is not supported: %w", store.ErrInvalid)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s := &Store{pool: pool}
	s.Core = sqlcore.New(newDB(pool), dialect{}, &s.fence)
	if err := s.Migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return s, nil
}

// Migrate applies the pending embedded migrations under an advisory lock.
func (s *Store) Migrate(ctx context.Context) error {
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	return nil
}

// provider returns the goose provider of the embedded migrations on db,
// the SQL files and the Go ones, under a session advisory lock.
func provider(db *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("locker: %w", err)
	}
	return goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(goose.NewGoMigration(2, &goose.GoFunc{RunTx: sqlcore.CanonicalEmails}, &goose.GoFunc{RunTx: sqlcore.Noop})))
}

// Close closes the pool, waiting for acquired connections to be released,
// then gives the leadership up (if held): it closes the lock's
// connection, which releases the lock.
func (s *Store) Close() error {
	s.pool.Close()
	s.leadMu.Lock()
	stop, done := s.stopKeep, s.keepDone
	s.leadMu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	if err := <-done; err != nil {
		return fmt.Errorf("close the leadership's connection: %w", err)
	}
	return nil
}
