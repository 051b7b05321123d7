package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leyworks/ley/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite store.Store. It is safe for concurrent use; all its
// work serialises on one connection.
type Store struct {
	db *sql.DB

	leadMu sync.Mutex    // guards leader
	leader *store.Leader // recorded by Lead; nil before
}

var _ store.Store = (*Store)(nil)

// BusyTimeout is how long a statement waits for another process's lock on
// the database file before failing.
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
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db}
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
		return fmt.Errorf("migrate: %w", err)
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
		goose.WithGoMigrations(goose.NewGoMigration(2, &goose.GoFunc{RunTx: canonicalEmails}, &goose.GoFunc{RunTx: noop})))
}

// canonicalEmails is migration 2 (a Go migration: SQL files take versions
// 1 and 3 on): it rewrites each stored email, and its password identity's
// subject, into store.NormalizeEmail's form, which became canonical then
// (before, emails were only trimmed and lower-cased). A row whose new form
// another account already holds keeps its old form: both accounts keep
// their ids, and the older one can no longer be reached by typing its
// address (an operator merges or renames it).
func canonicalEmails(ctx context.Context, tx *sql.Tx) error {
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
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE email = ?)`, c.email).Scan(&taken); err != nil {
			return fmt.Errorf("canonical emails: account %d: %w", c.id, err)
		}
		if taken {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET email = ? WHERE id = ?`, c.email, c.id); err != nil {
			return fmt.Errorf("canonical emails: account %d: %w", c.id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE auth_identities SET subject = ? WHERE account_id = ? AND provider = ?`,
			c.email, c.id, store.ProviderPassword); err != nil {
			return fmt.Errorf("canonical emails: identity of account %d: %w", c.id, err)
		}
	}
	return nil
}

// noop is the down step of a data migration that leaves valid data behind.
func noop(context.Context, *sql.Tx) error { return nil }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
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

func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %s", store.ErrDuplicate, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %s", store.ErrNotFound, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_CHECK:
			return fmt.Errorf("%w: %s", store.ErrInvalid, se.Error())
		}
	}
	return err
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func tm(v int64) time.Time { return time.UnixMilli(v) }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

type scanner interface{ Scan(dest ...any) error }

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// tx runs f in one IMMEDIATE transaction, committing when f returns nil.
func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
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

func affected(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// execOne runs a statement that must change exactly one row.
func (s *Store) execOne(ctx context.Context, what, query string, args ...any) error {
	n, err := affected(s.db.ExecContext(ctx, query, args...))
	if err != nil {
		return fmt.Errorf("%s: %w", what, mapErr(err))
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// ---- accounts ----

const accountCols = `id, email, name, is_admin, created_at`

func scanAccount(r scanner) (store.Account, error) {
	var a store.Account
	var created int64
	err := r.Scan(&a.ID, &a.Email, &a.Name, &a.Admin, &created)
	a.Created = tm(created)
	return a, err
}

// CreateAccount implements store.Store.
func (s *Store) CreateAccount(ctx context.Context, na store.NewAccount) (store.Account, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Account{}, fmt.Errorf("create account: %w", err)
	}
	var a store.Account
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanAccount(tx.QueryRowContext(ctx,
			`INSERT INTO accounts (email, name, is_admin, created_at) VALUES (?, ?, ?, ?) RETURNING `+accountCols,
			na.Email, na.Name, na.Admin, ms(na.Created)))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES (?, ?, ?, ?)`,
			int64(a.ID), store.ProviderPassword, na.Email, na.PasswordPHC)
		return err
	})
	if err != nil {
		return store.Account{}, fmt.Errorf("create account %q: %w", na.Email, mapErr(err))
	}
	return a, nil
}

