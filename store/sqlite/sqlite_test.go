package sqlite_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// TestCloseWaitsForTheConnection: Close returns only once the connection
// is closed, with the write-ahead log checkpointed and gone, even when a
// statement still held the connection as Close began (database/sql closes
// such a connection when it is given back, after its own Close returned).
func TestCloseWaitsForTheConnection(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "ley.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAccount(t.Context(), store.NewAccount{Email: "a@x", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	release, err := s.HoldConnection(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // Close is waiting by then, most likely; if not, it finds the connection idle
		released <- release()
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, dir)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"ley.db"}) {
		t.Errorf("as Close returned the directory held %v; want only ley.db (the connection closed, its log checkpointed)", names)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
