package pg

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/leyworks/ley/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the Postgres store.Store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// term is the leadership term every write is fenced by: 0 until Lead
	// returns (the Store writes unfenced), then the term it leads in.
	term atomic.Uint64

	leadMu   sync.Mutex // guards the fields below
	led      bool       // Lead was called
	lead     *store.Leadership
	lockConn *pgx.Conn          // holds the advisory lock
	stopKeep context.CancelFunc // stops keep
	keepDone chan struct{}      // closed when keep returned
}

// querier is what a statement runs on: the pool, or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The leadership's timings: keep checks the lock's connection every
// leadKeepEvery, and gives the leadership up when a check takes longer
// than leadKeepTimeout. Postgres, for its part, probes the connection of
// a leader gone silent (leadKeepalive* below) and ends it, releasing the
// lock, after about 11 s: later than the leader gives up by itself.
const (
	leadKeepEvery   = time.Second
	leadKeepTimeout = 5 * time.Second
)

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
		return fmt.Errorf("migrate: %w", err)
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

// noop is the down step of a data migration that leaves valid data behind.
func noop(context.Context, *sql.Tx) error { return nil }

// Close closes the pool, waiting for acquired connections to be released,
// then gives the leadership up (if held).
func (s *Store) Close() error {
	s.pool.Close()
	s.leadMu.Lock()
	stop, done, conn := s.stopKeep, s.keepDone, s.lockConn
	s.leadMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := conn.Close(ctx); err != nil {
			return fmt.Errorf("close the leadership's connection: %w", err)
		}
	}
	return nil
}

// Lead implements store.Store. It takes the realm's advisory lock (the
// leadership row's lock_key) on a connection of its own, waiting while
// another director holds it, then raises the row's term and records me.
// A goroutine checks the connection every second: when it fails (or the
// row shows a newer term) the leadership is lost. Postgres probes the
// connection too (TCP keepalives after 5 s of silence), so the lock of a
// leader whose machine vanished is released within about 11 s; that of a
// leader whose process died, at once.
func (s *Store) Lead(ctx context.Context, me store.Leader) (*store.Leadership, error) {
	s.leadMu.Lock()
	if s.led {
		s.leadMu.Unlock()
		return nil, fmt.Errorf("lead: %w: this Store led already", store.ErrInvalid)
	}
	s.led = true
	s.leadMu.Unlock()
	cfg := s.pool.Config().ConnConfig.Copy()
	params := make(map[string]string, len(cfg.RuntimeParams)+4)
	for k, v := range cfg.RuntimeParams {
		params[k] = v
	}
	params["tcp_keepalives_idle"] = "5"
	params["tcp_keepalives_interval"] = "2"
	params["tcp_keepalives_count"] = "3"
	params["application_name"] = "ley director leadership"
	cfg.RuntimeParams = params
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("lead: connect: %w", err)
	}
	fail := func(what string, err error) (*store.Leadership, error) {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return nil, errors.Join(fmt.Errorf("lead: %s: %w", what, mapErr(err)), conn.Close(cctx))
	}
	var key int64
	if err := conn.QueryRow(ctx, `SELECT lock_key FROM leadership`).Scan(&key); err != nil {
		return fail("read the lock key", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fail("wait for the leadership", err)
	}
	var term store.Term
	if err := conn.QueryRow(ctx, `UPDATE leadership SET term = term + 1, http = $1, control = $2, since = now() RETURNING term`,
		me.HTTP, me.Control).Scan(&term); err != nil {
		return fail("begin a term", err)
	}
	l := store.NewLeadership(term)
	kctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.leadMu.Lock()
	s.lead, s.lockConn, s.stopKeep, s.keepDone = l, conn, stop, done
	s.term.Store(uint64(term))
	s.leadMu.Unlock()
	go s.keep(kctx, conn, l, done)
	return l, nil
}