// Account implements store.Store.
func (s *Store) Account(ctx context.Context, id store.AccountID) (store.Account, error) {
	a, err := scanAccount(s.db.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = ?`, int64(id)))
	if err != nil {
		return store.Account{}, fmt.Errorf("account %d: %w", id, mapErr(err))
	}
	return a, nil
}

// AccountByEmail implements store.Store.
func (s *Store) AccountByEmail(ctx context.Context, email string) (store.Account, store.Identity, error) {
	email = store.NormalizeEmail(email)
	var a store.Account
	var id store.Identity
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT a.id, a.email, a.name, a.is_admin, a.created_at,
		coalesce(i.provider, ''), coalesce(i.subject, ''), coalesce(i.password_phc, '')
		FROM accounts a LEFT JOIN auth_identities i ON i.account_id = a.id WHERE a.email = ?`, email).
		Scan(&a.ID, &a.Email, &a.Name, &a.Admin, &created, &id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Account{}, store.Identity{}, fmt.Errorf("account by email %q: %w", email, mapErr(err))
	}
	a.Created = tm(created)
	if id.Provider != "" {
		id.Account = a.ID
	}
	return a, id, nil
}

// Identity implements store.Store.
func (s *Store) Identity(ctx context.Context, account store.AccountID) (store.Identity, error) {
	id := store.Identity{Account: account}
	err := s.db.QueryRowContext(ctx, `SELECT provider, subject, password_phc FROM auth_identities WHERE account_id = ?`, int64(account)).
		Scan(&id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Identity{}, fmt.Errorf("identity of account %d: %w", account, mapErr(err))
	}
	return id, nil
}

// AddIdentity implements store.Store.
func (s *Store) AddIdentity(ctx context.Context, id store.Identity) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES (?, ?, ?, ?)`,
		int64(id.Account), id.Provider, id.Subject, id.PasswordPHC)
	if err != nil {
		return fmt.Errorf("add identity to account %d: %w", id.Account, mapErr(err))
	}
	return nil
}

// UpdatePassword implements store.Store.
func (s *Store) UpdatePassword(ctx context.Context, account store.AccountID, phc string) error {
	return s.execOne(ctx, fmt.Sprintf("update password of account %d", account),
		`UPDATE auth_identities SET password_phc = ? WHERE account_id = ?`, phc, int64(account))
}

// SetAdmin implements store.Store.
func (s *Store) SetAdmin(ctx context.Context, account store.AccountID, admin bool) error {
	return s.execOne(ctx, fmt.Sprintf("set admin of account %d", account),
		`UPDATE accounts SET is_admin = ? WHERE id = ?`, admin, int64(account))
}

// ---- sessions ----

const sessionCols = `token_hash, account_id, created_at, last_seen, idle_ms, idle_expires_at, expires_at, revoked`

func scanSession(r scanner) (store.Session, error) {
	var ss store.Session
	var hash []byte
	var created, last, idleMS, idleExp, exp int64
	err := r.Scan(&hash, &ss.Account, &created, &last, &idleMS, &idleExp, &exp, &ss.Revoked)
	copy(ss.Hash[:], hash)
	ss.Created, ss.LastSeen, ss.IdleExpires, ss.Expires = tm(created), tm(last), tm(idleExp), tm(exp)
	ss.Idle = time.Duration(idleMS) * time.Millisecond
	return ss, err
}

func sessionErr(ss store.Session, now time.Time) error {
	switch {
	case ss.Revoked:
		return store.ErrRevoked
	case ms(now) >= ms(ss.IdleExpires) || ms(now) >= ms(ss.Expires):
		return store.ErrExpired
	}
	return nil
}

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, hash store.TokenHash, account store.AccountID, now time.Time, idle, absolute time.Duration) (store.Session, error) {
	if idle < time.Millisecond || absolute <= 0 {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, store.ErrInvalid)
	}
	exp := ms(now.Add(absolute))
	idleExp := min(ms(now.Add(idle)), exp)
	ss, err := scanSession(s.db.QueryRowContext(ctx, `INSERT INTO sessions (`+sessionCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0) RETURNING `+sessionCols,
		hash[:], int64(account), ms(now), ms(now), idle.Milliseconds(), idleExp, exp))
	if err != nil {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, mapErr(err))
	}
	return ss, nil
}

