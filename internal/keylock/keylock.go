// Package keylock serialises work by key: one lock per key, made on first
// use and dropped when its last user unlocks, so a map of locks for
// millions of accounts holds only the ones in use.
package keylock

import "sync"

// Map holds the locks of keys of type K. The zero value is ready. Safe
// for concurrent use.
type Map[K comparable] struct {
	mu sync.Mutex
	m  map[K]*lock
}

// lock is one key's lock: a token in held while it is taken. A channel
// rather than a sync.Mutex: the lock may be held across a round trip to
// another process, and a wait on a channel is one testing/synctest sees
// as durable, so a test can run its holders in a bubble (a goroutine
// waiting on a mutex keeps a bubble from settling).
type lock struct {
	held  chan struct{}
	users int
}

// Lock takes k's lock, waiting for it while another holds it, and returns
// the function that gives it back (call it once).
func (l *Map[K]) Lock(k K) (unlock func()) {
	kl := l.use(k)
	kl.held <- struct{}{}
	return func() { l.release(k, kl) }
}

// TryLock takes k's lock if no one holds it, and reports whether it did;
// it never waits.
func (l *Map[K]) TryLock(k K) (unlock func(), ok bool) {
	kl := l.use(k)
	select {
	case kl.held <- struct{}{}:
		return func() { l.release(k, kl) }, true
	default:
		l.done(k, kl)
		return nil, false
	}
}

// use returns k's lock, made if none is, counted as used by one more.
func (l *Map[K]) use(k K) *lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[K]*lock{}
	}
	kl := l.m[k]
	if kl == nil {
		kl = &lock{held: make(chan struct{}, 1)}
		l.m[k] = kl
	}
	kl.users++
	return kl
}

// release gives back k's lock kl, which its caller holds.
func (l *Map[K]) release(k K, kl *lock) {
	<-kl.held
	l.done(k, kl)
}

// done counts one user of kl fewer, forgetting k's lock with its last.
func (l *Map[K]) done(k K, kl *lock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kl.users--; kl.users == 0 {
		delete(l.m, k)
	}
}

// Len reports how many keys have their lock taken or waited for.
func (l *Map[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