// keep checks the leadership's connection until ctx is done or the
// leadership is lost; on a loss it closes the connection, releasing the
// lock if Postgres had not yet.
func (s *Store) keep(ctx context.Context, conn *pgx.Conn, l *store.Leadership, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(leadKeepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Lost():
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(cctx)
			cancel()
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, leadKeepTimeout)
		var term store.Term
		err := conn.QueryRow(cctx, `SELECT term FROM leadership`).Scan(&term)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			l.Lose(fmt.Errorf("the leadership's connection failed: %w", err))
		case term != l.Term():
			l.Lose(fmt.Errorf("the realm is in term %d", term))
		}
	}
}

// Leader implements store.Store.
func (s *Store) Leader(ctx context.Context) (store.Leader, error) {
	var ld store.Leader
	var since *time.Time
	err := s.pool.QueryRow(ctx, `SELECT term, http, control, since FROM leadership`).Scan(&ld.Term, &ld.HTTP, &ld.Control, &since)
	if err != nil {
		return store.Leader{}, fmt.Errorf("leader: %w", mapErr(err))
	}
	if ld.Term == 0 || since == nil {
		return store.Leader{}, fmt.Errorf("leader: %w: no director has led", store.ErrNotFound)
	}
	ld.Since = *since
	return ld, nil
}

// fence checks, inside tx, that the Store's term is still the realm's
// newest (nothing for a Store that never led). FOR SHARE on the
// leadership row makes a new leader's term bump wait for tx to end, and
// tx see a bump committed before it: a write commits before the next
// term begins, or fails with ErrDeposed.
func (s *Store) fence(ctx context.Context, tx pgx.Tx) error {
	term := store.Term(s.term.Load())
	if term == 0 {
		return nil
	}
	s.leadMu.Lock()
	l := s.lead
	s.leadMu.Unlock()
	if err := l.Err(); err != nil {
		return err
	}
	var cur store.Term
	if err := tx.QueryRow(ctx, `SELECT term FROM leadership FOR SHARE`).Scan(&cur); err != nil {
		return fmt.Errorf("check the term: %w", err)
	}
	if cur != term {
		l.Lose(fmt.Errorf("the realm is in term %d", cur))
		return l.Err()
	}
	return nil
}

// mapErr turns constraint violations and no-rows into the store's errors.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
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
	return err
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// tx runs f in a transaction fenced by the Store's term (see fence).
func (s *Store) tx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.fence(ctx, tx); err != nil {
			return err
		}
		return f(tx)
	})
}

// write runs a one-statement write f: on the pool for a Store that never
// led, in a transaction fenced by its term for one that did.
func (s *Store) write(ctx context.Context, f func(q querier) error) error {
	if s.term.Load() == 0 {
		return f(s.pool)
	}
	return s.tx(ctx, func(tx pgx.Tx) error { return f(tx) })
}

// ---- accounts ----

const accountCols = `id, email, name, is_admin, created_at`

func scanAccount(row pgx.Row) (store.Account, error) {
	var a store.Account
	err := row.Scan(&a.ID, &a.Email, &a.Name, &a.Admin, &a.Created)
	return a, err
}

// CreateAccount implements store.Store.
func (s *Store) CreateAccount(ctx context.Context, na store.NewAccount) (store.Account, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Account{}, fmt.Errorf("create account: %w", err)
	}
	var a store.Account
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = scanAccount(tx.QueryRow(ctx,
			`INSERT INTO accounts (email, name, is_admin, created_at) VALUES ($1, $2, $3, $4) RETURNING `+accountCols,
			na.Email, na.Name, na.Admin, na.Created))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES ($1, $2, $3, $4)`,
			a.ID, store.ProviderPassword, na.Email, na.PasswordPHC)
		return err
	})
	if err != nil {
		return store.Account{}, fmt.Errorf("create account %q: %w", na.Email, mapErr(err))
	}
	return a, nil
}

// Account implements store.Store.
func (s *Store) Account(ctx context.Context, id store.AccountID) (store.Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1`, id))
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
	err := s.pool.QueryRow(ctx, `SELECT a.id, a.email, a.name, a.is_admin, a.created_at,
		coalesce(i.provider, ''), coalesce(i.subject, ''), coalesce(i.password_phc, '')
		FROM accounts a LEFT JOIN auth_identities i ON i.account_id = a.id WHERE a.email = $1`, email).
		Scan(&a.ID, &a.Email, &a.Name, &a.Admin, &a.Created, &id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Account{}, store.Identity{}, fmt.Errorf("account by email %q: %w", email, mapErr(err))
	}
	if id.Provider != "" {
		id.Account = a.ID
	}
	return a, id, nil
}

