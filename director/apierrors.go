package director

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The answers for requests no route takes.
var (
	errNoRoute  = apiErr(http.StatusNotFound, "NOT_FOUND", "no such endpoint")
	errNoMethod = apiErr(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "this endpoint does not take this method (see Allow)")
)

// rateLimited is a 429 RATE_LIMITED saying when to retry.
func rateLimited(retry time.Duration, msg string) *apiError {
	e := apiErr(http.StatusTooManyRequests, "RATE_LIMITED", msg)
	e.retry = retry
	return e
}

// withCause returns e carrying cause: the body gets an opaque error id,
// and the id and cause are logged.
func withCause(e *apiError, cause error) *apiError {
	c := *e
	c.cause = cause
	return &c
}

// retryAfter is a Retry-After value: whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// writeError writes e as the API answers every refusal.
func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

// jsonErrors marks every answer nosniff and answers the requests mux has
// no route for, 404 and 405 (with ServeMux's Allow header), in the API's
// {code, message} shape rather than ServeMux's plain text; mux serves
// everything else itself.
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No answer is ever to be read as anything but its Content-Type
		// (a JSON answer holding a player's text, sniffed as HTML).
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := headerRecorder{header: http.Header{}}
		h.ServeHTTP(&rec, r)
		switch rec.status {
		case http.StatusNotFound:
			writeError(w, errNoRoute)
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", rec.header.Get("Allow"))
			writeError(w, errNoMethod)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// headerRecorder keeps the status and headers a handler writes and drops
// its body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *headerRecorder) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(b), nil
}

// decodeMessage words a JSON decoding error for the client: where the
// syntax broke, or which field was wrong or unknown, never Go's types.
func decodeMessage(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "empty request body: a JSON object expected"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends too early"
	case errors.As(err, &syntax):
		return fmt.Sprintf("malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("field %q has the wrong type", typ.Field)
	case errors.As(err, &typ):
		return "a JSON object expected"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if uq, err := strconv.Unquote(f); err == nil && len(uq) <= 64 {
			return fmt.Sprintf("unknown field %q", uq)
		}
		return "unknown field"
	}
	return "malformed JSON"
}

// randomHex is n random bytes in hex: error ids and invite codes.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
