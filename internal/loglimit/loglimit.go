// Package loglimit lets at most one log line a key through each period,
// counting the lines it held back: a peer sending the same garbage in a
// loop costs a counter increment, not a line each.
package loglimit

import (
	"sync"
	"time"
)

// Limiter lets at most one line a key through each Every. Its keys are
// meant to be a small fixed set (message types and refusal reasons); past
// maxKeys keys it lets every line through rather than grow. The zero value
// lets everything through; safe for concurrent use.
type Limiter struct {
	Every time.Duration
	mu    sync.Mutex // guards slots
	slots map[string]*slot
}

type slot struct {
	last time.Time
	held int
}

const maxKeys = 1024

// Allow reports whether a line for key may be logged now, and how many
// were held back since the last one that was.
func (l *Limiter) Allow(key string) (held int, ok bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slots == nil {
		l.slots = map[string]*slot{}
	}
	s := l.slots[key]
	if s == nil {
		if len(l.slots) >= maxKeys {
			return 0, true
		}
		s = &slot{}
		l.slots[key] = s
	}
	if !s.last.IsZero() && now.Sub(s.last) < l.Every {
		s.held++
		return 0, false
	}
	held, s.held, s.last = s.held, 0, now
	return held, true
}
