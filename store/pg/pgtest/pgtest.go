// Package pgtest opens Postgres stores for tests and benchmarks, each in a
// fresh schema of its own that is dropped at cleanup, so runs never see
// each other's rows.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leyworks/ley/store/pg"
)

// DefaultURL is the Postgres used when LEY_TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test"

// URL returns LEY_TEST_DATABASE_URL, or DefaultURL.
func URL() string {
	if u := os.Getenv("LEY_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewSchema creates a fresh random schema, dropped at cleanup, and returns
// a URL of the test Postgres whose connections use it (search_path), for
// a process under test (a director) to open. It fails tb, never skips,
// when Postgres cannot be reached.
func NewSchema(tb testing.TB) string {
	tb.Helper()
	ctx := tb.Context()
	var b [8]byte
	rand.Read(b[:])
	schema := "leytest_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{schema}.Sanitize()

	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		tb.Fatalf("connect to the test Postgres %s (set LEY_TEST_DATABASE_URL): %v", URL(), err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		tb.Fatalf("create schema %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, URL())
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(URL())
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open returns a migrated Store in a new random schema (see NewSchema).
// Cleanup closes the Store and drops the schema.
func Open(tb testing.TB) *pg.Store {
	tb.Helper()
	s, err := pg.Open(tb.Context(), NewSchema(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() }) // cleanups run last-first: closes before the drop
	return s
}
