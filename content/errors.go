package content

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The kinds of load error. Every error Load, LoadDir and LoadMap return is
// an [*Error] that wraps exactly one of these (test with errors.Is).
var (
	// ErrInvalid: the content breaks one of ley's rules (an unknown layer,
	// class or property, a wrong type, a spawn on a wall, a missing file...).
	ErrInvalid = errors.New("invalid content")
	// ErrUnsupported: valid Tiled output that ley does not read (an infinite
	// or isometric map, zstd compression, an ellipse, a rotated object...).
	ErrUnsupported = errors.New("unsupported by ley")
	// ErrTooLarge: a size bound is exceeded (see [MaxSide], [MaxObjects],
	// [MaxFileSize]).
	ErrTooLarge = errors.New("too large")
	// ErrNotFound: a lookup by name found nothing (a template, rule set,
	// creature kind or area kind); the message lists the known names.
	ErrNotFound = errors.New("not found")
)

// Error is a load or lookup error. Its message names where the problem is,
// as precisely as is known, for the person who has to fix the file:
//
//	content: maps/village.tmj: layer "objects": object 12 "north door": unknown property "colour"
//
// Error wraps one of the sentinel errors above.
type Error struct {
	// Path is the file, relative to the content folder (or, for an
	// operator's file read by [LoadDir], the folder joined with it); empty
	// for a lookup.
	Path string
	// Layer is the Tiled layer's name, or "".
	Layer string
	// Object is the Tiled object's id, or 0.
	Object int
	// Name is the object's name (or, in an index file, the template's, rule
	// set's, creature kind's or item kind's name, or a source's class), or
	// "".
	Name string
	// Err is what went wrong.
	Err error
}

// Error formats the location and the problem on one line.
func (e *Error) Error() string {
	parts := make([]string, 0, 5)
	parts = append(parts, "content")
	if e.Path != "" {
		parts = append(parts, e.Path)
	}
	if e.Layer != "" {
		parts = append(parts, fmt.Sprintf("layer %q", e.Layer))
	}
	switch {
	case e.Object != 0 && e.Name != "":
		parts = append(parts, fmt.Sprintf("object %d %q", e.Object, e.Name))
	case e.Object != 0:
		parts = append(parts, fmt.Sprintf("object %d", e.Object))
	case e.Name != "":
		parts = append(parts, strconv.Quote(e.Name))
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ")
}

// Unwrap returns the problem, which wraps a sentinel.
func (e *Error) Unwrap() error { return e.Err }

// problem is a message that wraps one sentinel without repeating its text.
type problem struct {
	kind error
	msg  string
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.kind }

func invalidf(format string, args ...any) error {
	return &problem{ErrInvalid, fmt.Sprintf(format, args...)}
}

func unsupportedf(format string, args ...any) error {
	return &problem{ErrUnsupported, fmt.Sprintf(format, args...)}
}

func tooLargef(format string, args ...any) error {
	return &problem{ErrTooLarge, fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &problem{ErrNotFound, fmt.Sprintf(format, args...)}
}

// at wraps err with a location unless it already carries one.
func at(path string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Path: path, Err: err}
}

// kindOf returns the sentinel err wraps (ErrInvalid if none).
func kindOf(err error) error {
	for _, k := range []error{ErrTooLarge, ErrUnsupported, ErrNotFound} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrInvalid
}
