package auth

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewToken(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		tok, hash := NewToken()
		raw, err := base64.RawURLEncoding.Strict().DecodeString(tok)
		if len(tok) != TokenLen || err != nil || len(raw) != 32 {
			t.Fatalf("NewToken = %q (%d chars, %d bytes, %v); want %d chars of base64url for 32 bytes",
				tok, len(tok), len(raw), err, TokenLen)
		}
		if hash != HashToken(tok) {
			t.Fatalf("NewToken hash = %x; want HashToken(token) %x", hash, HashToken(tok))
		}
		if got, ok := ParseBearer("Bearer " + tok); !ok || got != tok {
			t.Fatalf("ParseBearer(Bearer %s) = %q, %v; want the token", tok, got, ok)
		}
		if seen[tok] {
			t.Fatalf("NewToken repeated %q", tok)
		}
		seen[tok] = true
	}
}

func TestParseBearer(t *testing.T) {
	tok := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123-_Z"
	if len(tok) != TokenLen {
		t.Fatalf("test token has %d chars; want %d", len(tok), TokenLen)
	}
	for _, tt := range []struct {
		name, header string
		ok           bool
	}{
		{"plain", "Bearer " + tok, true},
		{"lower scheme", "bearer " + tok, true},
		{"upper scheme", "BEARER " + tok, true},
		{"spaces", "Bearer    " + tok, true},
		{"empty", "", false},
		{"scheme only", "Bearer ", false},
		{"no space", "Bearer" + tok, false},
		{"tab", "Bearer\t" + tok, false},
		{"basic", "Basic " + tok, false},
		{"short", "Bearer " + tok[1:], false},
		{"long", "Bearer " + tok + "A", false},
		{"trailing space", "Bearer " + tok + " ", false},
		{"padding", "Bearer " + tok[:42] + "=", false},
		{"std alphabet", "Bearer " + tok[:42] + "+", false},
		{"dot", "Bearer " + tok[:42] + ".", false},
		{"non-ascii", "Bearer " + tok[:41] + "é", false},
		{"two tokens", "Bearer " + tok + " " + tok, false},
		{"too long", "Bearer " + strings.Repeat(" ", 300) + tok, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseBearer(tt.header)
			if ok != tt.ok || ok && got != tok || !ok && got != "" {
				t.Errorf("ParseBearer(%q) = %q, %v; want ok %v", tt.header, got, ok, tt.ok)
			}
		})
	}
}

func TestTokenAllocs(t *testing.T) {
	tok, _ := NewToken()
	h := "Bearer " + tok
	if n := testing.AllocsPerRun(100, func() {
		t, _ := ParseBearer(h)
		_ = HashToken(t)
	}); n != 0 {
		t.Errorf("ParseBearer+HashToken allocs = %v; want 0", n)
	}
}
