package area

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/leyworks/ley/net/control"
)

// dropIndex removes token from one of the host's indexes.
func (h *Host) dropIndex(index map[string]*hostArea, token string) {
	h.mu.Lock()
	delete(index, token)
	h.mu.Unlock()
}

// indexGrant indexes a grant's token under its Area and returns the Area;
// when the Area is not on this host it answers the director so and
// returns nil. Looked up and indexed under one lock: an Area that unloads
// in between would leave an index entry that nothing removes, and that
// keeps the whole unloaded Area reachable.
func (h *Host) indexGrant(area uint32, token string) *hostArea {
	h.mu.Lock()
	ha := h.areas[area]
	if ha != nil {
		h.grants[token] = ha
	}
	h.mu.Unlock()
	if ha == nil {
		h.link.send(&control.GrantAck{Area: area, Token: token, Error: "area not on this host"})
	}
	return ha
}

// newToken returns a 128-bit random token as hex.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// unload forgets an Area that finished closing or failed (its goroutine):
// nothing of the host may point to it after, so that its memory is freed.
func (h *Host) unload(ha *hostArea) {
	ha.unloaded = true
	if ha.parked != nil { // its rebuild failed
		ha.parked = nil
		h.parked.Add(-1)
	}
	h.clock.Remove(ha.a)
	ha.a.LeaveCensus()
	h.mu.Lock()
	if h.areas[ha.id] == ha {
		delete(h.areas, ha.id)
		h.areaBytes.Add(-ha.bytes)
	}
	for tok, x := range h.grants {
		if x == ha {
			delete(h.grants, tok)
		}
	}
	for tok, x := range h.resumes {
		if x == ha {
			delete(h.resumes, tok)
		}
	}
	if h.closed && len(h.areas) == 0 && h.allGone != nil {
		close(h.allGone)
		h.allGone = nil
	}
	h.mu.Unlock()
}

// expire remembers that grant token expired unused (any goroutine).
func (h *Host) expire(token string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.expired) >= maxExpired {
		for tok, at := range h.expired {
			if now.Sub(at) > expiredKeep || len(h.expired) >= maxExpired {
				delete(h.expired, tok)
			}
		}
	}
	h.expired[token] = now
}

// expiredGrant reports whether token is a grant that expired unused not
// long ago (any goroutine).
func (h *Host) expiredGrant(token string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.expired[token]
	return ok && time.Since(at) <= expiredKeep
}

// expiredKeep is how long a grant is remembered after it expired, so that
// a late hello is told GRANT_EXPIRED rather than BAD_GRANT; maxExpired
// bounds how many are remembered at once.
const (
	expiredKeep = 5 * time.Minute
	maxExpired  = 10000
)