// SessionByTokenHash implements store.Store.
func (s *Store) SessionByTokenHash(ctx context.Context, hash store.TokenHash, now time.Time) (store.Session, error) {
	ss, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE token_hash = ?`, hash[:]))
	if err != nil {
		return store.Session{}, fmt.Errorf("session: %w", mapErr(err))
	}
	if err := sessionErr(ss, now); err != nil {
		return ss, fmt.Errorf("session of account %d: %w", ss.Account, err)
	}
	return ss, nil
}

// TouchSession implements store.Store.
func (s *Store) TouchSession(ctx context.Context, hash store.TokenHash, now time.Time) (store.Session, error) {
	n := ms(now)
	ss, err := scanSession(s.db.QueryRowContext(ctx, `UPDATE sessions
		SET last_seen = ?1, idle_expires_at = min(?1 + idle_ms, expires_at)
		WHERE token_hash = ?2 AND revoked = 0 AND idle_expires_at > ?1 AND expires_at > ?1
		RETURNING `+sessionCols, n, hash[:]))
	if errors.Is(err, sql.ErrNoRows) {
		ss, err := s.SessionByTokenHash(ctx, hash, now)
		if err == nil {
			err = fmt.Errorf("touch session: %w", store.ErrExpired)
		}
		return ss, err
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("touch session: %w", mapErr(err))
	}
	return ss, nil
}

// RevokeSession implements store.Store.
func (s *Store) RevokeSession(ctx context.Context, hash store.TokenHash) error {
	return s.execOne(ctx, "revoke session", `UPDATE sessions SET revoked = 1 WHERE token_hash = ?`, hash[:])
}

// RevokeAccountSessions implements store.Store.
func (s *Store) RevokeAccountSessions(ctx context.Context, account store.AccountID) (int, error) {
	n, err := affected(s.db.ExecContext(ctx, `UPDATE sessions SET revoked = 1 WHERE account_id = ? AND revoked = 0`, int64(account)))
	if err != nil {
		return 0, fmt.Errorf("revoke sessions of account %d: %w", account, mapErr(err))
	}
	return n, nil
}

// PruneSessions implements store.Store.
func (s *Store) PruneSessions(ctx context.Context, now time.Time) (int, error) {
	n, err := affected(s.db.ExecContext(ctx, `DELETE FROM sessions WHERE revoked = 1 OR idle_expires_at <= ?1 OR expires_at <= ?1`, ms(now)))
	if err != nil {
		return 0, fmt.Errorf("prune sessions: %w", mapErr(err))
	}
	return n, nil
}

// ---- areas and members ----

const areaCols = `id, owner_id, kind, template, name, w, h, seed, rules, seq, epoch, last_played_at, created_at`

func scanArea(r scanner) (store.Area, error) {
	var a store.Area
	var seed, created int64
	var last sql.NullInt64
	err := r.Scan(&a.ID, &a.Owner, &a.Kind, &a.Template, &a.Name, &a.W, &a.H, &seed, &a.Rules, &a.Seq, &a.Epoch, &last, &created)
	a.Seed = uint64(seed)
	if last.Valid {
		a.LastPlayed = tm(last.Int64)
	}
	a.Created = tm(created)
	return a, err
}

// CreateArea implements store.Store.
func (s *Store) CreateArea(ctx context.Context, na store.NewArea) (store.Area, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Area{}, fmt.Errorf("create area: %w", err)
	}
	var a store.Area
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanArea(tx.QueryRowContext(ctx, `INSERT INTO areas (owner_id, kind, template, name, w, h, seed, rules, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+areaCols,
			int64(na.Owner), na.Kind, na.Template, na.Name, na.W, na.H, int64(na.Seed), nonNil(na.Rules), ms(na.Created)))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES (?, ?, ?, ?)`,
			int64(a.ID), int64(na.Owner), string(store.RoleOwner), ms(na.Created))
		return err
	})
	if err != nil {
		return store.Area{}, fmt.Errorf("create area %q for account %d: %w", na.Name, na.Owner, mapErr(err))
	}
	return a, nil
}

// Area implements store.Store.
func (s *Store) Area(ctx context.Context, id store.AreaID) (store.Area, error) {
	a, err := scanArea(s.db.QueryRowContext(ctx, `SELECT `+areaCols+` FROM areas WHERE id = ?`, int64(id)))
	if err != nil {
		return store.Area{}, fmt.Errorf("area %d: %w", id, mapErr(err))
	}
	return a, nil
}

// SetAreaRules implements store.Store.
func (s *Store) SetAreaRules(ctx context.Context, area store.AreaID, rules []byte) error {
	if rules == nil {
		rules = []byte{} // the column is NOT NULL
	}
	res, err := s.db.ExecContext(ctx, `UPDATE areas SET rules = ? WHERE id = ?`, rules, int64(area))
	if err != nil {
		return fmt.Errorf("set rules of area %d: %w", area, mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("set rules of area %d: %w", area, store.ErrNotFound)
	}
	return nil
}

// AreasOf implements store.Store.
func (s *Store) AreasOf(ctx context.Context, account store.AccountID) ([]store.Area, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+areaCols+` FROM areas
		WHERE id IN (SELECT area_id FROM area_members WHERE account_id = ?) ORDER BY id`, int64(account))
	as, err := collect(rows, err, scanArea)
	if err != nil {
		return nil, fmt.Errorf("areas of account %d: %w", account, mapErr(err))
	}
	return as, nil
}

// FirstAreaOf implements store.Store.
func (s *Store) FirstAreaOf(ctx context.Context, template string) (store.Area, error) {
	a, err := scanArea(s.db.QueryRowContext(ctx, `SELECT `+areaCols+` FROM areas WHERE template = ? ORDER BY id LIMIT 1`, template))
	if err != nil {
		return store.Area{}, fmt.Errorf("first area of template %q: %w", template, mapErr(err))
	}
	return a, nil
}

// AddMember implements store.Store.
func (s *Store) AddMember(ctx context.Context, area store.AreaID, account store.AccountID, role store.Role, now time.Time) error {
	if err := addMember(ctx, s.db, area, account, role, now); err != nil {
		return fmt.Errorf("add account %d to area %d: %w", account, area, mapErr(err))
	}
	return nil
}

func addMember(ctx context.Context, e execer, area store.AreaID, account store.AccountID, role store.Role, now time.Time) error {
	if role != store.RoleOwner && role != store.RoleMember {
		return store.ErrInvalid
	}
	_, err := e.ExecContext(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES (?, ?, ?, ?)`,
		int64(area), int64(account), string(role), ms(now))
	return err
}

