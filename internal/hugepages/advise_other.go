//go:build !linux

package hugepages

import "errors"

// advise fails: transparent huge pages are Linux's.
func advise(Span) error { return errors.ErrUnsupported }
