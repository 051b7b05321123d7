package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leyworks/ley/store"
)

// The leadership's timings. keep checks the lock's connection every
// leadKeepEvery; a check that fails, or takes longer than
// leadKeepTimeout, puts the hold in doubt, and keep reconnects to take
// the lock back, leadRetryMin doubling to leadRetryMax between attempts.
// A Store whose wait for the lock failed (in Lead) queues for it again
// only leadRetakeGrace after it reconnected: longer than leadRetryMax,
// so that a leader whose hold failed in the same outage has tried to take
// its lock back first. Postgres, for its part, probes the lock's
// connection (the TCP keepalives of lockConfig) and ends a silent one,
// releasing the lock, after about 11 s.
const (
	leadKeepEvery   = time.Second
	leadKeepTimeout = 5 * time.Second
	leadRetryMin    = 100 * time.Millisecond
	leadRetryMax    = 2 * time.Second
	leadRetakeGrace = leadRetryMax + time.Second
)

// Lead implements store.Store. It takes the realm's advisory lock (the
// leadership row's lock_key) on a connection of its own, waiting while
// another director holds it, then raises the row's term and records me.
// When the database goes away while Lead waits, Lead reconnects (with
// backoff) and, leadRetakeGrace after it could, queues again.
//
// A goroutine (keep) checks the connection every second. A newer term in
// the row ends the leadership. A failed connection does not: the
// Leadership is in doubt while keep reconnects, takes the lock back with
// pg_try_advisory_lock and reads the term:
//
//   - the lock taken and the term still ours: nobody led meanwhile (a
//     leader would have raised the term while holding the lock, before
//     releasing it), so the leadership is held again, in the same term;
//   - the term moved on, the lock taken or not: another Store led
//     meanwhile, and the leadership is lost;
//   - the lock held by another session and the term still ours: that is
//     this Store's own old session, which Postgres has not yet ended (a
//     network cut: it ends it within about 11 s), or another Store
//     between taking the lock and raising the term (a Store that led
//     raises it at once). keep tries again: the old session's end frees
//     the lock, and a term raised by the other is seen at the next
//     attempt. Meanwhile that other Store's new term already fences this
//     one's writes: each write reads the term in its own transaction.
//
// So the hold may lapse while the lock's connection is down, but only a
// newer term, which no write of this Store can commit after, ends the
// leadership. Postgres probes the lock's connection too (TCP keepalives
// after 5 s of silence), so the lock of a leader whose machine vanished
// is released within about 11 s; that of a leader whose process died,
// at once.
func (s *Store) Lead(ctx context.Context, me store.Leader) (*store.Leadership, error) {
	s.leadMu.Lock()
	if s.led {
		s.leadMu.Unlock()
		return nil, fmt.Errorf("lead: %w: this Store led already", store.ErrInvalid)
	}
	s.led = true
	s.leadMu.Unlock()
	cfg := s.lockConfig()
	var grace time.Duration
	for delay := leadRetryMin; ; delay = min(2*delay, leadRetryMax) {
		conn, key, term, err := s.take(ctx, cfg, grace, me)
		if err == nil {
			l := store.NewLeadership(term)
			kctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			s.leadMu.Lock()
			s.stopKeep, s.keepDone = stop, done
			s.leadMu.Unlock()
			s.fence.Hold(l)
			go s.keep(kctx, cfg, conn, key, l, done)
			return l, nil
		}
		if !errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil {
			return nil, err
		}
		// The database went away while this Store waited: a leader
		// whose hold failed with it gets its lock back first.
		grace = leadRetakeGrace
		if !sleep(ctx, delay) {
			return nil, fmt.Errorf("lead: %w", ctx.Err())
		}
	}
}

// lockConfig returns the config of the leadership's own connection: the
// pool's, with TCP keepalives so that Postgres ends it soon after its
// machine vanished.
func (s *Store) lockConfig() *pgx.ConnConfig {
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
	return cfg
}

