package auth

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestParseEmail(t *testing.T) {
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".org" // 254 bytes
	tests := []struct {
		in, want string
		err      error
	}{
		{"alice@t.local", "alice@t.local", nil},
		{"ａlice@t.local", "alice@t.local", nil},
		{"Alice@T.LOCAL", "alice@t.local", nil},
		{" alice@t.local ", "alice@t.local", nil},
		{"a+tag@sub.example.org", "a+tag@sub.example.org", nil},
		{"élodie@exemple.fr", "élodie@exemple.fr", nil},
		{long, long, nil},
		{"@", "", ErrBadEmail},
		{"", "", ErrBadEmail},
		{"alice", "", ErrBadEmail},
		{"alice@", "", ErrBadEmail},
		{"@t.local", "", ErrBadEmail},
		{"x@y@z", "", ErrBadEmail},
		{"a\x00b@x", "", ErrBadEmail},
		{"alice@t.local\x00", "", ErrBadEmail},
		{"Alice <alice@t.local>", "", ErrBadEmail},
		{"<alice@t.local>", "", ErrBadEmail},
		{"alice@t.local (work)", "", ErrBadEmail},
		{"alice@t.local, bob@t.local", "", ErrBadEmail},
		{`"a b"@t.local`, "", ErrBadEmail},
		{"\u202ealice@t.local", "", ErrBadEmail},
		{"a\x1b[31m@t.local", "", ErrBadEmail},
		{"ａ＠b@t.local", "", ErrBadEmail}, // the full-width @ would make two
		{strings.Repeat("a", 65) + "@x", "", ErrBadEmail},
		{"a@" + strings.Repeat("b", 250) + ".org", "", ErrBadEmail},
		{strings.Repeat("a", 60_000) + "@x", "", ErrBadEmail},
	}
	for _, tt := range tests {
		got, err := ParseEmail(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("ParseEmail(%.40q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.HasPrefix(Refusal(err), "email ") {
			t.Errorf("Refusal(ParseEmail(%.40q)) = %q; want a reason naming the email", tt.in, Refusal(err))
		}
	}
}

func TestParseName(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"Ann", "Ann", nil},
		{"  Ann   Lee ", "Ann Lee", nil},
		{"Ａnn", "Ann", nil},
		{"Ann's home 🏠", "Ann's home 🏠", nil},
		{"Ælfrīc", "Ælfrīc", nil},
		{strings.Repeat("n", 64), strings.Repeat("n", 64), nil},
		{"", "", ErrBadName},
		{" \t ", "", ErrBadName},
		{"a\x00b", "", ErrBadName},
		{"evil\u202etxt.exe", "", ErrBadName},
		{"\x1b[31mred\x1b[0m", "", ErrBadName},
		{"zero\u200bwidth", "", ErrBadName},
		{"line\nbreak", "", ErrBadName},
		{strings.Repeat("n", 65), "", ErrBadName},
		{strings.Repeat("n", 60_000), "", ErrBadName},
		// Look-alikes and blanks (issue 29, N13).
		{"dеmo", "", ErrBadName}, // a Cyrillic е among Latin letters
		{"⠀", "", ErrBadName},    // braille blank: reads as nothing
		{"⠀⠀ ⠀", "", ErrBadName},
		{"...", "", ErrBadName},
		{"🏠", "", ErrBadName},
		{"Дима", "Дима", nil},             // one script, not Latin
		{"Ωmega", "", ErrBadName},         // Greek and Latin
		{"山田 太郎 taro", "山田 太郎 taro", nil}, // Japanese with Latin
		{"カタカナ ひらがな 漢字", "カタカナ ひらがな 漢字", nil},
		{"김 Kim", "김 Kim", nil},
		{"ｄｅｍｏ", "demo", nil}, // full-width: mapped to the name it looks like
		{"R2-D2", "R2-D2", nil},
	}
	for _, tt := range tests {
		got, err := ParseName(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("ParseName(%.40q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.HasPrefix(Refusal(err), "name ") {
			t.Errorf("Refusal(ParseName(%.40q)) = %q; want a reason naming the name", tt.in, Refusal(err))
		}
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ErrPasswordTooShort, "password must be at least 8 bytes"},
		{ErrPasswordTooLong, "password must be at most 1024 bytes"},
		{ErrPasswordBlank, "password must not be only white space"},
		{errors.New("something else"), ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Refusal(tt.err); got != tt.want {
			t.Errorf("Refusal(%v) = %q; want %q", tt.err, got, tt.want)
		}
	}
}
