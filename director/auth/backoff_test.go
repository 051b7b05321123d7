package auth

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func testBackoff(t *testing.T, cfg BackoffConfig) (*Backoff, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	b, err := newBackoff(cfg, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

// TestBackoffProgression: Free failures cost nothing; each further one
// doubles the wait up to Max; waiting it out lets the next attempt in; a
// success clears everything.
func TestBackoffProgression(t *testing.T) {
	b, c := testBackoff(t, BackoffConfig{Free: 2, Base: time.Second, Max: 10 * time.Second, Forget: time.Minute, MaxKeys: 10})
	const k = "192.0.2.1\x00ann@x"
	for i, want := range []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		if got := b.Wait(k); got != 0 {
			t.Fatalf("failure %d: Wait before = %v; want 0 (the last wait was served)", i+1, got)
		}
		if got := b.Fail(k); got != want {
			t.Fatalf("failure %d: Fail = %v; want %v", i+1, got, want)
		}
		if got := b.Wait(k); got != want {
			t.Fatalf("failure %d: Wait = %v; want %v", i+1, got, want)
		}
		c.advance(want / 2)
		if got := b.Wait(k); got != want-want/2 {
			t.Fatalf("failure %d: Wait halfway = %v; want %v", i+1, got, want-want/2)
		}
		c.advance(want - want/2)
	}
	if got := b.Wait("192.0.2.2\x00ann@x"); got != 0 {
		t.Errorf("Wait(same account, other address) = %v; want 0", got)
	}
	b.Reset(k)
	if got := b.Fail(k); got != 0 {
		t.Errorf("Fail after Reset = %v; want 0 (a free failure again)", got)
	}
}

// TestBackoffForget: a key quiet for Forget starts again; a key that keeps
// failing is kept.
func TestBackoffForget(t *testing.T) {
	b, c := testBackoff(t, BackoffConfig{Free: 1, Base: time.Second, Max: 4 * time.Second, Forget: time.Minute, MaxKeys: 10})
	b.Fail("a")
	b.Fail("a") // waits 1 s
	b.Fail("b")
	c.advance(59 * time.Second)
	b.Fail("b") // b's last failure is recent; a's is 59 s old
	c.advance(time.Second)
	if got := b.Fail("c"); got != 0 || b.Len() != 2 {
		t.Fatalf("after a minute: Fail(c) = %v, Len = %d; want 0, 2 (a forgotten)", got, b.Len())
	}
	if got := b.Fail("a"); got != 0 {
		t.Errorf("Fail(a) after a quiet minute = %v; want 0 (forgotten)", got)
	}
	if got := b.Fail("b"); got != 2*time.Second {
		t.Errorf("Fail(b) = %v; want 2s (its third failure, still counted)", got)
	}
}

// TestBackoffKeyCap: memory stays bounded whatever the number of keys;
// the key with the oldest failure goes first.
func TestBackoffKeyCap(t *testing.T) {
	const maxKeys = 50
	b, c := testBackoff(t, BackoffConfig{Free: 0, Base: time.Second, Max: time.Hour, Forget: time.Hour, MaxKeys: maxKeys})
	b.Fail("victim")
	c.advance(time.Millisecond)
	for i := range 10 * maxKeys {
		b.Fail("k" + strconv.Itoa(i))
		if n := b.Len(); n > maxKeys {
			t.Fatalf("after %d keys Len = %d; want <= %d", i+1, n, maxKeys)
		}
	}
	if got := b.Wait("victim"); got != 0 {
		t.Errorf("Wait(evicted) = %v; want 0", got)
	}
	last := "k" + strconv.Itoa(10*maxKeys-1)
	if got := b.Wait(last); got != time.Second {
		t.Errorf("Wait(latest key) = %v; want 1s (kept)", got)
	}
	if n := testing.AllocsPerRun(100, func() { b.Fail("z"); b.Wait("z") }); n != 0 {
		t.Errorf("Fail+Wait allocs at the key cap = %v; want 0", n)
	}
}

func TestNewBackoffConfig(t *testing.T) {
	if _, err := NewBackoff(DefaultBackoffConfig()); err != nil {
		t.Errorf("NewBackoff(default) = %v; want nil", err)
	}
	for _, cfg := range []BackoffConfig{
		{Free: -1, Base: time.Second, Max: time.Second, Forget: time.Second, MaxKeys: 1},
		{Free: 0, Base: 0, Max: time.Second, Forget: time.Second, MaxKeys: 1},
		{Free: 0, Base: 2 * time.Second, Max: time.Second, Forget: time.Hour, MaxKeys: 1},
		{Free: 0, Base: time.Second, Max: time.Hour, Forget: time.Minute, MaxKeys: 1},
		{Free: 0, Base: time.Second, Max: time.Second, Forget: time.Second, MaxKeys: 0},
	} {
		if _, err := NewBackoff(cfg); !errors.Is(err, ErrLimiterConfig) {
			t.Errorf("NewBackoff(%+v) = %v; want ErrLimiterConfig", cfg, err)
		}
	}
}

// TestLoginKey: one key per (address, account) whatever the spelling of
// the address's email, and an email that looks like an address is not
// that address.
func TestLoginKey(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{LoginKey("192.0.2.1", "ann@x"), LoginKey("192.0.2.1", "ＡNN@X"), true},
		{LoginKey("192.0.2.1", "ann@x"), LoginKey("192.0.2.2", "ann@x"), false},
		{LoginKey("192.0.2.1", "ann@x"), LoginKey("192.0.2.1", "bob@x"), false},
		{LoginKey("192.0.2.1", "127.0.8.99"), "127.0.8.99", false},
		{LoginKey("192.0.2.1", "127.0.8.99"), IPKey(mustAddr("127.0.8.99")), false},
	}
	for _, tt := range tests {
		if got := tt.a == tt.b; got != tt.same {
			t.Errorf("%q == %q: got = %v; want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
