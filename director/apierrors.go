package director

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leyworks/ley/store"
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

// apiError is an API refusal: an HTTP status and a {code, message} body.
// One with a cause (an internal error) also carries error_id, a random id
// logged with the cause: the body never holds the cause itself.
type apiError struct {
	Status  int           `json:"-"`
	Code    string        `json:"code"`
	Message string        `json:"message"`
	ErrorID string        `json:"error_id,omitempty"`
	cause   error         // logged, never sent
	retry   time.Duration // a 429's Retry-After (rounded up to seconds, at least 1)
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func apiErr(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

func internalErr(err error) *apiError {
	return &apiError{Status: 500, Code: "INTERNAL", Message: "internal error", cause: err}
}

// storeErr answers a store failure: UNAVAILABLE for an outage (nothing
// changed), INTERNAL with its error id otherwise.
func storeErr(err error) *apiError {
	if errors.Is(err, store.ErrUnavailable) {
		return withCause(errUnavailable, err)
	}
	return internalErr(err)
}

var (
	errBadRequest   = func(msg string) *apiError { return apiErr(400, "BAD_REQUEST", msg) }
	errUnauthorized = apiErr(401, "UNAUTHORIZED", "a valid session token is required")
	errExpired      = apiErr(401, "SESSION_EXPIRED", "the session expired; log in again")
	errBadLogin     = apiErr(401, "BAD_CREDENTIALS", "wrong email or password")
	errForbidden    = apiErr(403, "FORBIDDEN", "not allowed")
	errEmailTaken   = apiErr(409, "EMAIL_TAKEN", "an account with this email exists")
	errNameTaken    = apiErr(409, "NAME_TAKEN", "another account has this name; choose another")
)

// Refusal codes of a join, each with its HTTP status.
var (
	errNoSuchArea       = apiErr(404, "NO_SUCH_AREA", "no such area, or you are not one of its members")
	errNotMember        = apiErr(403, "NOT_MEMBER", "you are not a member of this area")
	errRealmClosed      = apiErr(403, "REALM_CLOSED", "the realm is closed")
	errRealmFull        = apiErr(503, "REALM_FULL", "the realm is full")
	errNewPlayersClosed = apiErr(403, "NEW_PLAYERS_CLOSED", "the realm is not taking new players")
	errAtCapacity       = apiErr(503, "AT_CAPACITY", "no area host has room for this area")
	// errHostsCannotStart: no host has room and the ones the director
	// starts exit before they register. Their reason is logged with the
	// answer's error id and shown by GET /readyz.
	errHostsCannotStart = apiErr(503, "GRANT_FAILED", "no area host can start right now; the realm's operator sees why in the director's log and at /readyz")
	// errUnavailable: the store cannot be reached or refuses work for now
	// (a database restart): nothing changed; play in live Areas goes on.
	errUnavailable = &apiError{Status: http.StatusServiceUnavailable, Code: "UNAVAILABLE",
		Message: "the realm's database is unavailable for a moment: play goes on in the areas already live; try again shortly", retry: 2 * time.Second}
)

var (
	errMediaType = apiErr(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "the request body must be JSON: Content-Type: application/json")
	errOrigin    = apiErr(http.StatusForbidden, "BAD_ORIGIN", "requests from pages of other sites are refused")
)

// decode reads a JSON body strictly into v.
func decode(r *http.Request, v any) *apiError {
	body := io.Reader(r.Body)
	if !jsonBody(r) {
		var first [1]byte
		if n, _ := io.ReadFull(r.Body, first[:]); n == 1 {
			return errMediaType // a form or text/plain: perhaps a page of another site
		}
		body = bytes.NewReader(nil) // no body at all: the decoder says so
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apiErr(413, "TOO_LARGE", fmt.Sprintf("request body over %d bytes", maxBody))
		}
		return errBadRequest(decodeMessage(err))
	}
	if dec.More() {
		return errBadRequest("one JSON value expected")
	}
	return nil
}

// jsonBody reports whether r's body is declared as JSON.
func jsonBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// maxBody bounds every request body.
const maxBody = 64 << 10
