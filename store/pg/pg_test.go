package pg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/pg"
	"github.com/leyworks/ley/store/pg/pgtest"
	"github.com/leyworks/ley/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}

func TestSimpleProtocolRefused(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if s, err := pg.OpenConfig(t.Context(), cfg); err == nil {
		s.Close()
		t.Fatal("OpenConfig with the simple protocol succeeded; want an error")
	}
}

// TestMigrateConcurrently runs Migrate from several goroutines on one
// fresh schema: the advisory lock makes them apply it once.
func TestMigrateConcurrently(t *testing.T) {
	s := pgtest.Open(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- s.Migrate(t.Context()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestLegacyEmails: migration 2 on rows stored before it.
func TestLegacyEmails(t *testing.T) {
	storetest.RunLegacyEmails(t, func(t *testing.T, legacy []string) (store.Store, []store.AccountID) {
		s := pgtest.Open(t)
		return s, storetest.SeedLegacyEmails(t, s, legacy)
	})
}

// TestLeadershipFences: one Store leads, a second waits on the lock; the
// first's lock connection is cut (as when its machine vanishes and
// Postgres ends its session) and the second leads in a higher term; the
// first, which never noticed, has every write refused with ErrDeposed
// and loses its leadership; the second writes; closing it lets a third
// lead.
func TestLeadershipFences(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewSchema(t)
	open := func() *pg.Store {
		s, err := pg.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	la, err := a.Lead(ctx, store.Leader{HTTP: "http://a", Control: "a:7070"})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := a.CreateAccount(ctx, store.NewAccount{Email: "lead@example.org", Name: "lead", Created: time.Now()})
	if err != nil {
		t.Fatalf("a write of the leader: %v", err)
	}
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var key int64
	if err := admin.QueryRow(ctx, `SELECT lock_key FROM leadership`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	lockers := func(granted bool) []int32 {
		rows, _ := admin.Query(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
			AND ((classid::bigint << 32) | objid::bigint) = $1 AND granted = $2`, key, granted)
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	type result struct {
		l   *store.Leadership
		err error
	}
	bDone := make(chan result, 1)
	go func() {
		l, err := b.Lead(ctx, store.Leader{HTTP: "http://b", Control: "b:7070"})
		bDone <- result{l, err}
	}()
	waitUntil(t, "the second Store waiting for the lock", func() bool { return len(lockers(false)) == 1 })
	holder := lockers(true)
	if len(holder) != 1 {
		t.Fatalf("holders of the leadership lock: %v; want one", holder)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, holder[0]); err != nil {
		t.Fatal(err)
	}
	rb := <-bDone
	if rb.err != nil {
		t.Fatalf("the second Lead: %v", rb.err)
	}
	if rb.l.Term() != la.Term()+1 {
		t.Errorf("second term = %d; want %d", rb.l.Term(), la.Term()+1)
	}
	for _, w := range []struct {
		name string
		err  func() error
	}{
		{"SetAdmin", func() error { return a.SetAdmin(ctx, acct.ID, true) }},
		{"CreateArea", func() error {
			_, err := a.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: "home", Name: "x", W: 8, H: 8, Created: time.Now()})
			return err
		}},
		{"AddSample", func() error { return a.AddSample(ctx, store.Sample{At: time.Now()}) }},
	} {
		if err := w.err(); !errors.Is(err, store.ErrDeposed) {
			t.Errorf("%s of the deposed Store: err = %v; want ErrDeposed", w.name, err)
		}
	}
	select {
	case <-la.Lost():
	default:
		t.Error("the deposed Store's leadership is not lost")
	}
	if err := b.SetAdmin(ctx, acct.ID, true); err != nil {
		t.Errorf("a write of the new leader: %v", err)
	}
	if ld, err := a.Leader(ctx); err != nil || ld.Term != rb.l.Term() || ld.HTTP != "http://b" {
		t.Errorf("Leader = %+v, %v; want the second Store in term %d", ld, err, rb.l.Term())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := open()
	lc, err := c.Lead(ctx, store.Leader{HTTP: "http://c", Control: "c:7070"})
	if err != nil {
		t.Fatalf("Lead after the leader closed: %v", err)
	}
	if lc.Term() != rb.l.Term()+1 {
		t.Errorf("third term = %d; want %d", lc.Term(), rb.l.Term()+1)
	}
}

// waitUntil polls cond every 10 ms for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLegacyTemplates: migration 4 on Areas stored before it.
func TestLegacyTemplates(t *testing.T) {
	storetest.RunLegacyTemplates(t, func(t *testing.T, legacy []storetest.LegacyArea) store.Store {
		s := pgtest.Open(t)
		storetest.SeedLegacy(t, s, 3, legacy)
		return s
	})
}
