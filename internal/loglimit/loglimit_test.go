package loglimit

import (
	"testing"
	"time"
)

// TestLimiter: one line a key a period; the lines held back are counted
// and reported with the next one let through.
func TestLogLimiter(t *testing.T) {
	l := Limiter{Every: time.Hour}
	steps := []struct {
		key      string
		ok       bool
		wantHeld int
	}{
		{"a", true, 0},
		{"a", false, 0},
		{"a", false, 0},
		{"b", true, 0},
		{"b", false, 0},
	}
	for i, s := range steps {
		held, ok := l.Allow(s.key)
		if ok != s.ok || held != s.wantHeld {
			t.Errorf("step %d (%s): allow = %d, %v; want %d, %v", i, s.key, held, ok, s.wantHeld, s.ok)
		}
	}
	l.slots["a"].last = time.Now().Add(-2 * time.Hour) // the period passed
	if held, ok := l.Allow("a"); !ok || held != 2 {
		t.Errorf("after the period: allow = %d, %v; want 2 held, allowed", held, ok)
	}
}
