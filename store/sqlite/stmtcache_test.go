package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
)

// TestWritesStayPrepared: a snapshot's writes are prepared once and
// executed again from the connection's cache, inside transactions, and
// stay right.
func TestWritesStayPrepared(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "ley.db"))
	a, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@x", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	area, err := s.CreateArea(ctx, store.NewArea{Owner: a.ID, Kind: "home", Name: "home", W: 24, H: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EnsureCharacter(ctx, a.ID, area.ID, time.UnixMilli(1)); err != nil {
		t.Fatal(err)
	}
	e, err := s.BeginIncarnation(ctx, area.ID, store.TokenHash{})
	if err != nil {
		t.Fatal(err)
	}
	write := func(seq store.Seq) {
		t.Helper()
		res, err := s.WriteSnapshot(ctx, store.Snapshot{Area: area.ID, Epoch: e, Seq: seq, Blob: []byte(fmt.Sprint("s", seq)),
			Characters: []store.CharacterState{{Account: a.ID, X: int32(seq), Y: 2, State: []byte("c")}}, At: time.UnixMilli(int64(seq))})
		if err != nil || !res.Applied || res.Characters != 1 {
			t.Fatalf("WriteSnapshot seq %d = %+v, %v; want applied with its character", seq, res, err)
		}
	}
	write(1)
	after1, err := s.CachedStatements(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after1 < 2 {
		t.Fatalf("%d statements cached after a snapshot; want its two writes at least", after1)
	}
	for seq := store.Seq(2); seq <= 5; seq++ {
		write(seq)
	}
	if n, err := s.CachedStatements(ctx); err != nil || n != after1 {
		t.Errorf("%d statements cached after five snapshots (%v); want %d, the first one's", n, err, after1)
	}
	blob, seq, _, err := s.AreaSnapshot(ctx, area.ID)
	if err != nil || seq != 5 || string(blob) != "s5" {
		t.Errorf("AreaSnapshot = %q, %d, %v; want s5 at 5", blob, seq, err)
	}
	ch, err := s.Character(ctx, a.ID)
	if err != nil || ch.X != 5 || ch.Version != 6 {
		t.Errorf("Character = %+v, %v; want x 5, version 6 (1 when made, one a write)", ch, err)
	}
}

// TestStatementCacheBound: past maxCached statements, the rest are
// prepared each time, and every one still runs.
func TestStatementCacheBound(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "ley.db"))
	if _, err := s.Exec(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * sqlite.MaxCached {
		// One text per i: the +0s make it distinct.
		q := `INSERT INTO t (k, v) VALUES ($1, $2` + strings.Repeat("+0", i) + `)`
		if n, err := s.Exec(ctx, q, i, i); err != nil || n != 1 {
			t.Fatalf("insert %d = %d, %v", i, n, err)
		}
	}
	if n, err := s.CachedStatements(ctx); err != nil || n != sqlite.MaxCached {
		t.Errorf("%d statements cached (%v); want the bound, %d", n, err, sqlite.MaxCached)
	}
	if sum, err := s.QueryInt(ctx, `SELECT sum(v) FROM t`); err != nil || sum != (2*sqlite.MaxCached-1)*sqlite.MaxCached {
		t.Errorf("sum = %d, %v; want %d", sum, err, (2*sqlite.MaxCached-1)*sqlite.MaxCached)
	}
}

// TestCachedStatementAfterSchemaChange: a statement cached before the
// schema changed runs after it, on the new schema.
func TestCachedStatementAfterSchemaChange(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "ley.db"))
	if _, err := s.Exec(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO t (k, v) VALUES ($1, $2)`
	if _, err := s.Exec(ctx, ins, 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 7`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, ins, 2, 2); err != nil {
		t.Fatalf("the cached insert after ALTER TABLE: %v", err)
	}
	if w, err := s.QueryInt(ctx, `SELECT w FROM t WHERE k = 2`); err != nil || w != 7 {
		t.Errorf("w = %d, %v; want the new column's default, 7", w, err)
	}
}

// TestCloseFinalizesCachedStatements: a connection with statements
// cached still closes whole: its log checkpointed and removed.
func TestCloseFinalizesCachedStatements(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "ley.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(t.Context(), `UPDATE realm_settings SET message = message WHERE id = $1`, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CachedStatements(t.Context()); err != nil || n < 1 {
		t.Fatalf("%d statements cached (%v); want the update at least", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"ley.db"}) {
		t.Errorf("after Close the directory held %v; want only ley.db", names)
	}
}
