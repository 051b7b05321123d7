package sqlcore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leyworks/ley/store"
)

// CanonicalEmails is migration 2 of both backends (a Go migration: SQL
// files take versions 1 and 3 on): it rewrites each stored email, and its
// password identity's subject, into store.NormalizeEmail's form, which
// became canonical then (before, emails were only trimmed and
// lower-cased). A row whose new form another account already holds keeps
// its old form: both accounts keep their ids, and the older one can no
// longer be reached by typing its address (an operator merges or renames
// it).
func CanonicalEmails(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, email FROM accounts ORDER BY id`)
	if err != nil {
		return fmt.Errorf("canonical emails: %w", err)
	}
	type change struct {
		id    int64
		email string
	}
	var changes []change
	for rows.Next() {
		var c change
		var old string
		if err := rows.Scan(&c.id, &old); err != nil {
			rows.Close()
			return fmt.Errorf("canonical emails: %w", err)
		}
		if c.email = store.NormalizeEmail(old); c.email != old {
			changes = append(changes, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("canonical emails: %w", err)
	}
	for _, c := range changes {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE email = $1)`, c.email).Scan(&taken); err != nil {
			return fmt.Errorf("canonical emails: account %d: %w", c.id, err)
		}
		if taken {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET email = $1 WHERE id = $2`, c.email, c.id); err != nil {
			return fmt.Errorf("canonical emails: account %d: %w", c.id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE auth_identities SET subject = $1 WHERE account_id = $2 AND provider = $3`,
			c.email, c.id, store.ProviderPassword); err != nil {
			return fmt.Errorf("canonical emails: identity of account %d: %w", c.id, err)
		}
	}
	return nil
}

// Noop is the down step of a data migration that leaves valid data
// behind.
func Noop(context.Context, *sql.Tx) error { return nil }
