package pg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
)

// TestLeadershipSurvivesRestart: a leading Store on a private cluster
// that is stopped (fast, then immediate) and started again. While it is
// down, every call fails with ErrUnavailable (never ErrDeposed) and the
// leadership is in doubt, not lost; once it is back, calls work again on
// the same Store and the leadership is held in the same term.
func TestLeadershipSurvivesRestart(t *testing.T) {
	t.Parallel() // each on a cluster of its own
	c := pgtest.NewCluster(t)
	ctx := t.Context()
	s := openStore(t, c.URL())
	l, err := s.Lead(ctx, store.Leader{HTTP: "http://a", Control: "a:7070"})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	area, err := s.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: "home", Name: "home", W: 8, H: 8, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EnsureCharacter(ctx, acct.ID, area.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	seq := store.Seq(0)
	snapshot := func() error {
		seq++
		_, err := s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: epoch, Seq: seq, Blob: []byte("blob"),
			Characters: []store.CharacterState{{Account: acct.ID, X: int32(seq)}}, At: time.Now()})
		return err
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"SetAdmin", func() error { return s.SetAdmin(ctx, acct.ID, true) }},
		{"CreateArea", func() error {
			_, err := s.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: "home", Name: "x", W: 8, H: 8, Created: time.Now()})
			return err
		}},
		{"WriteSnapshot", snapshot},
		{"MoveCharacter", func() error {
			_, err := s.MoveCharacter(ctx, store.Transfer{ID: store.TransferID(fmt.Sprint("t", seq)), Account: acct.ID, From: area.ID, To: area.ID, FromEpoch: epoch}, time.Now())
			return err
		}},
		{"Account", func() error { _, err := s.Account(ctx, acct.ID); return err }},
		{"Leader", func() error { _, err := s.Leader(ctx); return err }},
	}
	for _, mode := range []pgtest.StopMode{pgtest.StopFast, pgtest.StopImmediate} {
		t.Run(string(mode), func(t *testing.T) {
			c.Stop(mode)
			waitUntil(t, "the leadership in doubt", func() bool { return l.InDoubt() || l.Err() != nil })
			if err := l.Err(); err != nil {
				t.Fatalf("the leadership was lost when the database stopped: %v", err)
			}
			if err := l.Doubt(); !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("Doubt() = %v; want ErrUnavailable", err)
			}
			for _, cl := range calls {
				if err := cl.call(); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrDeposed) {
					t.Errorf("%s with the database down: err = %v; want ErrUnavailable, not ErrDeposed", cl.name, err)
				}
			}
			// The outage lasts a few seconds: the Store's attempts to take
			// its lock back fail, and it backs off, meanwhile.
			time.Sleep(time.Second)
			if err := l.Err(); err != nil {
				t.Fatalf("the leadership was lost in the outage: %v", err)
			}
			c.Start()
			waitUntil(t, "a write after the restart", func() bool { return s.SetAdmin(ctx, acct.ID, true) == nil })
			waitUntil(t, "the hold confirmed", func() bool { return !l.InDoubt() })
			for _, cl := range calls {
				if err := cl.call(); err != nil {
					t.Errorf("%s after the restart: %v", cl.name, err)
				}
			}
			select {
			case <-l.Lost():
				t.Fatalf("the leadership was lost: %v", l.Err())
			default:
			}
			if ld, err := s.Leader(ctx); err != nil || ld.Term != l.Term() || ld.HTTP != "http://a" {
				t.Errorf("Leader = %+v, %v; want this Store, still in term %d", ld, err, l.Term())
			}
		})
	}
}

// TestLeadershipMovesOnInAnOutage: a follower leads while the leader is
// cut off from the database (a restart that listens on the unix socket
// only, which the follower uses and the leader does not). The cut-off
// leader can tell nothing: its calls fail with ErrUnavailable and its
// leadership is in doubt. When it reaches the database again (a restart
// that listens on both) it finds the newer term: its leadership is lost
// and its writes fail with ErrDeposed, while the new leader, whose hold
// the restart put in doubt too, holds its term and writes.
func TestLeadershipMovesOnInAnOutage(t *testing.T) {
	t.Parallel() // each on a cluster of its own
	ctx := t.Context()
	r := cutOff(t)
	var lb *store.Leadership
	select {
	case res := <-r.bLead:
		if res.err != nil {
			t.Fatalf("the follower's Lead: %v", res.err)
		}
		lb = res.l
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not lead while the leader was cut off")
	}
	c, a, b, la := r.c, r.a, r.b, r.la
	acct, err := b.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Term() != la.Term()+1 {
		t.Errorf("the new term = %d; want %d", lb.Term(), la.Term()+1)
	}
	if err := a.SetAdmin(ctx, acct.ID, true); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrDeposed) {
		t.Errorf("a write of the cut-off leader: err = %v; want ErrUnavailable (it cannot know)", err)
	}
	if err := la.Err(); err != nil {
		t.Errorf("the cut-off leader's leadership is lost before it could know: %v", err)
	}

	c.Stop(pgtest.StopFast)
	c.Start()
	waitUntil(t, "the old leader's leadership lost", func() bool {
		select {
		case <-la.Lost():
			return true
		default:
			return false
		}
	})
	if err := la.Err(); !errors.Is(err, store.ErrDeposed) {
		t.Errorf("Err of the old leadership = %v; want ErrDeposed", err)
	}
	if err := a.SetAdmin(ctx, acct.ID, true); !errors.Is(err, store.ErrDeposed) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a write of the old leader: err = %v; want ErrDeposed", err)
	}
	waitUntil(t, "a write of the new leader", func() bool { return b.SetAdmin(ctx, acct.ID, false) == nil })
	waitUntil(t, "the new leader's hold confirmed", func() bool { return !lb.InDoubt() })
	if err := lb.Err(); err != nil {
		t.Errorf("the new leader's leadership was lost: %v", err)
	}
	if ld, err := b.Leader(ctx); err != nil || ld.Term != lb.Term() || ld.HTTP != "http://b" {
		t.Errorf("Leader = %+v, %v; want the new leader in term %d", ld, err, lb.Term())
	}
}

