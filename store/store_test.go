package store

import (
	"errors"
	"testing"
)

func TestCanonicalEmail(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"alice@t.local", "alice@t.local", nil},
		{"ａlice@t.local", "alice@t.local", nil},
		{"Alice@T.Local", "alice@t.local", nil},
		{"  alice@t.local\n", "alice@t.local", nil},
		{"alice＠t.local", "alice@t.local", nil},
		{"e\u0301@x", "\u00e9@x", nil}, // NFC
		{"ا@x", "ا@x", nil},            // a right-to-left local part beside a left-to-right domain
		{"a+tag.x@sub.example.org", "a+tag.x@sub.example.org", nil},
		{"alice", "", ErrInvalid},
		{"a b@x", "", ErrInvalid},
		{"a\x00b@x", "", ErrInvalid},
		{"\u202eevil@x", "", ErrInvalid},
		{"a@x\x1b[31m", "", ErrInvalid},
	}
	for _, tt := range tests {
		got, err := CanonicalEmail(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("CanonicalEmail(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ＡLICE@T.local", "alice@t.local"},
		{" A B@X ", "a b@x"}, // refused by CanonicalEmail: trimmed and lower-cased, as before migration 2
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeEmail(tt.in); got != tt.want {
			t.Errorf("NormalizeEmail(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
