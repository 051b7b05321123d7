package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leyworks/ley/store"
)

// TestMapErrUnavailable: which driver errors mean the database is away
// (ErrUnavailable) and which say something about the work.
func TestMapErrUnavailable(t *testing.T) {
	pgErr := func(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code} }
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want error // the store error it maps to; nil: none
	}{
		{"admin shutdown", pgErr("57P01"), store.ErrUnavailable},
		{"crash shutdown", pgErr("57P02"), store.ErrUnavailable},
		{"starting up or in recovery", pgErr("57P03"), store.ErrUnavailable},
		{"too many connections", pgErr("53300"), store.ErrUnavailable},
		{"disk full", pgErr("53100"), store.ErrUnavailable},
		{"connection failure", pgErr("08006"), store.ErrUnavailable},
		{"a standby", pgErr("25006"), store.ErrUnavailable},
		{"connection refused", fmt.Errorf("dial: %w", refused), store.ErrUnavailable},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), store.ErrUnavailable},
		{"cut mid-answer", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), store.ErrUnavailable},
		{"conn closed", fmt.Errorf("query: %w", pgconn.ErrConnClosed), store.ErrUnavailable},
		{"unique violation", pgErr("23505"), store.ErrDuplicate},
		{"foreign key violation", pgErr("23503"), store.ErrNotFound},
		{"check violation", pgErr("23514"), store.ErrInvalid},
		{"serialization failure", pgErr("40001"), nil},
		{"wrong password", pgErr("28P01"), nil},
		{"syntax error", pgErr("42601"), nil},
		{"the caller cancelled", fmt.Errorf("%w: %w", context.Canceled, refused), nil},
		{"the caller's deadline", fmt.Errorf("%w: %w", context.DeadlineExceeded, io.ErrUnexpectedEOF), nil},
		{"something else", errors.New("boom"), nil},
	}
	for _, tt := range tests {
		got := mapErr(tt.err)
		if tt.want != store.ErrDuplicate && tt.want != store.ErrNotFound && tt.want != store.ErrInvalid && !errors.Is(got, tt.err) {
			t.Errorf("%s: mapErr(%v) = %v; want it to keep the driver's error", tt.name, tt.err, got)
		}
		for _, e := range []error{store.ErrUnavailable, store.ErrDuplicate, store.ErrNotFound, store.ErrInvalid} {
			if errors.Is(got, e) != (e == tt.want) {
				t.Errorf("%s: mapErr(%v) = %v; want %v", tt.name, tt.err, got, tt.want)
			}
		}
	}
}
