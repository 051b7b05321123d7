package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
)

// TestLockedFileIsUnavailable: while another connection holds the
// database file's write lock past the busy timeout, writes fail with
// ErrUnavailable; once it lets go, they succeed again on the same Store.
func TestLockedFileIsUnavailable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ley.db")
	s := open(t, path)
	if err := s.Pragma(ctx, "busy_timeout", 50); err != nil { // not BusyTimeout's 5 s a write
		t.Fatal(err)
	}
	acct, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	locker, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	if _, err := locker.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name  string
		write func() error
	}{
		{"SetAdmin", func() error { return s.SetAdmin(ctx, acct.ID, true) }},
		{"CreateArea", func() error {
			_, err := s.CreateArea(ctx, store.NewArea{Owner: acct.ID, Kind: "home", Name: "x", W: 8, H: 8, Created: time.Now()})
			return err
		}},
	}
	for _, w := range writes {
		if err := w.write(); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s while another connection holds the lock: err = %v; want ErrUnavailable", w.name, err)
		}
	}
	if _, err := locker.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if err := w.write(); err != nil {
			t.Errorf("%s once the lock is gone: %v", w.name, err)
		}
	}
}

// TestFullDatabaseIsUnavailable: a database that cannot grow (its
// max_page_count reached, as a full disk would) refuses writes with
// ErrUnavailable, and takes them again once it has room.
func TestFullDatabaseIsUnavailable(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "ley.db"))
	acct, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := s.PragmaValue(ctx, "page_count")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pragma(ctx, "max_page_count", pages); err != nil {
		t.Fatal(err)
	}
	big := store.NewArea{Owner: acct.ID, Kind: "home", Name: "big", W: 8, H: 8, Rules: make([]byte, 1<<20), Created: time.Now()}
	if _, err := s.CreateArea(ctx, big); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("CreateArea in a full database: err = %v; want ErrUnavailable", err)
	}
	if err := s.Pragma(ctx, "max_page_count", 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateArea(ctx, big); err != nil {
		t.Errorf("CreateArea once there is room: %v", err)
	}
}

// TestConstraintIsNotUnavailable: a refusal on the data's merits is never
// ErrUnavailable.
func TestConstraintIsNotUnavailable(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "ley.db"))
	if _, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a"})
	if !errors.Is(err, store.ErrDuplicate) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("CreateAccount of a taken email: err = %v; want ErrDuplicate only", err)
	}
}
