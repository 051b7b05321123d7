package auth

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// b64 is the PHC encoding: standard alphabet, no padding, and strict so
// that each byte string has exactly one accepted spelling.
var b64 = base64.RawStdEncoding.Strict()

// phc is a parsed argon2id PHC string. p.KeyLen is len(key).
type phc struct {
	p    Params
	salt []byte
	key  []byte
}

// appendPHC appends the PHC string of h to dst.
func appendPHC(dst []byte, h phc) []byte {
	dst = append(dst, phcPrefix...)
	dst = strconv.AppendUint(dst, uint64(h.p.Memory), 10)
	dst = append(dst, ",t="...)
	dst = strconv.AppendUint(dst, uint64(h.p.Time), 10)
	dst = append(dst, ",p="...)
	dst = strconv.AppendUint(dst, uint64(h.p.Threads), 10)
	dst = append(dst, '$')
	dst = b64.AppendEncode(dst, h.salt)
	dst = append(dst, '$')
	dst = b64.AppendEncode(dst, h.key)
	return dst
}

// parsePHC parses `$argon2id$v=19$m=M,t=T,p=P$<salt>$<key>` strictly: the
// fields in that order, decimal numbers without sign or leading zeros,
// unpadded standard base64 with zero trailing bits. A string it accepts is
// exactly what appendPHC writes for the result (FuzzParsePHC checks this).
// It never panics; every refusal wraps ErrBadHash and does not quote the
// input.
func parsePHC(s string) (phc, error) {
	var h phc
	if len(s) > maxPHCLen {
		return h, fmt.Errorf("%w: longer than %d bytes", ErrBadHash, maxPHCLen)
	}
	rest, ok := strings.CutPrefix(s, phcPrefix)
	if !ok {
		return h, fmt.Errorf("%w: not an argon2id v=19 PHC string", ErrBadHash)
	}
	m, rest, err := cutUint(rest, ",t=", maxMemory)
	if err != nil {
		return h, fmt.Errorf("%w: m: %s", ErrBadHash, err)
	}
	t, rest, err := cutUint(rest, ",p=", maxTime)
	if err != nil {
		return h, fmt.Errorf("%w: t: %s", ErrBadHash, err)
	}
	p, rest, err := cutUint(rest, "$", 255)
	if err != nil {
		return h, fmt.Errorf("%w: p: %s", ErrBadHash, err)
	}
	if t < 1 || p < 1 || m < 8*p {
		return h, fmt.Errorf("%w: need t >= 1, p >= 1, m >= 8*p", ErrBadHash)
	}
	saltB64, keyB64, ok := strings.Cut(rest, "$")
	if !ok {
		return h, fmt.Errorf("%w: missing key", ErrBadHash)
	}
	if h.salt, err = decodeB64(saltB64, minSaltLen, maxSaltLen); err != nil {
		return h, fmt.Errorf("%w: salt: %s", ErrBadHash, err)
	}
	if h.key, err = decodeB64(keyB64, minKeyLen, maxKeyLen); err != nil {
		return h, fmt.Errorf("%w: key: %s", ErrBadHash, err)
	}
	h.p = Params{Memory: uint32(m), Time: uint32(t), Threads: uint8(p), KeyLen: uint32(len(h.key))}
	return h, nil
}

// cutUint parses the canonical decimal before sep and returns it with the
// text after sep.
func cutUint(s, sep string, max uint64) (uint64, string, error) {
	num, rest, ok := strings.Cut(s, sep)
	switch {
	case !ok:
		return 0, "", fmt.Errorf("missing %q", sep)
	case num == "":
		return 0, "", fmt.Errorf("empty")
	case len(num) > 1 && num[0] == '0':
		return 0, "", fmt.Errorf("leading zero")
	case len(num) > 10:
		return 0, "", fmt.Errorf("too large")
	}
	var v uint64
	for i := 0; i < len(num); i++ {
		c := num[i]
		if c < '0' || c > '9' {
			return 0, "", fmt.Errorf("not a decimal number")
		}
		v = v*10 + uint64(c-'0')
	}
	if v > max {
		return 0, "", fmt.Errorf("above %d", max)
	}
	return v, rest, nil
}

// decodeB64 decodes unpadded standard base64 of minLen..maxLen bytes. It
// checks the alphabet first because the decoder skips CR and LF.
func decodeB64(s string, minLen, maxLen int) ([]byte, error) {
	if n := b64.DecodedLen(len(s)); n < minLen || n > maxLen {
		return nil, fmt.Errorf("length outside %d..%d bytes", minLen, maxLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return nil, fmt.Errorf("not base64")
		}
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not canonical base64")
	}
	return b, nil
}
