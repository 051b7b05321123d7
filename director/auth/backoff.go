package auth

import (
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// BackoffConfig configures a Backoff: per key, Free failures are free;
// each further one makes the key wait, Base after the first, doubling up
// to Max.
type BackoffConfig struct {
	// Free is how many failures a key may have before any wait.
	Free int
	// Base is the wait after failure Free+1; each further failure doubles
	// it, up to Max.
	Base, Max time.Duration
	// Forget is how long after its last failure a key is forgotten (it
	// starts again with Free failures). At least Max.
	Forget time.Duration
	// MaxKeys bounds the keys tracked at once; past it the key whose last
	// failure is the oldest is forgotten. Each key costs about 100 bytes
	// whatever its length.
	MaxKeys int
}

// DefaultBackoffConfig returns a config for failed logins per (client
// address, account): 5 free, then waits of 1 s, 2 s, 4 s, ... up to
// 15 min, forgotten after an hour without a failure, over at most 100,000
// keys (about 10 MB).
func DefaultBackoffConfig() BackoffConfig {
	return BackoffConfig{Free: 5, Base: time.Second, Max: 15 * time.Minute, Forget: time.Hour, MaxKeys: 100_000}
}

// Backoff imposes a progressive delay per key after repeated failures, in
// bounded memory: not a lock, since the wait ends by itself, and Reset (a
// success) clears it. Keyed by (client address, account), a stranger's
// failures hold up only the stranger's own address. Safe for concurrent
// use: one mutex guards it all, held for O(1) work per call.
//
// Keys are stored as 64-bit seeded hashes, as in Limiter.
type Backoff struct {
	cfg   BackoffConfig
	seed  maphash.Seed
	now   func() time.Time
	epoch time.Time

	mu   sync.Mutex
	keys map[uint64]*failures // guarded by mu
	lru  failures             // guarded by mu; sentinel: lru.next failed last
}

// failures is one key's state. Only Fail moves a key to the front, so the
// list runs from the latest last failure to the oldest, and the keys to
// forget are at its tail.
type failures struct {
	key        uint64
	n          int   // failures since the key was new
	last       int64 // ns since epoch: the last failure
	until      int64 // ns since epoch: no attempt before
	prev, next *failures
}

// NewBackoff returns a Backoff for cfg, or an error wrapping
// ErrLimiterConfig if Free is negative, Base, Max or MaxKeys is not
// positive, Max is below Base or Forget below Max.
func NewBackoff(cfg BackoffConfig) (*Backoff, error) {
	return newBackoff(cfg, time.Now)
}

// newBackoff is NewBackoff with a clock, for tests.
func newBackoff(cfg BackoffConfig, now func() time.Time) (*Backoff, error) {
	if cfg.Free < 0 || cfg.Base <= 0 || cfg.Max < cfg.Base || cfg.Forget < cfg.Max || cfg.MaxKeys < 1 {
		return nil, fmt.Errorf("%w: %+v: need Free >= 0, 0 < Base <= Max <= Forget, MaxKeys > 0", ErrLimiterConfig, cfg)
	}
	b := &Backoff{cfg: cfg, seed: maphash.MakeSeed(), now: now, keys: make(map[uint64]*failures)}
	b.epoch = now()
	b.lru.next, b.lru.prev = &b.lru, &b.lru
	return b, nil
}

// Wait returns how long key must wait before its next attempt: zero if it
// may try now. It records nothing. It costs a hash of key and O(1) work
// under the lock.
func (b *Backoff) Wait(key string) time.Duration {
	k := maphash.String(b.seed, key)
	now := int64(b.now().Sub(b.epoch))

	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	f := b.keys[k]
	if f == nil {
		return 0
	}
	return time.Duration(max(f.until-now, 0))
}

// Fail records a failed attempt of key and returns the wait it imposes
// from now: zero while key has had at most Free failures, then Base,
// 2*Base, 4*Base, ... up to Max. Cost as Wait; it does not allocate once
// MaxKeys keys are tracked.
func (b *Backoff) Fail(key string) time.Duration {
	k := maphash.String(b.seed, key)
	now := int64(b.now().Sub(b.epoch))

	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	f := b.keys[k]
	if f == nil {
		f = b.insert(k)
	} else {
		b.unlink(f)
	}
	b.pushFront(f)
	f.n++
	f.last = now
	var wait time.Duration
	if extra := f.n - b.cfg.Free; extra > 0 {
		wait = b.cfg.Base
		for i := 1; i < extra; i++ { // at most log2(Max/Base)+1 rounds
			if wait > b.cfg.Max/2 {
				wait = b.cfg.Max
				break
			}
			wait *= 2
		}
		wait = min(wait, b.cfg.Max)
	}
	f.until = now + int64(wait)
	return wait
}

// Reset forgets key: its next failure is its first.
func (b *Backoff) Reset(key string) {
	k := maphash.String(b.seed, key)
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.keys[k]; f != nil {
		b.unlink(f)
		delete(b.keys, k)
	}
}

// Len returns how many keys b tracks now, at most MaxKeys.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.keys)
}

// sweep forgets up to maxSweep keys whose last failure is Forget old.
// b.mu held.
func (b *Backoff) sweep(now int64) {
	for range maxSweep {
		f := b.lru.prev
		if f == &b.lru || now-f.last < int64(b.cfg.Forget) {
			return
		}
		b.unlink(f)
		delete(b.keys, f.key)
	}
}

// insert tracks a new key, reusing the oldest key's record when b is at
// MaxKeys; the caller links it. b.mu held.
func (b *Backoff) insert(k uint64) *failures {
	var f *failures
	if len(b.keys) >= b.cfg.MaxKeys {
		f = b.lru.prev
		b.unlink(f)
		delete(b.keys, f.key)
	} else {
		f = new(failures)
	}
	*f = failures{key: k}
	b.keys[k] = f
	return f
}

func (b *Backoff) unlink(f *failures) {
	f.prev.next, f.next.prev = f.next, f.prev
	f.prev, f.next = nil, nil
}

func (b *Backoff) pushFront(f *failures) {
	f.prev, f.next = &b.lru, b.lru.next
	b.lru.next.prev = f
	b.lru.next = f
}

// LoginKey returns the Backoff key of login attempts for email (any
// spelling of one address gives one key) from the client address whose
// IPKey is addrKey.
func LoginKey(addrKey, email string) string {
	return addrKey + "\x00" + EmailKey(email)
}
