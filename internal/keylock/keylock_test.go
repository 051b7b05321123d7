package keylock

import (
	"runtime"
	"sync"
	"testing"
)

// TestLockSerialisesOneKey: holders of one key never overlap, other keys
// do not wait for it, and the map forgets a key once its last user is
// done.
func TestLockSerialisesOneKey(t *testing.T) {
	var l Map[int]
	var wg sync.WaitGroup
	var mu sync.Mutex
	in := map[int]int{}
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := i % 4
			unlock := l.Lock(k)
			mu.Lock()
			in[k]++
			if in[k] != 1 {
				t.Errorf("key %d held by %d at once", k, in[k])
			}
			mu.Unlock()
			runtime.Gosched() // let another holder in, were the lock not one
			mu.Lock()
			in[k]--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if n := l.Len(); n != 0 {
		t.Errorf("%d keys still held after every user is done", n)
	}
	a := l.Lock(1)
	b := l.Lock(2) // another key: does not wait for key 1
	if n := l.Len(); n != 2 {
		t.Errorf("Len = %d with two keys held; want 2", n)
	}
	a()
	b()
}

// TestTryLockNeverWaits: TryLock takes a free key's lock, refuses a held
// one without waiting, and a key it took is held as Lock's would be.
func TestTryLockNeverWaits(t *testing.T) {
	var l Map[string]
	unlock, ok := l.TryLock("a")
	if !ok {
		t.Fatal("TryLock of a free key refused")
	}
	if _, ok := l.TryLock("a"); ok {
		t.Fatal("TryLock of a held key took it")
	}
	if u, ok := l.TryLock("b"); !ok {
		t.Fatal("TryLock of another key refused")
	} else {
		u()
	}
	unlock()
	if n := l.Len(); n != 0 {
		t.Errorf("%d keys held after every unlock; want 0", n)
	}
	held := l.Lock("a")
	if _, ok := l.TryLock("a"); ok {
		t.Fatal("TryLock of a key held by Lock took it")
	}
	held()
	if u, ok := l.TryLock("a"); !ok {
		t.Fatal("TryLock of a released key refused")
	} else {
		u()
	}
}
