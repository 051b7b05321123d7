package auth

import (
	"fmt"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"

	"github.com/leyworks/ley/store"
)

// LimiterConfig configures a Limiter: per key, a bucket of Burst tokens
// that refills one token every Every.
type LimiterConfig struct {
	// Every is the time to refill one token: the sustained rate is one
	// attempt per Every.
	Every time.Duration
	// Burst is the bucket's size: how many attempts a fresh key gets at
	// once.
	Burst int
	// MaxKeys bounds the keys tracked at once; past it the least recently
	// used key is forgotten (its bucket starts full again). Each key costs
	// about 100 bytes whatever its length.
	MaxKeys int
}

// DefaultLimiterConfig returns a config for a login endpoint: 10 attempts at
// once, then one every 6 s (10 a minute), over at most 100,000 keys (about
// 10 MB).
func DefaultLimiterConfig() LimiterConfig {
	return LimiterConfig{Every: 6 * time.Second, Burst: 10, MaxKeys: 100_000}
}

// Limiter rate-limits attempts per key with a token bucket per key, in
// bounded memory. Use one Limiter per kind of key (client address,
// account), so that keys of two kinds never share a bucket, and keys from
// IPKey and EmailKey. Safe for concurrent use: one mutex
// guards it all, held for O(1) work per call.
//
// Keys are stored as 64-bit seeded hashes, so a key's length costs nothing
// and a collision (about 1 in 10^9 at 100,000 keys, not steerable without
// the random seed) only makes two keys share a bucket.
type Limiter struct {
	every, slack int64 // ns: Every, and (Burst-1)*Every
	maxKeys      int
	seed         maphash.Seed
	now          func() time.Time
	epoch        time.Time

	mu      sync.Mutex
	buckets map[uint64]*bucket // guarded by mu
	lru     bucket             // guarded by mu; sentinel: lru.next is the most recent
}

// bucket is one key's state as a GCRA: tat is the time (ns since epoch)
// at which the bucket would be full again. It is full, and can be
// forgotten without changing any answer, once tat <= now. Since refusals
// do not move tat, tat <= last use + Burst*Every, so LRU order finds the
// full ones at the tail.
type bucket struct {
	key        uint64
	tat        int64
	prev, next *bucket
}

// maxSweep bounds how many idle buckets one call forgets, to keep each
// call's lock hold short; each key is forgotten at most once per insert, so
// this keeps up.
const maxSweep = 16

// NewLimiter returns a Limiter for cfg, or an error wrapping
// ErrLimiterConfig if Every, Burst or MaxKeys is not positive.
func NewLimiter(cfg LimiterConfig) (*Limiter, error) {
	return newLimiter(cfg, time.Now)
}

// newLimiter is NewLimiter with a clock, for tests.
func newLimiter(cfg LimiterConfig, now func() time.Time) (*Limiter, error) {
	if cfg.Every <= 0 || cfg.Burst < 1 || cfg.MaxKeys < 1 {
		return nil, fmt.Errorf("%w: %+v: Every, Burst and MaxKeys must be positive", ErrLimiterConfig, cfg)
	}
	l := &Limiter{
		every:   int64(cfg.Every),
		slack:   int64(cfg.Burst-1) * int64(cfg.Every),
		maxKeys: cfg.MaxKeys,
		seed:    maphash.MakeSeed(),
		now:     now,
		buckets: make(map[uint64]*bucket),
	}
	l.epoch = now()
	l.lru.next, l.lru.prev = &l.lru, &l.lru
	return l, nil
}

// Allow takes one token from key's bucket and reports whether there was
// one. A refused attempt does not drain the bucket further. It costs a
// hash of key and O(1) map and list work under the lock, and does not
// allocate once MaxKeys keys are tracked.
func (l *Limiter) Allow(key string) bool {
	k := maphash.String(l.seed, key)
	now := int64(l.now().Sub(l.epoch))

	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[k]
	if b == nil {
		b = l.insert(k, now)
	} else {
		l.unlink(b)
		l.pushFront(b)
	}
	tat := max(b.tat, now)
	if tat-now > l.slack {
		return false
	}
	b.tat = tat + l.every
	return true
}

// Retry returns how long until key's next attempt would be allowed: zero
// if one would be allowed now. Round it up to whole seconds for a
// Retry-After header. It takes no token; cost as Allow.
func (l *Limiter) Retry(key string) time.Duration {
	k := maphash.String(l.seed, key)
	now := int64(l.now().Sub(l.epoch))

	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		return 0
	}
	return time.Duration(max(b.tat-now-l.slack, 0))
}

// Len returns how many keys l tracks now, at most MaxKeys.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// sweep forgets up to maxSweep full buckets from the LRU tail. l.mu held.
func (l *Limiter) sweep(now int64) {
	for range maxSweep {
		b := l.lru.prev
		if b == &l.lru || b.tat > now {
			return
		}
		l.unlink(b)
		delete(l.buckets, b.key)
	}
}

// insert tracks a new key with a full bucket, reusing the least recently
// used bucket when l is at MaxKeys. l.mu held.
func (l *Limiter) insert(k uint64, now int64) *bucket {
	var b *bucket
	if len(l.buckets) >= l.maxKeys {
		b = l.lru.prev
		l.unlink(b)
		delete(l.buckets, b.key)
	} else {
		b = new(bucket)
	}
	*b = bucket{key: k, tat: now}
	l.buckets[k] = b
	l.pushFront(b)
	return b
}

func (l *Limiter) unlink(b *bucket) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
}

func (l *Limiter) pushFront(b *bucket) {
	b.prev, b.next = &l.lru, l.lru.next
	l.lru.next.prev = b
	l.lru.next = b
}

// IPKey returns the rate-limit key for a client address: the address
// itself for IPv4 (including IPv4-mapped IPv6), its /64 for IPv6, since one
// client commonly holds a whole /64. The invalid Addr gives "". It
// allocates the string.
func IPKey(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64) // cannot fail for a valid IPv6 address
	return p.String()
}

// EmailKey returns the rate-limit key for an email address: its
// store.NormalizeEmail form, so every spelling of one address (case,
// full-width letters) shares one bucket. It is a key, not a validated
// address. Use it in a Limiter or Backoff of its own, or inside LoginKey,
// never in one that also holds IPKey keys: "127.0.0.1" is both an
// address's key and a string someone may send as an email.
func EmailKey(email string) string {
	return store.NormalizeEmail(email)
}