// take connects, waits grace, waits for the lock and begins a term in
// it, recording me. It returns the connection holding the lock.
func (s *Store) take(ctx context.Context, cfg *pgx.ConnConfig, grace time.Duration, me store.Leader) (*pgx.Conn, int64, store.Term, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("lead: connect: %w", mapErr(err))
	}
	fail := func(what string, err error) (*pgx.Conn, int64, store.Term, error) {
		return nil, 0, 0, errors.Join(fmt.Errorf("lead: %s: %w", what, mapErr(err)), closeConn(conn))
	}
	var key int64
	if err := conn.QueryRow(ctx, `SELECT lock_key FROM leadership`).Scan(&key); err != nil {
		return fail("read the lock key", err)
	}
	if !sleep(ctx, grace) {
		return fail("wait for a leader to come back", ctx.Err())
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fail("wait for the leadership", err)
	}
	var term store.Term
	if err := conn.QueryRow(ctx, `UPDATE leadership SET term = term + 1, http = $1, control = $2, since = now() RETURNING term`,
		me.HTTP, me.Control).Scan(&term); err != nil {
		return fail("begin a term", err)
	}
	return conn, key, term, nil
}

// keep checks the leadership's connection conn until ctx is done or the
// leadership is lost, and takes the lock back when the connection fails
// (see Lead). It owns conn, and sends done the error of its last close
// (nil if none) when it returns.
func (s *Store) keep(ctx context.Context, cfg *pgx.ConnConfig, conn *pgx.Conn, key int64, l *store.Leadership, done chan<- error) {
	defer func() {
		var err error
		if conn != nil {
			err = closeConn(conn)
		}
		done <- err
		close(done)
	}()
	t := time.NewTicker(leadKeepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Lost():
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
		case err == nil && term != l.Term():
			l.Lose(fmt.Errorf("the realm is in term %d", term))
			return
		case err == nil:
			continue
		}
		_ = closeConn(conn) // failed already: its close has nothing to say
		conn = nil
		l.SetDoubt(lockErr(err))
		if conn = s.retake(ctx, cfg, key, l); conn == nil {
			return
		}
		l.SetDoubt(nil)
	}
}

// retake reconnects until it holds the lock again in l's term (and
// returns the connection), finds a newer term (loses l), or ctx is done
// or l lost otherwise (nil).
func (s *Store) retake(ctx context.Context, cfg *pgx.ConnConfig, key int64, l *store.Leadership) *pgx.Conn {
	for delay := leadRetryMin; ; delay = min(2*delay, leadRetryMax) {
		conn, held, term, err := tryLock(ctx, cfg, key)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			l.SetDoubt(lockErr(err))
		case term != l.Term():
			_ = closeConn(conn) // releases the lock if it was taken
			l.Lose(fmt.Errorf("the realm is in term %d", term))
			return nil
		case held:
			return conn
		default:
			_ = closeConn(conn) // the lock is another session's: try again
		}
		select {
		case <-ctx.Done():
			return nil
		case <-l.Lost():
			return nil
		case <-time.After(delay):
		}
	}
}

// tryLock connects and tries the lock once, then reads the term: after
// the lock, so that a term read while holding it is final.
func tryLock(ctx context.Context, cfg *pgx.ConnConfig, key int64) (conn *pgx.Conn, held bool, term store.Term, err error) {
	cctx, cancel := context.WithTimeout(ctx, leadKeepTimeout)
	defer cancel()
	if conn, err = pgx.ConnectConfig(cctx, cfg); err != nil {
		return nil, false, 0, err
	}
	err = conn.QueryRow(cctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&held)
	if err == nil {
		err = conn.QueryRow(cctx, `SELECT term FROM leadership`).Scan(&term)
	}
	if err != nil {
		return nil, false, 0, errors.Join(err, closeConn(conn))
	}
	return conn, held, term, nil
}

// lockErr is why a failure of the lock's connection put the hold in
// doubt: always wrapping store.ErrUnavailable (a check that timed out
// counts as the database's silence).
func lockErr(err error) error {
	if m := mapErr(err); errors.Is(m, store.ErrUnavailable) {
		return fmt.Errorf("the leadership's connection failed: %w", m)
	}
	return fmt.Errorf("the leadership's connection failed: %w: %w", store.ErrUnavailable, err)
}

// closeConn closes conn, giving it a second to say goodbye.
func closeConn(conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return conn.Close(ctx)
}

// sleep waits d, or less when ctx is done first (it reports false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
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
