package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// TokenLen is the length of a session token from NewToken: 32 random bytes
// in unpadded base64url.
const TokenLen = 43

// maxBearerLen bounds the Authorization header ParseBearer looks at.
const maxBearerLen = 256

// NewToken returns a new session token (256 bits from crypto/rand,
// unpadded base64url, TokenLen bytes) and its SHA-256, HashToken(token).
// Store only the hash: a leaked sessions table then holds no usable
// tokens. Safe for concurrent use; cost: one read from crypto/rand, one
// SHA-256 and one small allocation.
func NewToken() (token string, hash [32]byte) {
	var raw [32]byte
	rand.Read(raw[:]) // never fails: crypto/rand crashes the program instead
	token = base64.RawURLEncoding.EncodeToString(raw[:])
	return token, HashToken(token)
}

// HashToken returns SHA-256 of the token's text, the key a session is
// stored and looked up under. Looking a presented token up by its hash
// needs no constant-time compare: the lookup sees only the hash, and timing
// that leaks how much of a hash matched tells an attacker nothing about a
// token that hashes to it. Safe for concurrent use; does not allocate for
// tokens of up to 64 bytes.
func HashToken(token string) [32]byte {
	// A plain []byte(token) gets only a 32-byte stack buffer; tokens are
	// longer, so copy into a bigger one.
	var buf [64]byte
	if len(token) <= len(buf) {
		return sha256.Sum256(buf[:copy(buf[:], token)])
	}
	return sha256.Sum256([]byte(token))
}

// ParseBearer returns the token of an `Authorization: Bearer <token>`
// header value. The scheme is matched case-insensitively, followed by one
// or more spaces; the token must look like one from NewToken (TokenLen
// base64url characters), so junk is refused before any store lookup. It
// reports false otherwise, including for values over 256 bytes. It does not
// allocate.
func ParseBearer(header string) (string, bool) {
	const scheme = "bearer "
	if len(header) > maxBearerLen || len(header) < len(scheme)+TokenLen ||
		!strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimLeft(header[len(scheme):], " ")
	if len(tok) != TokenLen {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return tok, true
}