// IsMember implements store.Store.
func (s *Store) IsMember(ctx context.Context, area store.AreaID, account store.AccountID) (bool, error) {
	_, err := s.MemberRole(ctx, area, account)
	if errors.Is(err, store.ErrNotMember) {
		return false, nil
	}
	return err == nil, err
}

// MemberRole implements store.Store.
func (s *Store) MemberRole(ctx context.Context, area store.AreaID, account store.AccountID) (store.Role, error) {
	var role string
	err := s.db.QueryRowContext(ctx, `SELECT role FROM area_members WHERE area_id = ? AND account_id = ?`, int64(area), int64(account)).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, store.ErrNotMember)
	}
	if err != nil {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, mapErr(err))
	}
	return store.Role(role), nil
}

// Members implements store.Store.
func (s *Store) Members(ctx context.Context, area store.AreaID) ([]store.Member, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT account_id, role, added_at FROM area_members WHERE area_id = ? ORDER BY account_id`, int64(area))
	mems, err := collect(rows, err, func(r scanner) (store.Member, error) {
		var m store.Member
		var role string
		var added int64
		err := r.Scan(&m.Account, &role, &added)
		m.Role, m.Added = store.Role(role), tm(added)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("members of area %d: %w", area, mapErr(err))
	}
	return mems, nil
}

// ---- invites ----

// CreateInvite implements store.Store.
func (s *Store) CreateInvite(ctx context.Context, inv store.Invite) error {
	if inv.Code == "" || inv.UsesLeft < 0 {
		return fmt.Errorf("create invite: %w", store.ErrInvalid)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO invite_codes (code, area_id, created_by, uses_left, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, inv.Code, int64(inv.Area), int64(inv.CreatedBy), inv.UsesLeft, ms(inv.Expires), ms(inv.Created))
	if err != nil {
		return fmt.Errorf("create invite to area %d: %w", inv.Area, mapErr(err))
	}
	return nil
}

// RedeemInvite implements store.Store.
func (s *Store) RedeemInvite(ctx context.Context, code string, account store.AccountID, now time.Time) (store.AreaID, error) {
	var area store.AreaID
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var uses int
		var exp int64
		err := tx.QueryRowContext(ctx, `SELECT area_id, uses_left, expires_at FROM invite_codes WHERE code = ?`, code).
			Scan(&area, &uses, &exp)
		if err != nil {
			return err
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM area_members WHERE area_id = ? AND account_id = ?`, int64(area), int64(account)).Scan(&one)
		if err == nil {
			return nil // already a member: no use spent
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		switch {
		case ms(now) >= exp:
			return store.ErrExpired
		case uses <= 0:
			return store.ErrUsedUp
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invite_codes SET uses_left = uses_left - 1 WHERE code = ?`, code); err != nil {
			return err
		}
		return addMember(ctx, tx, area, account, store.RoleMember, now)
	})
	if err != nil {
		return 0, fmt.Errorf("redeem invite for account %d: %w", account, mapErr(err))
	}
	return area, nil
}

// InvitesBy implements store.Store.
func (s *Store) InvitesBy(ctx context.Context, account store.AccountID, now time.Time, limit int) ([]store.Invite, error) {
	if limit < 1 {
		return nil, fmt.Errorf("invites by account %d: %w: limit %d", account, store.ErrInvalid, limit)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT code, area_id, created_by, uses_left, expires_at, created_at FROM invite_codes
		WHERE created_by = ? AND uses_left > 0 AND expires_at > ? ORDER BY created_at DESC, code LIMIT ?`, int64(account), ms(now), limit)
	invs, err := collect(rows, err, func(r scanner) (store.Invite, error) {
		var inv store.Invite
		var exp, created int64
		err := r.Scan(&inv.Code, &inv.Area, &inv.CreatedBy, &inv.UsesLeft, &exp, &created)
		inv.Expires, inv.Created = tm(exp), tm(created)
		return inv, err
	})
	if err != nil {
		return nil, fmt.Errorf("invites by account %d: %w", account, mapErr(err))
	}
	return invs, nil
}

