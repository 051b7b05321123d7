package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
	"github.com/leyworks/ley/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "data", "ley.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}

// TestReopen checks that a reopened file keeps its data and migrates as a
// no-op.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.CreateAccount(t.Context(), store.NewAccount{Email: "a@x", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Account(t.Context(), a.ID); err != nil || got.Email != "a@x" {
		t.Errorf("Account after reopen = %+v, %v; want a@x", got, err)
	}
}

// TestLegacyEmails: migration 2 on rows stored before it.
func TestLegacyEmails(t *testing.T) {
	storetest.RunLegacyEmails(t, func(t *testing.T, legacy []string) (store.Store, []store.AccountID) {
		ctx := t.Context()
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ley.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.RollBack(ctx, 1); err != nil {
			t.Fatal(err)
		}
		ids := make([]store.AccountID, len(legacy))
		for i, e := range legacy {
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

// TestLegacyTemplates: migration 4 on Areas stored before it.
func TestLegacyTemplates(t *testing.T) {
	storetest.RunLegacyTemplates(t, func(t *testing.T, legacy []storetest.LegacyArea) store.Store {
		ctx := t.Context()
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ley.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		storetest.SeedLegacy(t, s, 2, legacy)
		return s
	})
}
