package auth

import (
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/secure/precis"

	"github.com/leyworks/ley/store"
)

// Input bounds, in bytes.
const (
	// MaxEmailLen bounds an email address in its canonical form (RFC 5321's
	// 256-byte path less its angle brackets).
	MaxEmailLen = 254
	// MaxLocalLen bounds an email address's local part (RFC 5321 4.5.3.1.1).
	MaxLocalLen = 64
	// MaxNameLen bounds a display name in its Nickname form.
	MaxNameLen = 64
	// maxRaw bounds any input before it is parsed at all, so a 60 KB
	// field costs one length check.
	maxRaw = 1024
)

// inputError is a refused input: a sentinel for errors.Is and a reason
// fit to show the user.
type inputError struct {
	sentinel error
	reason   string
}

func (e *inputError) Error() string { return e.sentinel.Error() + ": " + e.reason }
func (e *inputError) Unwrap() error { return e.sentinel }

func badEmail(reason string) error { return &inputError{ErrBadEmail, "email " + reason} }
func badName(reason string) error  { return &inputError{ErrBadName, "name " + reason} }

// ParseEmail checks an email address given at sign-up and returns its
// canonical form ([store.CanonicalEmail]: the form it is stored, compared
// and rate-limited in). It must be exactly one plain address as net/mail
// reads it (name@domain: no display name, comment, angle brackets or
// group, and no quoting that parsing would change), of characters the
// PRECIS UsernameCaseMapped profile allows (no space, control, NUL or
// bidi override), whose canonical form is again such an address of at
// most MaxEmailLen bytes with a local part of at most MaxLocalLen.
// Otherwise the error wraps ErrBadEmail and [Refusal] words it. Surrounding
// white space is ignored. Cost: linear in len(s); over 1 KiB is refused
// before parsing.
func ParseEmail(s string) (string, error) {
	if len(s) > maxRaw {
		return "", badEmail(fmt.Sprintf("is longer than %d bytes", MaxEmailLen))
	}
	s = strings.TrimSpace(s)
	if !plainAddress(s) {
		return "", badEmail("must be one plain address, name@domain")
	}
	canon, err := store.CanonicalEmail(s)
	if err != nil {
		return "", badEmail("has a character that is not allowed (a space, control or direction character)")
	}
	switch {
	case !plainAddress(canon):
		return "", badEmail("must be one plain address, name@domain")
	case len(canon) > MaxEmailLen:
		return "", badEmail(fmt.Sprintf("is longer than %d bytes", MaxEmailLen))
	case strings.LastIndexByte(canon, '@') > MaxLocalLen:
		return "", badEmail(fmt.Sprintf("has a part before the @ longer than %d bytes", MaxLocalLen))
	}
	return canon, nil
}

// plainAddress reports whether s is exactly one address as net/mail
// parses it, with no display name, and parses back to itself.
func plainAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// ParseName checks a display name (an account's or an Area's) and returns
// it in the form of the PRECIS Nickname profile (RFC 8266): compatibility
// forms mapped (full-width letters to plain ones), spaces trimmed and runs
// of them collapsed to one, NFKC. Control characters (NUL, the ESC of ANSI
// escapes), bidi overrides and other invisible formatting characters,
// unassigned code points, an empty result, a name with no letter or digit,
// letters of several scripts (but for those written together, as Japanese
// mixes Han and kana) and more than MaxNameLen bytes are refused with an
// error wrapping ErrBadName that [Refusal] words.
// Cost: linear in len(s); over 1 KiB is refused before parsing.
func ParseName(s string) (string, error) {
	if len(s) > maxRaw {
		return "", badName(fmt.Sprintf("is longer than %d bytes", MaxNameLen))
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return "", badName("must not be empty")
	}
	n, err := precis.Nickname.String(s)
	if err != nil {
		return "", badName("has a character that is not allowed (a control, formatting or direction character)")
	}
	if len(n) > MaxNameLen {
		return "", badName(fmt.Sprintf("is longer than %d bytes", MaxNameLen))
	}
	if !strings.ContainsFunc(n, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		// A name of blank-looking symbols (U+2800, braille blank) or
		// punctuation alone reads as no name at all.
		return "", badName("must have a letter or a digit")
	}
	if !oneScript(n) {
		return "", badName("mixes the letters of several scripts (as look-alike names do: a Cyrillic е among Latin letters)")
	}
	return n, nil
}

// scriptSets are the mixes of scripts a name may use beside one script
// alone: the writing systems that combine them (UTS #39's Highly
// Restrictive level). Any other mix is refused, so that "dеmo" with a
// Cyrillic е is not a second "demo".
var scriptSets = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana}, // Japanese
	{unicode.Latin, unicode.Han, unicode.Bopomofo},                   // Chinese
	{unicode.Latin, unicode.Han, unicode.Hangul},                     // Korean
}

// oneScript reports whether the letters of s are of one script (Common and
// Inherited characters, digits and punctuation among them, go with any),
// or of one of scriptSets.
func oneScript(s string) bool {
	var seen []*unicode.RangeTable
	for _, r := range s {
		if !unicode.IsLetter(r) || unicode.In(r, unicode.Common, unicode.Inherited) {
			continue
		}
		t := scriptOf(r)
		if t == nil || !slices.Contains(seen, t) {
			seen = append(seen, t)
		}
	}
	if len(seen) <= 1 {
		return true
	}
	for _, set := range scriptSets {
		if !slices.ContainsFunc(seen, func(t *unicode.RangeTable) bool { return !slices.Contains(set, t) }) {
			return true
		}
	}
	return false
}

// scriptOf returns the script table r belongs to, nil if none.
func scriptOf(r rune) *unicode.RangeTable {
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

// Refusal words an error of ParseEmail, ParseName or CheckPassword for the
// user ("email must be one plain address, name@domain"), without Go
// package prefixes; any other error gives "".
func Refusal(err error) string {
	var ie *inputError
	switch {
	case errors.As(err, &ie):
		return ie.reason
	case errors.Is(err, ErrPasswordTooShort):
		return fmt.Sprintf("password must be at least %d bytes", MinPasswordLen)
	case errors.Is(err, ErrPasswordTooLong):
		return fmt.Sprintf("password must be at most %d bytes", MaxPasswordLen)
	case errors.Is(err, ErrPasswordBlank):
		return "password must not be only white space"
	}
	return ""
}
