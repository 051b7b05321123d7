package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leyworks/ley/store"
)

// RollBack migrates s down to version, keeping the data: with
// InsertLegacyAccount it lets a test plant rows as an older ley stored
// them and then migrate them.
func (s *Store) RollBack(ctx context.Context, version int64) error {
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

// InsertLegacyAccount stores an account and its password identity with
// email exactly as given, bypassing today's normalisation.
func (s *Store) InsertLegacyAccount(ctx context.Context, email string) (store.AccountID, error) {
	var id store.AccountID
	if err := s.pool.QueryRow(ctx, `INSERT INTO accounts (email, name, is_admin, created_at) VALUES ($1, 'legacy', false, now()) RETURNING id`, email).Scan(&id); err != nil {
		return 0, fmt.Errorf("legacy account %q: %w", email, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES ($1, $2, $3, '')`,
		id, store.ProviderPassword, email); err != nil {
		return 0, fmt.Errorf("legacy identity %q: %w", email, err)
	}
	return id, nil
}

// InsertLegacyArea stores an Area of kind owned by owner as a ley before
// migration 4 did: without a template.
func (s *Store) InsertLegacyArea(ctx context.Context, owner store.AccountID, kind string) (store.AreaID, error) {
	var id store.AreaID
	if err := s.pool.QueryRow(ctx, `INSERT INTO areas (owner_id, kind, name, w, h, seed, created_at) VALUES ($1, $2, 'legacy', 64, 64, 1, now()) RETURNING id`,
		owner, kind).Scan(&id); err != nil {
		return 0, fmt.Errorf("legacy area %q: %w", kind, err)
	}
	return id, nil
}
