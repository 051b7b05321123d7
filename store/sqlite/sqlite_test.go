package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
	"github.com/leyworks/ley/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "data", "ley.db")) })
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
		s := open(t, filepath.Join(t.TempDir(), "ley.db"))
		return s, storetest.SeedLegacyEmails(t, s, legacy)
	})
}

// TestLegacyTemplates: migration 4 on Areas stored before it.
func TestLegacyTemplates(t *testing.T) {
	storetest.RunLegacyTemplates(t, func(t *testing.T, legacy []storetest.LegacyArea) store.Store {
		s := open(t, filepath.Join(t.TempDir(), "ley.db"))
		storetest.SeedLegacy(t, s, 2, legacy)
		return s
	})
}

// open opens the database at path, closed at cleanup.
func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}