// TestFollowerWaitsOverARestart: a database restart does not move the
// leadership. A follower whose wait for the lock the outage ended queues
// again only a grace after it reconnected, and the leader, whose hold the
// outage put in doubt, takes its lock back within that grace. The test
// gives the follower a head start: the first restart listens on the unix
// socket only, which the follower uses and the leader does not, and the
// second (both) comes once the follower is back, within its grace. A
// follower that took the lock at once would be leading by then.
func TestFollowerWaitsOverARestart(t *testing.T) {
	t.Parallel() // each on a cluster of its own
	ctx := t.Context()
	r := cutOff(t)
	c, a, la, bLead := r.c, r.a, r.la, r.bLead
	waitUntil(t, "the follower reconnected", func() bool { return lockSessions(t, c.SocketURL()) == 1 })
	c.Stop(pgtest.StopFast)
	c.Start()
	waitUntil(t, "the leader's hold confirmed (or lost)", func() bool { return !la.InDoubt() })
	if err := la.Err(); err != nil {
		t.Fatalf("the leadership moved over a restart: %v", err)
	}
	waitUntil(t, "the follower waiting for the lock again", func() bool { return lockWaiters(t, c.SocketURL()) == 1 })
	select {
	case res := <-bLead:
		t.Fatalf("the follower led over a restart: %+v", res)
	default:
	}
	if ld, err := a.Leader(ctx); err != nil || ld.Term != la.Term() || ld.HTTP != "http://a" {
		t.Errorf("Leader = %+v, %v; want the leader still, in term %d", ld, err, la.Term())
	}
}

// cutOffRealm is a realm of two Stores on a private cluster: a leads over
// TCP, b follows (its Lead answers on bLead) over the unix socket.
type cutOffRealm struct {
	c     *pgtest.Cluster
	a, b  *pg.Store
	la    *store.Leadership
	bLead <-chan leadResult
}

// cutOff starts a leader and a follower waiting for the lock, then cuts
// the leader off: the cluster stopped (the leader's hold in doubt) and
// started on its unix socket only, where the follower reaches it.
func cutOff(t *testing.T) cutOffRealm {
	t.Helper()
	ctx := t.Context()
	r := cutOffRealm{c: pgtest.NewCluster(t)}
	r.a, r.b = openStore(t, r.c.URL()), openStore(t, r.c.SocketURL())
	var err error
	if r.la, err = r.a.Lead(ctx, store.Leader{HTTP: "http://a", Control: "a:7070"}); err != nil {
		t.Fatal(err)
	}
	r.bLead = lead(ctx, r.b, "b")
	waitUntil(t, "the follower waiting for the lock", func() bool { return lockWaiters(t, r.c.SocketURL()) == 1 })
	r.c.Stop(pgtest.StopFast)
	waitUntil(t, "the leadership in doubt", func() bool { return r.la.InDoubt() || r.la.Err() != nil })
	r.c.StartSocketOnly()
	return r
}

// openStore opens a Store on url, closed at cleanup.
func openStore(t *testing.T, url string) *pg.Store {
	t.Helper()
	s, err := pg.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type leadResult struct {
	l   *store.Leadership
	err error
}

// lead runs s.Lead in a goroutine and answers on the channel.
func lead(ctx context.Context, s *pg.Store, name string) <-chan leadResult {
	done := make(chan leadResult, 1)
	go func() {
		l, err := s.Lead(ctx, store.Leader{HTTP: "http://" + name, Control: name + ":7070"})
		done <- leadResult{l, err}
	}()
	return done
}

// lockWaiters counts the sessions waiting for the leadership's lock, or
// is -1 while the database cannot be asked.
func lockWaiters(t *testing.T, url string) int {
	return count(t, url, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND ((classid::bigint << 32) | objid::bigint) = (SELECT lock_key FROM leadership)`)
}

// lockSessions counts the Stores' leadership connections (waiting,
// holding, or in between), or is -1 while the database cannot be asked.
func lockSessions(t *testing.T, url string) int {
	return count(t, url, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ley director leadership'`)
}

// count runs a SELECT count(*) on a connection of its own to url; -1 when
// it cannot.
func count(t *testing.T, url, query string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return -1
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		return -1
	}
	return n
}
