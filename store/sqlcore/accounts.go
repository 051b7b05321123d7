package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/store"
)

// ---- accounts ----

const accountCols = `id, email, name, is_admin, created_at`

func (c *Core) scanAccount(r Row) (store.Account, error) {
	var a store.Account
	err := r.Scan(&a.ID, &a.Email, &a.Name, &a.Admin, c.d.ScanTime(&a.Created))
	return a, err
}

// CreateAccount implements store.Store.
func (c *Core) CreateAccount(ctx context.Context, na store.NewAccount) (store.Account, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Account{}, fmt.Errorf("create account: %w", err)
	}
	var a store.Account
	key := store.NameKey(na.Name)
	err = c.tx(ctx, func(q Querier) error {
		// A taken email is told first (ErrDuplicate), then a taken name;
		// two sign-ups racing for one name: the unique index refuses the
		// second.
		var emails, names int
		if err := q.QueryRow(ctx, `SELECT (SELECT count(*) FROM accounts WHERE email = $1), (SELECT count(*) FROM accounts WHERE name_key = $2)`,
			na.Email, key).Scan(&emails, &names); err != nil {
			return err
		}
		switch {
		case emails > 0:
			return store.ErrDuplicate
		case names > 0:
			return store.ErrNameTaken
		}
		var err error
		a, err = c.scanAccount(q.QueryRow(ctx,
			`INSERT INTO accounts (email, name, name_key, is_admin, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING `+accountCols,
			na.Email, na.Name, key, na.Admin, c.d.Time(na.Created)))
		if err != nil {
			return err
		}
		_, err = q.Exec(ctx,
			`INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES ($1, $2, $3, $4)`,
			int64(a.ID), store.ProviderPassword, na.Email, na.PasswordPHC)
		return err
	})
	if err != nil {
		return store.Account{}, fmt.Errorf("create account %q: %w", na.Email, c.mapErr(err))
	}
	return a, nil
}

// Account implements store.Store.
func (c *Core) Account(ctx context.Context, id store.AccountID) (store.Account, error) {
	a, err := c.scanAccount(c.db.QueryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1`, int64(id)))
	if err != nil {
		return store.Account{}, fmt.Errorf("account %d: %w", id, c.mapErr(err))
	}
	return a, nil
}

// AccountByEmail implements store.Store.
func (c *Core) AccountByEmail(ctx context.Context, email string) (store.Account, store.Identity, error) {
	email = store.NormalizeEmail(email)
	var a store.Account
	var id store.Identity
	err := c.db.QueryRow(ctx, `SELECT a.id, a.email, a.name, a.is_admin, a.created_at,
		coalesce(i.provider, ''), coalesce(i.subject, ''), coalesce(i.password_phc, '')
		FROM accounts a LEFT JOIN auth_identities i ON i.account_id = a.id WHERE a.email = $1`, email).
		Scan(&a.ID, &a.Email, &a.Name, &a.Admin, c.d.ScanTime(&a.Created), &id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Account{}, store.Identity{}, fmt.Errorf("account by email %q: %w", email, c.mapErr(err))
	}
	if id.Provider != "" {
		id.Account = a.ID
	}
	return a, id, nil
}

// Identity implements store.Store.
func (c *Core) Identity(ctx context.Context, account store.AccountID) (store.Identity, error) {
	id := store.Identity{Account: account}
	err := c.db.QueryRow(ctx, `SELECT provider, subject, password_phc FROM auth_identities WHERE account_id = $1`, int64(account)).
		Scan(&id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Identity{}, fmt.Errorf("identity of account %d: %w", account, c.mapErr(err))
	}
	return id, nil
}

// AddIdentity implements store.Store.
func (c *Core) AddIdentity(ctx context.Context, id store.Identity) error {
	err := c.write(ctx, func(q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES ($1, $2, $3, $4)`,
			int64(id.Account), id.Provider, id.Subject, id.PasswordPHC)
		return err
	})
	if err != nil {
		return fmt.Errorf("add identity to account %d: %w", id.Account, c.mapErr(err))
	}
	return nil
}

// UpdatePassword implements store.Store.
func (c *Core) UpdatePassword(ctx context.Context, account store.AccountID, phc string) error {
	return c.execOne(ctx, fmt.Sprintf("update password of account %d", account),
		`UPDATE auth_identities SET password_phc = $2 WHERE account_id = $1`, int64(account), phc)
}

// SetAdmin implements store.Store.
func (c *Core) SetAdmin(ctx context.Context, account store.AccountID, admin bool) error {
	return c.execOne(ctx, fmt.Sprintf("set admin of account %d", account),
		`UPDATE accounts SET is_admin = $2 WHERE id = $1`, int64(account), admin)
}

