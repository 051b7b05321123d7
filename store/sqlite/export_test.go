package sqlite

import (
	"context"
	"fmt"

	"github.com/leyworks/ley/store"
)

// RollBack migrates s down to version, keeping the data: with
// InsertLegacyAccount it lets a test plant rows as an older ley stored
// them and then migrate them.
func (s *Store) RollBack(ctx context.Context, version int64) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

// InsertLegacyAccount stores an account and its password identity with
// email exactly as given, bypassing today's normalisation.
func (s *Store) InsertLegacyAccount(ctx context.Context, email string) (store.AccountID, error) {
	var id int64
	if err := s.db.QueryRowContext(ctx, `INSERT INTO accounts (email, name, is_admin, created_at) VALUES (?, 'legacy', 0, 0) RETURNING id`, email).Scan(&id); err != nil {
		return 0, fmt.Errorf("legacy account %q: %w", email, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES (?, ?, ?, '')`,
		id, store.ProviderPassword, email); err != nil {
		return 0, fmt.Errorf("legacy identity %q: %w", email, err)
	}
	return store.AccountID(id), nil
}

// InsertLegacyArea stores an Area of kind owned by owner as a ley before
// migration 4 did: without a template.
func (s *Store) InsertLegacyArea(ctx context.Context, owner store.AccountID, kind string) (store.AreaID, error) {
	var id int64
	if err := s.db.QueryRowContext(ctx, `INSERT INTO areas (owner_id, kind, name, w, h, seed, created_at) VALUES (?, ?, 'legacy', 64, 64, 1, 0) RETURNING id`,
		int64(owner), kind).Scan(&id); err != nil {
		return 0, fmt.Errorf("legacy area %q: %w", kind, err)
	}
	return store.AreaID(id), nil
}

// Pragma runs PRAGMA name = value on the Store's one connection (so it
// applies to every later statement of the Store).
func (s *Store) Pragma(ctx context.Context, name string, value int64) error {
	_, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA %s = %d", name, value))
	return err
}

// PragmaValue reads PRAGMA name on the Store's connection.
func (s *Store) PragmaValue(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
	return v, err
}

// HoldConnection starts a read on the Store's one connection and leaves it
// open, as a statement still running when the Store is closed: the
// connection is in use until release is called.
func (s *Store) HoldConnection(ctx context.Context) (release func() error, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM accounts`)
	if err != nil {
		return nil, err
	}
	return rows.Close, nil
}

// Exec runs query with args on the Store's connection, as the SQL core
// runs its writes.
func (s *Store) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return querier{s.db}.Exec(ctx, query, args...)
}

// CachedStatements is how many statements the Store's connection keeps
// prepared.
func (s *Store) CachedStatements(ctx context.Context) (int, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	n := -1
	err = conn.Raw(func(dc any) error {
		if c, ok := dc.(*cachingConn); ok {
			n = len(c.stmts)
		}
		return nil
	})
	return n, err
}

// MaxCached is the bound on a connection's prepared statements.
const MaxCached = maxCached

// QueryInt runs query on the Store's connection for one integer.
func (s *Store) QueryInt(ctx context.Context, query string) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, query).Scan(&v)
	return v, err
}