// Identity implements store.Store.
func (s *Store) Identity(ctx context.Context, account store.AccountID) (store.Identity, error) {
	id := store.Identity{Account: account}
	err := s.pool.QueryRow(ctx, `SELECT provider, subject, password_phc FROM auth_identities WHERE account_id = $1`, account).
		Scan(&id.Provider, &id.Subject, &id.PasswordPHC)
	if err != nil {
		return store.Identity{}, fmt.Errorf("identity of account %d: %w", account, mapErr(err))
	}
	return id, nil
}

// AddIdentity implements store.Store.
func (s *Store) AddIdentity(ctx context.Context, id store.Identity) error {
	err := s.write(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO auth_identities (account_id, provider, subject, password_phc) VALUES ($1, $2, $3, $4)`,
			id.Account, id.Provider, id.Subject, id.PasswordPHC)
		return err
	})
	if err != nil {
		return fmt.Errorf("add identity to account %d: %w", id.Account, mapErr(err))
	}
	return nil
}

// UpdatePassword implements store.Store.
func (s *Store) UpdatePassword(ctx context.Context, account store.AccountID, phc string) error {
	return s.execOne(ctx, fmt.Sprintf("update password of account %d", account),
		`UPDATE auth_identities SET password_phc = $2 WHERE account_id = $1`, account, phc)
}

// SetAdmin implements store.Store.
func (s *Store) SetAdmin(ctx context.Context, account store.AccountID, admin bool) error {
	return s.execOne(ctx, fmt.Sprintf("set admin of account %d", account),
		`UPDATE accounts SET is_admin = $2 WHERE id = $1`, account, admin)
}

// execOne runs a statement that must change exactly one row.
func (s *Store) execOne(ctx context.Context, what, sql string, args ...any) error {
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, sql, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// ---- sessions ----

const sessionCols = `token_hash, account_id, created_at, last_seen, idle_ms, idle_expires_at, expires_at, revoked`

func scanSession(row pgx.Row) (store.Session, error) {
	var ss store.Session
	var hash []byte
	var idleMS int64
	err := row.Scan(&hash, &ss.Account, &ss.Created, &ss.LastSeen, &idleMS, &ss.IdleExpires, &ss.Expires, &ss.Revoked)
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
func (s *Store) CreateSession(ctx context.Context, hash store.TokenHash, account store.AccountID, now time.Time, idle, absolute time.Duration) (store.Session, error) {
	if idle < time.Millisecond || absolute <= 0 {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, store.ErrInvalid)
	}
	exp := now.Add(absolute)
	idleExp := now.Add(idle)
	if idleExp.After(exp) {
		idleExp = exp
	}
	var ss store.Session
	err := s.write(ctx, func(q querier) error {
		var err error
		ss, err = scanSession(q.QueryRow(ctx, `INSERT INTO sessions (`+sessionCols+`)
			VALUES ($1, $2, $3, $3, $4, $5, $6, false) RETURNING `+sessionCols,
			hash[:], account, now, idle.Milliseconds(), idleExp, exp))
		return err
	})
	if err != nil {
		return store.Session{}, fmt.Errorf("create session for account %d: %w", account, mapErr(err))
	}
	return ss, nil
}

// SessionByTokenHash implements store.Store.
func (s *Store) SessionByTokenHash(ctx context.Context, hash store.TokenHash, now time.Time) (store.Session, error) {
	ss, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE token_hash = $1`, hash[:]))
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
	var ss store.Session
	err := s.write(ctx, func(q querier) error {
		var err error
		ss, err = scanSession(q.QueryRow(ctx, `UPDATE sessions
			SET last_seen = $2, idle_expires_at = least($2 + idle_ms * interval '1 millisecond', expires_at)
			WHERE token_hash = $1 AND NOT revoked AND idle_expires_at > $2 AND expires_at > $2
			RETURNING `+sessionCols, hash[:], now))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		// Not valid: say why.
		ss, err := s.SessionByTokenHash(ctx, hash, now)
		if err == nil { // valid again in between: a race with a clock skew; report expired.
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
	return s.execOne(ctx, "revoke session", `UPDATE sessions SET revoked = true WHERE token_hash = $1`, hash[:])
}

// RevokeAccountSessions implements store.Store.
func (s *Store) RevokeAccountSessions(ctx context.Context, account store.AccountID) (int, error) {
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, `UPDATE sessions SET revoked = true WHERE account_id = $1 AND NOT revoked`, account)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoke sessions of account %d: %w", account, mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// PruneSessions implements store.Store.
func (s *Store) PruneSessions(ctx context.Context, now time.Time) (int, error) {
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, `DELETE FROM sessions WHERE revoked OR idle_expires_at <= $1 OR expires_at <= $1`, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune sessions: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// ---- areas and members ----

const areaCols = `id, owner_id, kind, template, name, w, h, seed, rules, seq, epoch, last_played_at, created_at`

func scanArea(row pgx.Row) (store.Area, error) {
	var a store.Area
	var seed int64
	var last *time.Time
	err := row.Scan(&a.ID, &a.Owner, &a.Kind, &a.Template, &a.Name, &a.W, &a.H, &seed, &a.Rules, &a.Seq, &a.Epoch, &last, &a.Created)
	a.Seed = uint64(seed)
	if last != nil {
		a.LastPlayed = *last
	}
	return a, err
}

// CreateArea implements store.Store.
func (s *Store) CreateArea(ctx context.Context, na store.NewArea) (store.Area, error) {
	na, err := na.Validate()
	if err != nil {
		return store.Area{}, fmt.Errorf("create area: %w", err)
	}
	var a store.Area
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = scanArea(tx.QueryRow(ctx, `INSERT INTO areas (owner_id, kind, template, name, w, h, seed, rules, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+areaCols,
			na.Owner, na.Kind, na.Template, na.Name, na.W, na.H, int64(na.Seed), nonNil(na.Rules), na.Created))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES ($1, $2, $3, $4)`,
			a.ID, na.Owner, string(store.RoleOwner), na.Created)
		return err
	})
	if err != nil {
		return store.Area{}, fmt.Errorf("create area %q for account %d: %w", na.Name, na.Owner, mapErr(err))
	}
	return a, nil
}

// Area implements store.Store.
func (s *Store) Area(ctx context.Context, id store.AreaID) (store.Area, error) {
	a, err := scanArea(s.pool.QueryRow(ctx, `SELECT `+areaCols+` FROM areas WHERE id = $1`, id))
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
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, `UPDATE areas SET rules = $1 WHERE id = $2`, rules, area)
		return err
	})
	if err != nil {
		return fmt.Errorf("set rules of area %d: %w", area, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set rules of area %d: %w", area, store.ErrNotFound)
	}
	return nil
}

