package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/crypto/argon2"
)

// Password length bounds, in bytes, enforced by CheckPassword.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 1024
)

// Hasher hashes and verifies passwords with argon2id, running at most a
// fixed number of hashes at once. It is safe for concurrent use; build it
// with NewHasher.
type Hasher struct {
	p     Params
	sem   chan struct{} // one token per running hash
	dummy phc           // what VerifyUnknown verifies against

	// derive is argon2id; tests replace it before first use to count
	// calls and watch concurrency.
	derive func(password, salt []byte, p Params) []byte

	// A derivation allocates p.Memory KiB and drops it; nothing else in a
	// quiet director allocates enough to make the collector take it, so
	// after a burst of logins the process would hold maxConcurrent times
	// that and more for minutes. When no hash has run for releaseAfter,
	// the memory goes back to the operating system (giveBack).
	mu      sync.Mutex
	running int
	release *time.Timer
}

// releaseAfter is how long hashing must have stopped before the memory it
// took is given back: a burst of logins gives it back once, at its end.
const releaseAfter = time.Second

// NewHasher returns a Hasher that hashes new passwords with p and runs at
// most maxConcurrent hashes at once, so hashing holds at most about
// maxConcurrent*p.Memory KiB live (plus garbage the GC has not yet taken).
// It panics if p.Validate fails or maxConcurrent < 1: both are
// configuration errors; call p.Validate first to report them gracefully.
func NewHasher(p Params, maxConcurrent int) *Hasher {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return newHasher(p, maxConcurrent)
}

// newHasher is NewHasher without the floor, for tests that need cheap
// hashes. Production code goes through NewHasher.
func newHasher(p Params, maxConcurrent int) *Hasher {
	if maxConcurrent < 1 {
		panic(fmt.Sprintf("auth: NewHasher: maxConcurrent %d < 1", maxConcurrent))
	}
	h := &Hasher{p: p, sem: make(chan struct{}, maxConcurrent), derive: idKey}
	// The dummy needs no real password behind it: VerifyUnknown only has
	// to cost one derivation with p, and a random key never matches.
	h.dummy = phc{p: p, salt: make([]byte, saltLen), key: make([]byte, p.KeyLen)}
	rand.Read(h.dummy.salt)
	rand.Read(h.dummy.key)
	return h
}

func idKey(password, salt []byte, p Params) []byte {
	return argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, p.KeyLen)
}

// Params returns the parameters h hashes new passwords with.
func (h *Hasher) Params() Params { return h.p }

// Hash returns the PHC string of password under a fresh 16-byte salt and
// h's Params. It costs one argon2id derivation, after waiting for a free
// slot; it returns ctx's error if ctx ends while waiting. It does not check
// the password rules: call CheckPassword first.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	ph := phc{p: h.p, salt: make([]byte, saltLen)}
	rand.Read(ph.salt) // never fails: crypto/rand crashes the program instead
	key, err := h.run(ctx, password, ph.salt, h.p)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	ph.key = key
	return string(appendPHC(make([]byte, 0, 128), ph)), nil
}

// Verify reports whether password matches the stored PHC string, comparing
// keys in constant time. When ok, rehash reports that the stored hash is
// weaker than h's Params (any parameter lower, or a short salt): the caller
// should then store the result of Hash(password) so costs can rise over
// time. A malformed phc returns an error wrapping ErrBadHash without
// hashing; a ctx that ends while waiting for a slot returns its error.
// Cost: one argon2id derivation at the stored parameters.
func (h *Hasher) Verify(ctx context.Context, phcStr, password string) (ok, rehash bool, err error) {
	ph, err := parsePHC(phcStr)
	if err != nil {
		return false, false, err
	}
	ok, err = h.verify(ctx, ph, password)
	if err != nil {
		return false, false, fmt.Errorf("auth: verify password: %w", err)
	}
	return ok, ok && below(ph.p, len(ph.salt), h.p), nil
}

// VerifyUnknown costs what Verify costs against a hash made with h's Params,
// and always fails. Call it when the account does not exist, so that an
// unknown email answers in the same time as a wrong password. It returns
// early only if ctx ends while waiting for a slot.
func (h *Hasher) VerifyUnknown(ctx context.Context, password string) {
	// The only error is ctx's, and the caller answers "wrong credentials"
	// either way.
	_, _ = h.verify(ctx, h.dummy, password)
}

func (h *Hasher) verify(ctx context.Context, ph phc, password string) (bool, error) {
	key, err := h.run(ctx, password, ph.salt, ph.p)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(key, ph.key) == 1, nil
}

// run derives a key once a slot is free.
func (h *Hasher) run(ctx context.Context, password string, salt []byte, p Params) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.sem }()
	h.mu.Lock()
	h.running++
	h.mu.Unlock()
	defer h.ended()
	return h.derive([]byte(password), salt, p), nil
}

// ended counts a derivation done; the last of a burst arms giveBack.
func (h *Hasher) ended() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running--; h.running > 0 {
		return
	}
	if h.release == nil {
		h.release = time.AfterFunc(releaseAfter, h.giveBack)
	} else {
		h.release.Reset(releaseAfter)
	}
}

// giveBack returns the memory the hashes took to the operating system,
// unless one runs again (it will give it back when it ends). It costs one
// collection of the director's heap, less than the derivation before it.
func (h *Hasher) giveBack() {
	h.mu.Lock()
	idle := h.running == 0
	h.mu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

// CheckPassword reports whether pw is acceptable as a new password: between
// MinPasswordLen and MaxPasswordLen bytes and not only white space. It
// returns ErrPasswordTooShort, ErrPasswordTooLong or ErrPasswordBlank.
// Cost: one pass over pw.
func CheckPassword(pw string) error {
	switch {
	case len(pw) < MinPasswordLen:
		return ErrPasswordTooShort
	case len(pw) > MaxPasswordLen:
		return ErrPasswordTooLong
	case strings.TrimFunc(pw, unicode.IsSpace) == "":
		return ErrPasswordBlank
	}
	return nil
}