// ---- sessions ----

const sessionCols = `token_hash, account_id, created_at, last_seen, idle_ms, idle_expires_at, expires_at, revoked`

func (c *Core) scanSession(r Row) (store.Session, error) {
	var ss store.Session
	var hash []byte
	var idleMS int64
	err := r.Scan(&hash, &ss.Account, c.d.ScanTime(&ss.Created), c.d.ScanTime(&ss.LastSeen), &idleMS,
		c.d.ScanTime(&ss.IdleExpires), c.d.ScanTime(&ss.Expires), &ss.Revoked)
	copy(ss.Hash[:], hash)
	ss.Idle = time.Duration(idleMS) * time.Millisecond
	return ss, err
}

// sessionErr is the error a session at now answers with, or nil.
func sessionErr(ss store.Session, now time.Time) error {
	switch {
	case ss.Revoked:
		return store.ErrRevoked
	case !now.Before(ss.IdleExpires) || !now.Before(ss.Expires):
		return store.ErrExpired
	}
	return nil
}

// CreateSession implements store.Store.
func (c *Core) CreateSession(ctx context.Context, hash store.TokenHash, account store.AccountID, now time.Time, idle, absolute time.Duration) (store.Session, error) {
	if idle < time.Millisecond || absolute <= 0 {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, store.ErrInvalid)
	}
	exp := now.Add(absolute)
	idleExp := now.Add(idle)
	if idleExp.After(exp) {
		idleExp = exp
	}
	var ss store.Session
	err := c.write(ctx, func(q Querier) error {
		var err error
		ss, err = c.scanSession(q.QueryRow(ctx, `INSERT INTO sessions (`+sessionCols+`)
			VALUES ($1, $2, $3, $3, $4, $5, $6, false) RETURNING `+sessionCols,
			hash[:], int64(account), c.d.Time(now), idle.Milliseconds(), c.d.Time(idleExp), c.d.Time(exp)))
		return err
	})
	if err != nil {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, c.mapErr(err))
	}
	return ss, nil
}

// SessionByTokenHash implements store.Store.
func (c *Core) SessionByTokenHash(ctx context.Context, hash store.TokenHash, now time.Time) (store.Session, error) {
	ss, err := c.scanSession(c.db.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE token_hash = $1`, hash[:]))
	if err != nil {
		return store.Session{}, fmt.Errorf("session: %w", c.mapErr(err))
	}
	if err := sessionErr(ss, now); err != nil {
		return ss, fmt.Errorf("session of account %d: %w", ss.Account, err)
	}
	return ss, nil
}

// TouchSession implements store.Store.
func (c *Core) TouchSession(ctx context.Context, hash store.TokenHash, now time.Time) (store.Session, error) {
	var ss store.Session
	idleExp := `$2 + ` + c.d.Millis("idle_ms")
	err := c.write(ctx, func(q Querier) error {
		var err error
		ss, err = c.scanSession(q.QueryRow(ctx, `UPDATE sessions
			SET last_seen = $2, idle_expires_at = CASE WHEN `+idleExp+` < expires_at THEN `+idleExp+` ELSE expires_at END
			WHERE token_hash = $1 AND NOT revoked AND idle_expires_at > $2 AND expires_at > $2
			RETURNING `+sessionCols, hash[:], c.d.Time(now)))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		// Not valid: say why.
		ss, err := c.SessionByTokenHash(ctx, hash, now)
		if err == nil { // valid again in between: a race with a clock skew; report expired.
			err = fmt.Errorf("touch session: %w", store.ErrExpired)
		}
		return ss, err
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("touch session: %w", c.mapErr(err))
	}
	return ss, nil
}

// RevokeSession implements store.Store.
func (c *Core) RevokeSession(ctx context.Context, hash store.TokenHash) error {
	return c.execOne(ctx, "revoke session", `UPDATE sessions SET revoked = true WHERE token_hash = $1`, hash[:])
}

// RevokeAccountSessions implements store.Store.
func (c *Core) RevokeAccountSessions(ctx context.Context, account store.AccountID) (int, error) {
	n, err := c.count(ctx, `UPDATE sessions SET revoked = true WHERE account_id = $1 AND NOT revoked`, int64(account))
	if err != nil {
		return 0, fmt.Errorf("revoke sessions of account %d: %w", account, err)
	}
	return n, nil
}

// PruneSessions implements store.Store.
func (c *Core) PruneSessions(ctx context.Context, now time.Time) (int, error) {
	n, err := c.count(ctx, `DELETE FROM sessions WHERE revoked OR idle_expires_at <= $1 OR expires_at <= $1`, c.d.Time(now))
	if err != nil {
		return 0, fmt.Errorf("prune sessions: %w", err)
	}
	return n, nil
}