// AreasOf implements store.Store.
func (s *Store) AreasOf(ctx context.Context, account store.AccountID) ([]store.Area, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+areaCols+` FROM areas
		WHERE id IN (SELECT area_id FROM area_members WHERE account_id = $1) ORDER BY id`, account)
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Area, error) { return scanArea(r) })
	if err != nil {
		return nil, fmt.Errorf("areas of account %d: %w", account, mapErr(err))
	}
	return as, nil
}

// FirstAreaOf implements store.Store.
func (s *Store) FirstAreaOf(ctx context.Context, template string) (store.Area, error) {
	a, err := scanArea(s.pool.QueryRow(ctx, `SELECT `+areaCols+` FROM areas WHERE template = $1 ORDER BY id LIMIT 1`, template))
	if err != nil {
		return store.Area{}, fmt.Errorf("first area of template %q: %w", template, mapErr(err))
	}
	return a, nil
}

// AddMember implements store.Store.
func (s *Store) AddMember(ctx context.Context, area store.AreaID, account store.AccountID, role store.Role, now time.Time) error {
	err := s.write(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES ($1, $2, $3, $4)`,
			area, account, string(role), now)
		return err
	})
	if err != nil {
		return fmt.Errorf("add account %d to area %d: %w", account, area, mapErr(err))
	}
	return nil
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
	err := s.pool.QueryRow(ctx, `SELECT role FROM area_members WHERE area_id = $1 AND account_id = $2`, area, account).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, store.ErrNotMember)
	}
	if err != nil {
		return "", fmt.Errorf("role of account %d in area %d: %w", account, area, mapErr(err))
	}
	return store.Role(role), nil
}

// Members implements store.Store.
func (s *Store) Members(ctx context.Context, area store.AreaID) ([]store.Member, error) {
	rows, _ := s.pool.Query(ctx, `SELECT account_id, role, added_at FROM area_members WHERE area_id = $1 ORDER BY account_id`, area)
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Member, error) {
		var m store.Member
		var role string
		err := r.Scan(&m.Account, &role, &m.Added)
		m.Role = store.Role(role)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("members of area %d: %w", area, mapErr(err))
	}
	return ms, nil
}

// ---- invites ----

// CreateInvite implements store.Store.
func (s *Store) CreateInvite(ctx context.Context, inv store.Invite) error {
	if inv.Code == "" || inv.UsesLeft < 0 {
		return fmt.Errorf("create invite: %w", store.ErrInvalid)
	}
	err := s.write(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO invite_codes (code, area_id, created_by, uses_left, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, inv.Code, inv.Area, inv.CreatedBy, inv.UsesLeft, inv.Expires, inv.Created)
		return err
	})
	if err != nil {
		return fmt.Errorf("create invite to area %d: %w", inv.Area, mapErr(err))
	}
	return nil
}

// RedeemInvite implements store.Store.
func (s *Store) RedeemInvite(ctx context.Context, code string, account store.AccountID, now time.Time) (store.AreaID, error) {
	var area store.AreaID
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var uses int
		var exp time.Time
		err := tx.QueryRow(ctx, `SELECT area_id, uses_left, expires_at FROM invite_codes WHERE code = $1 FOR UPDATE`, code).
			Scan(&area, &uses, &exp)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `SELECT 1 FROM area_members WHERE area_id = $1 AND account_id = $2`, area, account)
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			return nil // already a member: no use spent
		}
		switch {
		case !now.Before(exp):
			return store.ErrExpired
		case uses <= 0:
			return store.ErrUsedUp
		}
		if _, err := tx.Exec(ctx, `UPDATE invite_codes SET uses_left = uses_left - 1 WHERE code = $1`, code); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO area_members (area_id, account_id, role, added_at) VALUES ($1, $2, $3, $4)`,
			area, account, string(store.RoleMember), now)
		return err
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
	rows, _ := s.pool.Query(ctx, `SELECT code, area_id, created_by, uses_left, expires_at, created_at FROM invite_codes
		WHERE created_by = $1 AND uses_left > 0 AND expires_at > $2 ORDER BY created_at DESC, code LIMIT $3`, account, now, limit)
	invs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Invite, error) {
		var inv store.Invite
		err := r.Scan(&inv.Code, &inv.Area, &inv.CreatedBy, &inv.UsesLeft, &inv.Expires, &inv.Created)
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
	err := s.write(ctx, func(q querier) error {
		return q.QueryRow(ctx, `UPDATE areas SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch`, area).Scan(&e)
	})
	if err != nil {
		return 0, fmt.Errorf("begin incarnation of area %d: %w", area, mapErr(err))
	}
	return e, nil
}