// ---- incarnations and snapshots ----

// BeginIncarnation implements store.Store.
func (s *Store) BeginIncarnation(ctx context.Context, area store.AreaID) (store.Epoch, error) {
	var e store.Epoch
	err := s.db.QueryRowContext(ctx, `UPDATE areas SET epoch = epoch + 1 WHERE id = ? RETURNING epoch`, int64(area)).Scan(&e)
	if err != nil {
		return 0, fmt.Errorf("begin incarnation of area %d: %w", area, mapErr(err))
	}
	return e, nil
}

// WriteSnapshot implements store.Store: one transaction of a read of the
// Area's epoch and seq, then the Area row and one UPDATE per character.
func (s *Store) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	if snap.Seq > math.MaxInt64 {
		return store.SnapshotResult{}, fmt.Errorf("write snapshot area %d seq %d: %w: seq past 2^63-1", snap.Area, snap.Seq, store.ErrInvalid)
	}
	var res store.SnapshotResult
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var epoch store.Epoch
		var seq store.Seq
		if err := tx.QueryRowContext(ctx, `SELECT epoch, seq FROM areas WHERE id = ?`, int64(snap.Area)).Scan(&epoch, &seq); err != nil {
			return err
		}
		if epoch != snap.Epoch {
			return fmt.Errorf("%w: epoch %d, current %d", store.ErrFenced, snap.Epoch, epoch)
		}
		if snap.Seq <= seq {
			return nil // an older or repeated seq: idempotent no-op
		}
		if _, err := tx.ExecContext(ctx, `UPDATE areas SET state = ?, seq = ?, last_played_at = ? WHERE id = ?`,
			nonNil(snap.Blob), int64(snap.Seq), ms(snap.At), int64(snap.Area)); err != nil {
			return err
		}
		res.Applied = true
		if len(snap.Characters) == 0 {
			return nil
		}
		st, err := tx.PrepareContext(ctx, `UPDATE characters
			SET x = ?, y = ?, state = ?, placed = 1, version = version + 1, updated_at = ?
			WHERE account_id = ? AND area_id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, c := range snap.Characters {
			n, err := affected(st.ExecContext(ctx, c.X, c.Y, nonNil(c.State), ms(snap.At), int64(c.Account), int64(snap.Area)))
			if err != nil {
				return err
			}
			res.Characters += n
		}
		return nil
	})
	if err != nil {
		return store.SnapshotResult{}, fmt.Errorf("write snapshot area %d epoch %d seq %d: %w", snap.Area, snap.Epoch, snap.Seq, mapErr(err))
	}
	return res, nil
}

// AreaSnapshot implements store.Store.
func (s *Store) AreaSnapshot(ctx context.Context, area store.AreaID) ([]byte, store.Seq, store.Epoch, error) {
	var blob []byte
	var seq store.Seq
	var e store.Epoch
	err := s.db.QueryRowContext(ctx, `SELECT state, seq, epoch FROM areas WHERE id = ?`, int64(area)).Scan(&blob, &seq, &e)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("snapshot of area %d: %w", area, mapErr(err))
	}
	return blob, seq, e, nil
}

// ---- characters ----

const charCols = `account_id, area_id, home_id, x, y, state, placed, version, updated_at`

func scanChar(r scanner) (store.Character, error) {
	var c store.Character
	var updated int64
	err := r.Scan(&c.Account, &c.Area, &c.Home, &c.X, &c.Y, &c.State, &c.Placed, &c.Version, &updated)
	c.Updated = tm(updated)
	return c, err
}

// Character implements store.Store.
func (s *Store) Character(ctx context.Context, account store.AccountID) (store.Character, error) {
	c, err := scanChar(s.db.QueryRowContext(ctx, `SELECT `+charCols+` FROM characters WHERE account_id = ?`, int64(account)))
	if err != nil {
		return store.Character{}, fmt.Errorf("character of account %d: %w", account, mapErr(err))
	}
	return c, nil
}

// EnsureCharacter implements store.Store.
func (s *Store) EnsureCharacter(ctx context.Context, account store.AccountID, home store.AreaID, now time.Time) (store.Character, bool, error) {
	c, err := scanChar(s.db.QueryRowContext(ctx, `INSERT INTO characters (account_id, area_id, home_id, updated_at)
		VALUES (?1, ?2, ?2, ?3) ON CONFLICT (account_id) DO NOTHING RETURNING `+charCols, int64(account), int64(home), ms(now)))
	if err == nil {
		return c, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Character{}, false, fmt.Errorf("ensure character of account %d: %w", account, mapErr(err))
	}
	c, err = s.Character(ctx, account)
	return c, false, err
}

// CharactersIn implements store.Store.
func (s *Store) CharactersIn(ctx context.Context, area store.AreaID) ([]store.Character, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+charCols+` FROM characters WHERE area_id = ? ORDER BY account_id`, int64(area))
	cs, err := collect(rows, err, scanChar)
	if err != nil {
		return nil, fmt.Errorf("characters in area %d: %w", area, mapErr(err))
	}
	return cs, nil
}

// ---- transfers ----

const transferCols = `transfer_id, account_id, from_area, to_area, to_x, to_y, state, status, result, created_at, expires_at`

func scanTransfer(r scanner) (store.Transfer, error) {
	var t store.Transfer
	var id, status, result string
	var created, expires int64
	err := r.Scan(&id, &t.Account, &t.From, &t.To, &t.X, &t.Y, &t.State, &status, &result, &created, &expires)
	t.ID, t.Status, t.Result = store.TransferID(id), store.TransferStatus(status), store.TransferResult(result)
	t.Created, t.Expires = tm(created), tm(expires)
	return t, err
}

// claimTransfer records t as pending unless its id exists, then returns
// the recorded row (the transaction already holds the write lock).
func claimTransfer(ctx context.Context, tx *sql.Tx, t store.Transfer) (rec store.Transfer, inserted bool, err error) {
	n, err := affected(tx.ExecContext(ctx, `INSERT INTO transfers (`+transferCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', '', ?, ?) ON CONFLICT (transfer_id) DO NOTHING`,
		string(t.ID), int64(t.Account), int64(t.From), int64(t.To), t.X, t.Y, nonNil(t.State), ms(t.Created), ms(t.Expires)))
	if err != nil {
		return store.Transfer{}, false, err
	}
	inserted = n == 1
	rec, err = scanTransfer(tx.QueryRowContext(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = ?`, string(t.ID)))
	if err != nil {
		return store.Transfer{}, false, err
	}
	if !rec.SameCrossing(t) {
		return store.Transfer{}, false, fmt.Errorf("%w: transfer %q recorded for account %d %d->%d", store.ErrConflict, t.ID, rec.Account, rec.From, rec.To)
	}
	return rec, inserted, nil
}

func finishTransfer(ctx context.Context, tx *sql.Tx, rec *store.Transfer, status store.TransferStatus, result store.TransferResult) error {
	rec.Status, rec.Result = status, result
	_, err := tx.ExecContext(ctx, `UPDATE transfers SET status = ?, result = ? WHERE transfer_id = ?`,
		string(status), string(result), string(rec.ID))
	return err
}

// BeginTransfer implements store.Store.
func (s *Store) BeginTransfer(ctx context.Context, t store.Transfer) (store.Transfer, error) {
	if err := t.Validate(); err != nil || t.Expires.IsZero() {
		return store.Transfer{}, fmt.Errorf("begin transfer %q: %w", t.ID, store.ErrInvalid)
	}
	var rec store.Transfer
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		rec, _, err = claimTransfer(ctx, tx, t)
		return err
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("begin transfer %q: %w", t.ID, mapErr(err))
	}
	return rec, nil
}

// MoveCharacter implements store.Store.
func (s *Store) MoveCharacter(ctx context.Context, t store.Transfer, now time.Time) (store.Transfer, error) {
	if err := t.Validate(); err != nil {
		return store.Transfer{}, fmt.Errorf("move character, transfer %q: %w", t.ID, err)
	}
	if t.Created.IsZero() {
		t.Created = now
	}
	if t.Expires.IsZero() {
		t.Expires = now
	}
	var rec store.Transfer
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var inserted bool
		var err error
		rec, inserted, err = claimTransfer(ctx, tx, t)
		if err != nil || rec.Status != store.TransferPending {
			return err // replay: the recorded result
		}
		if !inserted && ms(now) >= ms(rec.Expires) {
			return finishTransfer(ctx, tx, &rec, store.TransferRejected, store.ResultTimeout)
		}
		if t.FromEpoch != 0 {
			var epoch int64
			if err := tx.QueryRowContext(ctx, `SELECT epoch FROM areas WHERE id = ?`, int64(rec.From)).Scan(&epoch); err != nil {
				return err
			}
			if store.Epoch(epoch) != t.FromEpoch {
				return finishTransfer(ctx, tx, &rec, store.TransferRejected, store.ResultStaleSource)
			}
		}
		n, err := affected(tx.ExecContext(ctx, `UPDATE characters
			SET area_id = ?, x = ?, y = ?, state = ?, placed = 1, version = version + 1, updated_at = ?
			WHERE account_id = ? AND area_id = ?`,
			int64(rec.To), rec.X, rec.Y, nonNil(rec.State), ms(now), int64(rec.Account), int64(rec.From)))
		if err != nil {
			return err
		}
		if n == 0 {
			return finishTransfer(ctx, tx, &rec, store.TransferRejected, store.ResultNotInSource)
		}
		return finishTransfer(ctx, tx, &rec, store.TransferDone, store.ResultMoved)
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("move character of account %d, transfer %q: %w", t.Account, t.ID, mapErr(err))
	}
	return rec, nil
}

// RejectTransfer implements store.Store.
func (s *Store) RejectTransfer(ctx context.Context, id store.TransferID, result store.TransferResult) (store.Transfer, error) {
	var rec store.Transfer
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		rec, err = scanTransfer(tx.QueryRowContext(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = ?`, string(id)))
		if err != nil || rec.Status != store.TransferPending {
			return err
		}
		return finishTransfer(ctx, tx, &rec, store.TransferRejected, result)
	})
	if err != nil {
		return store.Transfer{}, fmt.Errorf("reject transfer %q: %w", id, mapErr(err))
	}
	return rec, nil
}

