package auth

import (
	"errors"
	"strings"
	"testing"
)

const goodPHC = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"

func TestParsePHC(t *testing.T) {
	ph, err := parsePHC(goodPHC)
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Memory: 19456, Time: 2, Threads: 1, KeyLen: 32}
	if ph.p != want || string(ph.salt) != "saltsaltsaltsalt" {
		t.Errorf("parsePHC = %+v, salt %q; want %+v, saltsaltsaltsalt", ph.p, ph.salt, want)
	}
	if got := string(appendPHC(nil, ph)); got != goodPHC {
		t.Errorf("appendPHC(parsePHC(s)) = %q; want %q", got, goodPHC)
	}
}

func TestParsePHCMalformed(t *testing.T) {
	r := func(old, new string) string { return strings.Replace(goodPHC, old, new, 1) }
	for _, tt := range []struct{ name, s string }{
		{"empty", ""},
		{"argon2i", r("argon2id", "argon2i")},
		{"argon2d", r("argon2id", "argon2d")},
		{"version", r("v=19", "v=16")},
		{"no version", r("$v=19", "")},
		{"order", r("m=19456,t=2", "t=2,m=19456")},
		{"space", r("m=19456", "m= 19456")},
		{"sign", r("m=19456", "m=+19456")},
		{"leading zero", r("t=2", "t=02")},
		{"empty num", r("t=2", "t=")},
		{"hex", r("m=19456", "m=0x4c00")},
		{"overflow", r("m=19456", "m=99999999999999999999")},
		{"uint32 wrap", r("m=19456", "m=4294986752")},
		{"huge memory", r("m=19456", "m=1048577")},
		{"huge time", r("t=2", "t=65")},
		{"p 256", r("p=1", "p=256")},
		{"p 0", r("p=1", "p=0")},
		{"t 0", r("t=2", "t=0")},
		{"m below 8p", r("m=19456,t=2,p=1", "m=15,t=2,p=2")},
		{"extra param", r("p=1", "p=1,keyid=x")},
		{"no key", goodPHC[:strings.LastIndexByte(goodPHC, '$')]},
		{"extra field", goodPHC + "$eA"},
		{"trailing", goodPHC + "\n"},
		{"newline in salt", r("c2Fsd", "c2F\nsd")},
		{"padding", goodPHC + "="},
		{"url alphabet", r("a2V5", "a2-5")},
		{"short salt", r("c2FsdHNhbHRzYWx0c2FsdA", "c2FsdA")},
		{"short key", r("a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U", "a2V5")},
		{"noncanonical", r("c2FsdHNhbHRzYWx0c2FsdA", "c2FsdHNhbHRzYWx0c2FsdB")},
		{"long", goodPHC + strings.Repeat("A", 600)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parsePHC(tt.s); !errors.Is(err, ErrBadHash) {
				t.Errorf("parsePHC(%q) = %v; want ErrBadHash", tt.s, err)
			}
		})
	}
}

// FuzzParsePHC checks that parsePHC never panics, refuses only with
// ErrBadHash, keeps its bounds, and accepts only the canonical spelling.
func FuzzParsePHC(f *testing.F) {
	f.Add(goodPHC)
	f.Add("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw")
	f.Add("$argon2id$v=19$m=,t=,p=$$")
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2F\nsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw")
	f.Fuzz(func(t *testing.T, s string) {
		ph, err := parsePHC(s)
		if err != nil {
			if !errors.Is(err, ErrBadHash) {
				t.Fatalf("parsePHC(%q) error %v; want ErrBadHash", s, err)
			}
			return
		}
		if got := string(appendPHC(nil, ph)); got != s {
			t.Fatalf("appendPHC(parsePHC(%q)) = %q; want the input", s, got)
		}
		p := ph.p
		if p.Memory > maxMemory || p.Time < 1 || p.Time > maxTime || p.Threads < 1 ||
			p.Memory < 8*uint32(p.Threads) || int(p.KeyLen) != len(ph.key) ||
			len(ph.key) < minKeyLen || len(ph.key) > maxKeyLen ||
			len(ph.salt) < minSaltLen || len(ph.salt) > maxSaltLen {
			t.Fatalf("parsePHC(%q) = %+v, salt %d bytes: out of bounds", s, p, len(ph.salt))
		}
	})
}