// WriteSnapshot implements store.Store. One transaction: a conditional
// UPDATE of the Area row (which takes its row lock, so concurrent writers
// serialise), then one UPDATE ... FROM unnest(...) for all characters.
func (s *Store) WriteSnapshot(ctx context.Context, snap store.Snapshot) (store.SnapshotResult, error) {
	if snap.Seq > math.MaxInt64 {
		return store.SnapshotResult{}, fmt.Errorf("write snapshot area %d seq %d: %w: seq past 2^63-1", snap.Area, snap.Seq, store.ErrInvalid)
	}
	var res store.SnapshotResult
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE areas SET state = $3, seq = $4, last_played_at = $5
			WHERE id = $1 AND epoch = $2 AND seq < $4`,
			snap.Area, snap.Epoch, nonNil(snap.Blob), snap.Seq, snap.At)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var epoch store.Epoch
			if err := tx.QueryRow(ctx, `SELECT epoch FROM areas WHERE id = $1`, snap.Area).Scan(&epoch); err != nil {
				return err
			}
			if epoch != snap.Epoch {
				return fmt.Errorf("%w: epoch %d, current %d", store.ErrFenced, snap.Epoch, epoch)
			}
			return nil // an older or repeated seq: idempotent no-op
		}
		res.Applied = true
		if len(snap.Characters) == 0 {
			return nil
		}
		n := len(snap.Characters)
		accts, xs, ys, states := make([]int64, n), make([]int32, n), make([]int32, n), make([][]byte, n)
		for i, c := range snap.Characters {
			accts[i], xs[i], ys[i], states[i] = int64(c.Account), c.X, c.Y, nonNil(c.State)
		}
		tag, err = tx.Exec(ctx, `UPDATE characters c
			SET x = v.x, y = v.y, state = v.state, placed = true, version = c.version + 1, updated_at = $6
			FROM unnest($2::bigint[], $3::integer[], $4::integer[], $5::bytea[]) AS v(account_id, x, y, state)
			WHERE c.account_id = v.account_id AND c.area_id = $1`,
			snap.Area, accts, xs, ys, states, snap.At)
		if err != nil {
			return err
		}
		res.Characters = int(tag.RowsAffected())
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
	err := s.pool.QueryRow(ctx, `SELECT state, seq, epoch FROM areas WHERE id = $1`, area).Scan(&blob, &seq, &e)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("snapshot of area %d: %w", area, mapErr(err))
	}
	return blob, seq, e, nil
}

// ---- characters ----

const charCols = `account_id, area_id, home_id, x, y, state, placed, version, updated_at`

func scanChar(row pgx.Row) (store.Character, error) {
	var c store.Character
	err := row.Scan(&c.Account, &c.Area, &c.Home, &c.X, &c.Y, &c.State, &c.Placed, &c.Version, &c.Updated)
	return c, err
}

// Character implements store.Store.
func (s *Store) Character(ctx context.Context, account store.AccountID) (store.Character, error) {
	c, err := scanChar(s.pool.QueryRow(ctx, `SELECT `+charCols+` FROM characters WHERE account_id = $1`, account))
	if err != nil {
		return store.Character{}, fmt.Errorf("character of account %d: %w", account, mapErr(err))
	}
	return c, nil
}

// EnsureCharacter implements store.Store.
func (s *Store) EnsureCharacter(ctx context.Context, account store.AccountID, home store.AreaID, now time.Time) (store.Character, bool, error) {
	var c store.Character
	err := s.write(ctx, func(q querier) error {
		var err error
		c, err = scanChar(q.QueryRow(ctx, `INSERT INTO characters (account_id, area_id, home_id, updated_at)
			VALUES ($1, $2, $2, $3) ON CONFLICT (account_id) DO NOTHING RETURNING `+charCols, account, home, now))
		return err
	})
	if err == nil {
		return c, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Character{}, false, fmt.Errorf("ensure character of account %d: %w", account, mapErr(err))
	}
	c, err = s.Character(ctx, account)
	return c, false, err
}

// CharactersIn implements store.Store.
func (s *Store) CharactersIn(ctx context.Context, area store.AreaID) ([]store.Character, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+charCols+` FROM characters WHERE area_id = $1 ORDER BY account_id`, area)
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Character, error) { return scanChar(r) })
	if err != nil {
		return nil, fmt.Errorf("characters in area %d: %w", area, mapErr(err))
	}
	return cs, nil
}

// ---- transfers ----

const transferCols = `transfer_id, account_id, from_area, to_area, to_x, to_y, state, status, result, created_at, expires_at`

func scanTransfer(row pgx.Row) (store.Transfer, error) {
	var t store.Transfer
	var status, result string
	err := row.Scan(&t.ID, &t.Account, &t.From, &t.To, &t.X, &t.Y, &t.State, &status, &result, &t.Created, &t.Expires)
	t.Status, t.Result = store.TransferStatus(status), store.TransferResult(result)
	return t, err
}

func collectTransfers(rows pgx.Rows) ([]store.Transfer, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Transfer, error) { return scanTransfer(r) })
}

// claimTransfer records t as pending unless its id exists, then locks and
// returns the recorded row.
func claimTransfer(ctx context.Context, tx pgx.Tx, t store.Transfer) (rec store.Transfer, inserted bool, err error) {
	tag, err := tx.Exec(ctx, `INSERT INTO transfers (`+transferCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', '', $8, $9) ON CONFLICT (transfer_id) DO NOTHING`,
		string(t.ID), t.Account, t.From, t.To, t.X, t.Y, nonNil(t.State), t.Created, t.Expires)
	if err != nil {
		return store.Transfer{}, false, err
	}
	inserted = tag.RowsAffected() == 1
	rec, err = scanTransfer(tx.QueryRow(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = $1 FOR UPDATE`, string(t.ID)))
	if err != nil {
		return store.Transfer{}, false, err
	}
	if !rec.SameCrossing(t) {
		return store.Transfer{}, false, fmt.Errorf("%w: transfer %q recorded for account %d %d->%d", store.ErrConflict, t.ID, rec.Account, rec.From, rec.To)
	}
	return rec, inserted, nil
}

func finishTransfer(ctx context.Context, tx pgx.Tx, rec *store.Transfer, status store.TransferStatus, result store.TransferResult) error {
	rec.Status, rec.Result = status, result
	_, err := tx.Exec(ctx, `UPDATE transfers SET status = $2, result = $3 WHERE transfer_id = $1`,
		string(rec.ID), string(status), string(result))
	return err
}

// BeginTransfer implements store.Store.
func (s *Store) BeginTransfer(ctx context.Context, t store.Transfer) (store.Transfer, error) {
	if err := t.Validate(); err != nil || t.Expires.IsZero() {
		return store.Transfer{}, fmt.Errorf("begin transfer %q: %w", t.ID, store.ErrInvalid)
	}
	var rec store.Transfer
	err := s.tx(ctx, func(tx pgx.Tx) error {
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var inserted bool
		var err error
		rec, inserted, err = claimTransfer(ctx, tx, t)
		if err != nil || rec.Status != store.TransferPending {
			return err // replay: the recorded result
		}
		if !inserted && !now.Before(rec.Expires) {
			return finishTransfer(ctx, tx, &rec, store.TransferRejected, store.ResultTimeout)
		}
		if t.FromEpoch != 0 {
			var epoch store.Epoch
			if err := tx.QueryRow(ctx, `SELECT epoch FROM areas WHERE id = $1 FOR UPDATE`, rec.From).Scan(&epoch); err != nil {
				return err
			}
			if epoch != t.FromEpoch {
				return finishTransfer(ctx, tx, &rec, store.TransferRejected, store.ResultStaleSource)
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE characters
			SET area_id = $3, x = $4, y = $5, state = $6, placed = true, version = version + 1, updated_at = $7
			WHERE account_id = $1 AND area_id = $2`,
			rec.Account, rec.From, rec.To, rec.X, rec.Y, nonNil(rec.State), now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		rec, err = scanTransfer(tx.QueryRow(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = $1 FOR UPDATE`, string(id)))
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
	t, err := scanTransfer(s.pool.QueryRow(ctx, `SELECT `+transferCols+` FROM transfers WHERE transfer_id = $1`, string(id)))
	if err != nil {
		return store.Transfer{}, fmt.Errorf("transfer %q: %w", id, mapErr(err))
	}
	return t, nil
}

// PendingTransfers implements store.Store.
func (s *Store) PendingTransfers(ctx context.Context) ([]store.Transfer, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+transferCols+` FROM transfers WHERE status = 'pending' ORDER BY created_at, transfer_id`)
	ts, err := collectTransfers(rows)
	if err != nil {
		return nil, fmt.Errorf("pending transfers: %w", mapErr(err))
	}
	return ts, nil
}

// ExpireTransfers implements store.Store.
func (s *Store) ExpireTransfers(ctx context.Context, now time.Time) ([]store.Transfer, error) {
	var ts []store.Transfer
	err := s.write(ctx, func(q querier) error {
		rows, _ := q.Query(ctx, `UPDATE transfers SET status = 'rejected', result = $2
			WHERE status = 'pending' AND expires_at <= $1 RETURNING `+transferCols, now, string(store.ResultTimeout))
		var err error
		ts, err = collectTransfers(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("expire transfers: %w", mapErr(err))
	}
	return ts, nil
}

// PruneTransfers implements store.Store.
func (s *Store) PruneTransfers(ctx context.Context, olderThan time.Time) (int, error) {
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, `DELETE FROM transfers WHERE status <> 'pending' AND created_at < $1`, olderThan)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune transfers: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// ---- realm settings and samples ----

// RealmSettings implements store.Store.
func (s *Store) RealmSettings(ctx context.Context) (store.RealmSettings, error) {
	var r store.RealmSettings
	err := s.pool.QueryRow(ctx, `SELECT open, player_cap, new_players_welcome, message FROM realm_settings`).
		Scan(&r.Open, &r.Cap, &r.NewPlayersWelcome, &r.Message)
	if err != nil {
		return store.RealmSettings{}, fmt.Errorf("realm settings: %w", mapErr(err))
	}
	return r, nil
}

// UpdateRealmSettings implements store.Store.
func (s *Store) UpdateRealmSettings(ctx context.Context, r store.RealmSettings) error {
	return s.execOne(ctx, "update realm settings",
		`UPDATE realm_settings SET open = $1, player_cap = $2, new_players_welcome = $3, message = $4`,
		r.Open, r.Cap, r.NewPlayersWelcome, r.Message)
}

// AddSample implements store.Store.
func (s *Store) AddSample(ctx context.Context, sm store.Sample) error {
	err := s.write(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO director_samples
			(at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			sm.At, sm.Players, sm.LiveAreas, sm.FrozenAreas, sm.Hosts, sm.RSSBytes, sm.CPU, sm.WorstTickP99.Microseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("add sample: %w", mapErr(err))
	}
	return nil
}

// Samples implements store.Store.
func (s *Store) Samples(ctx context.Context, since time.Time) ([]store.Sample, error) {
	rows, _ := s.pool.Query(ctx, `SELECT at, players, live_areas, frozen_areas, hosts, rss_bytes, cpu, worst_tick_p99_us
		FROM director_samples WHERE at >= $1 ORDER BY at`, since)
	ss, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Sample, error) {
		var sm store.Sample
		var p99 int64
		err := r.Scan(&sm.At, &sm.Players, &sm.LiveAreas, &sm.FrozenAreas, &sm.Hosts, &sm.RSSBytes, &sm.CPU, &p99)
		sm.WorstTickP99 = time.Duration(p99) * time.Microsecond
		return sm, err
	})
	if err != nil {
		return nil, fmt.Errorf("samples: %w", mapErr(err))
	}
	return ss, nil
}

// PruneSamples implements store.Store.
func (s *Store) PruneSamples(ctx context.Context, before time.Time) (int, error) {
	var tag pgconn.CommandTag
	err := s.write(ctx, func(q querier) error {
		var err error
		tag, err = q.Exec(ctx, `DELETE FROM director_samples WHERE at < $1`, before)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune samples: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}
