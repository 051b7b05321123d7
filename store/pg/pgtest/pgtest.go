// Package pgtest opens Postgres stores for tests and benchmarks, each in a
// fresh schema of its own that is dropped at cleanup, so runs never see
// each other's rows.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// Open returns a migrated Store in a new random schema (its search_path
// set through the pool's RuntimeParams). Cleanup closes the Store and
// drops the schema. It fails tb, never skips, when Postgres cannot be
// reached.
func Open(tb testing.TB) *pg.Store {
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

	cfg, err := pgxpool.ParseConfig(URL())
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	s, err := pg.OpenConfig(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() }) // cleanups run last-first: closes before the drop
	return s
}