// Transfer implements store.Store.
func (s *Store) Transfer(ctx context.Context, id store.TransferID) (store.Transfer, error) {
	t, err := scanTransfer(s.db.QueryRowContext(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = ?`, string(id)))
	if err != nil {
		return store.Transfer{}, fmt.Errorf("transfer %q: %w", id, mapErr(err))
	}
	return t, nil
}

// PendingTransfers implements store.Store.
func (s *Store) PendingTransfers(ctx context.Context) ([]store.Transfer, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+transferCols+` FROM transfers WHERE status = 'pending' ORDER BY created_at, transfer_id`)
	ts, err := collect(rows, err, scanTransfer)
	if err != nil {
		return nil, fmt.Errorf("pending transfers: %w", mapErr(err))
	}
	return ts, nil
}

// ExpireTransfers implements store.Store.
func (s *Store) ExpireTransfers(ctx context.Context, now time.Time) ([]store.Transfer, error) {
	rows, err := s.db.QueryContext(ctx, `UPDATE transfers SET status = 'rejected', result = ?
		WHERE status = 'pending' AND expires_at <= ? RETURNING `+transferCols, string(store.ResultTimeout), ms(now))
	ts, err := collect(rows, err, scanTransfer)
	if err != nil {
		return nil, fmt.Errorf("expire transfers: %w", mapErr(err))
	}
	return ts, nil
}

// PruneTransfers implements store.Store.
func (s *Store) PruneTransfers(ctx context.Context, olderThan time.Time) (int, error) {
	n, err := affected(s.db.ExecContext(ctx, `DELETE FROM transfers WHERE status <> 'pending' AND created_at < ?`, ms(olderThan)))
	if err != nil {
		return 0, fmt.Errorf("prune transfers: %w", mapErr(err))
	}
	return n, nil
}

// ---- realm settings and samples ----

// RealmSettings implements store.Store.
func (s *Store) RealmSettings(ctx context.Context) (store.RealmSettings, error) {
	var r store.RealmSettings
	err := s.db.QueryRowContext(ctx, `SELECT open, player_cap, new_players_welcome, message FROM realm_settings`).
		Scan(&r.Open, &r.Cap, &r.NewPlayersWelcome, &r.Message)
	if err != nil {
		return store.RealmSettings{}, fmt.Errorf("realm settings: %w", mapErr(err))
	}
	return r, nil
}

// UpdateRealmSettings implements store.Store.
func (s *Store) UpdateRealmSettings(ctx context.Context, r store.RealmSettings) error {
	return s.execOne(ctx, "update realm settings",
		`UPDATE realm_settings SET open = ?, player_cap = ?, new_players_welcome = ?, message = ?`,
		r.Open, r.Cap, r.NewPlayersWelcome, r.Message)
}

// AddSample implements store.Store.
func (s *Store) AddSample(ctx context.Context, sm store.Sample) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO director_samples
		(at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		ms(sm.At), sm.Players, sm.LiveAreas, sm.FrozenAreas, sm.Hosts, sm.RSSBytes, sm.CPU, sm.WorstTickP99.Microseconds())
	if err != nil {
		return fmt.Errorf("add sample: %w", mapErr(err))
	}
	return nil
}

// Samples implements store.Store.
func (s *Store) Samples(ctx context.Context, since time.Time) ([]store.Sample, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us
		FROM director_samples WHERE at >= ? ORDER BY at`, ms(since))
	ss, err := collect(rows, err, func(r scanner) (store.Sample, error) {
		var sm store.Sample
		var at, p99 int64
		err := r.Scan(&at, &sm.Players, &sm.LiveAreas, &sm.FrozenAreas, &sm.Hosts, &sm.RSSBytes, &sm.CPU, &p99)
		sm.At, sm.WorstTickP99 = tm(at), time.Duration(p99)*time.Microsecond
		return sm, err
	})
	if err != nil {
		return nil, fmt.Errorf("samples: %w", mapErr(err))
	}
	return ss, nil
}

// PruneSamples implements store.Store.
func (s *Store) PruneSamples(ctx context.Context, before time.Time) (int, error) {
	n, err := affected(s.db.ExecContext(ctx, `DELETE FROM director_samples WHERE at < ?`, ms(before)))
	if err != nil {
		return 0, fmt.Errorf("prune samples: %w", mapErr(err))
	}
	return n, nil
}
