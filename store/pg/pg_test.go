package pg_test

import (
	"testing"

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
		ctx := t.Context()
		s := pgtest.Open(t)
		if err := s.RollBack(ctx, 1); err != nil {
			t.Fatal(err)
		}
		ids := make([]store.AccountID, len(legacy))
		for i, e := range legacy {
			var err error
			if ids[i], err = s.InsertLegacyAccount(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s, ids
	})
}
