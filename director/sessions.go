package director

import (
	"context"
	"sync"
	"time"

	"github.com/leyworks/ley/store"
)

// sessionCache spares the store a write per authenticated request: a
// session the store confirmed (TouchSession, which also moves its idle
// expiry on) is believed for a while without asking again. A request
// costs a session row write at most once per window, however fast an
// account calls (the probe's 2,317 GET/s from one account each wrote the
// row: the director at 95% CPU).
//
// The window is short beside the idle timeout (a quarter of it, at most a
// minute), so a session idle past its timeout is still refused: the store's
// last touch is at most a window older than the last request. It never
// runs past the session's absolute expiry. Logout and login (which ends
// the account's other sessions) drop what they end here: only the
// leading director serves the API, so every revocation passes through its
// cache.
type sessionCache struct {
	window time.Duration
	max    int

	mu  sync.Mutex
	m   map[store.TokenHash]cachedSession
	gen uint64 // counts drops: a touch that raced one believes nothing
}

type cachedSession struct {
	account store.AccountID
	until   time.Time // believed until then
}

func newSessionCache(idle time.Duration, max int) *sessionCache {
	return &sessionCache{window: min(time.Minute, idle/4), max: max, m: map[store.TokenHash]cachedSession{}}
}

// touch returns the account of the session whose token hashes to h,
// asking the store only when the cache holds no belief of it.
func (c *sessionCache) touch(ctx context.Context, st store.Store, h store.TokenHash, now time.Time) (store.AccountID, error) {
	c.mu.Lock()
	s, ok := c.m[h]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Before(s.until) {
		return s.account, nil
	}
	sess, err := st.TouchSession(ctx, h, now)
	if err != nil {
		return 0, err
	}
	until := now.Add(c.window)
	if sess.Expires.Before(until) {
		until = sess.Expires
	}
	c.mu.Lock()
	if c.gen == gen { // no revocation since the store answered: believe it
		if len(c.m) >= c.max {
			clear(c.m) // bounded: the next requests ask the store again
		}
		c.m[h] = cachedSession{account: sess.Account, until: until}
	}
	c.mu.Unlock()
	return sess.Account, nil
}

// drop forgets the session whose token hashes to h. Call it once the
// store has revoked the session: a touch that was under way meanwhile
// caches nothing.
func (c *sessionCache) drop(h store.TokenHash) {
	c.mu.Lock()
	delete(c.m, h)
	c.gen++
	c.mu.Unlock()
}

// dropAccount forgets every session of acct, as drop does one.
func (c *sessionCache) dropAccount(acct store.AccountID) {
	c.mu.Lock()
	c.gen++
	for h, s := range c.m {
		if s.account == acct {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}
