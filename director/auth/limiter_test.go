package auth

import (
	"errors"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for a Limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testLimiter(t *testing.T, cfg LimiterConfig) (*Limiter, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l, err := newLimiter(cfg, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

func TestLimiterBurstRefill(t *testing.T) {
	l, c := testLimiter(t, LimiterConfig{Every: time.Second, Burst: 3, MaxKeys: 10})
	type step struct {
		advance   time.Duration
		want      bool
		wantRetry time.Duration // Retry after the Allow
	}
	for i, s := range []step{
		{0, true, 0},
		{0, true, 0},
		{0, true, time.Second},
		{0, false, time.Second}, // burst spent
		{0, false, time.Second}, // a refusal does not drain further
		{400 * time.Millisecond, false, 600 * time.Millisecond},
		{600 * time.Millisecond, true, time.Second}, // one token back
		{0, false, time.Second},
		{10 * time.Second, true, 0}, // refilled to Burst, not beyond
		{0, true, 0},
		{0, true, time.Second},
		{0, false, time.Second},
	} {
		c.advance(s.advance)
		if got := l.Allow("1.2.3.4"); got != s.want {
			t.Fatalf("step %d: Allow = %v; want %v", i, got, s.want)
		}
		if got := l.Retry("1.2.3.4"); got != s.wantRetry {
			t.Fatalf("step %d: Retry = %v; want %v", i, got, s.wantRetry)
		}
	}
	if !l.Allow("5.6.7.8") {
		t.Errorf("Allow(other key) = false; want true: keys have separate buckets")
	}
	if got := l.Retry("unknown"); got != 0 {
		t.Errorf("Retry(unknown) = %v; want 0", got)
	}
}

func TestLimiterKeyCap(t *testing.T) {
	const maxKeys = 100
	l, c := testLimiter(t, LimiterConfig{Every: time.Second, Burst: 2, MaxKeys: maxKeys})
	// Spend "victim"'s burst, then flood with fresh keys.
	l.Allow("victim")
	l.Allow("victim")
	for i := range 10 * maxKeys {
		l.Allow("k" + strconv.Itoa(i))
		if n := l.Len(); n > maxKeys {
			t.Fatalf("after %d keys Len = %d; want <= %d", i+1, n, maxKeys)
		}
	}
	// The least recently used key was forgotten: its bucket is full again.
	if got := l.Retry("victim"); got != 0 {
		t.Errorf("Retry(evicted) = %v; want 0", got)
	}
	// A recently used key is kept.
	l.Allow("hot")
	l.Allow("hot")
	for i := range maxKeys / 2 {
		l.Allow("j" + strconv.Itoa(i))
	}
	if l.Allow("hot") {
		t.Errorf("Allow(hot) = true after its burst; want false")
	}

	// Once every bucket is full again, new calls sweep idle keys away.
	c.advance(3 * time.Second)
	const calls = maxKeys/maxSweep + 1
	for i := range calls {
		l.Allow("late" + strconv.Itoa(i))
	}
	if n := l.Len(); n != calls {
		t.Errorf("after idling, Len = %d; want %d (only the new keys)", n, calls)
	}
}

// TestLimiterSweepKeepsState checks that sweeping forgets only full buckets.
func TestLimiterSweepKeepsState(t *testing.T) {
	l, c := testLimiter(t, LimiterConfig{Every: time.Second, Burst: 2, MaxKeys: 100})
	l.Allow("a")
	l.Allow("a") // a is empty: full again in 2 s
	c.advance(time.Second)
	l.Allow("b") // sweeps; a still holds one token's debt
	if got := l.Retry("a"); got != 0 {
		t.Fatalf("Retry(a) = %v; want 0 (one token back)", got)
	}
	l.Allow("a")
	if l.Allow("a") {
		t.Errorf("Allow(a) = true; want false: a's state was lost")
	}
	c.advance(5 * time.Second)
	l.Allow("c")
	if n := l.Len(); n != 1 {
		t.Errorf("Len after idle sweep = %d; want 1", n)
	}
}

func TestLimiterConcurrent(t *testing.T) {
	l, _ := testLimiter(t, LimiterConfig{Every: time.Hour, Burst: 50, MaxKeys: 1000})
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 4 {
		wg.Go(func() {
			n := 0
			for range 100 {
				if l.Allow("shared") {
					n++
				}
				l.Retry("shared")
			}
			mu.Lock()
			allowed += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("allowed %d of 400 concurrent attempts; want exactly Burst 50", allowed)
	}
}

func TestNewLimiterConfig(t *testing.T) {
	if _, err := NewLimiter(DefaultLimiterConfig()); err != nil {
		t.Errorf("NewLimiter(default) = %v; want nil", err)
	}
	for _, cfg := range []LimiterConfig{
		{Every: 0, Burst: 1, MaxKeys: 1},
		{Every: time.Second, Burst: 0, MaxKeys: 1},
		{Every: time.Second, Burst: 1, MaxKeys: 0},
	} {
		if _, err := NewLimiter(cfg); !errors.Is(err, ErrLimiterConfig) {
			t.Errorf("NewLimiter(%+v) = %v; want ErrLimiterConfig", cfg, err)
		}
	}
}

func TestLimiterAllocs(t *testing.T) {
	l, _ := testLimiter(t, LimiterConfig{Every: time.Second, Burst: 5, MaxKeys: 64})
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = "10.0.0." + strconv.Itoa(i)
		l.Allow(keys[i])
	}
	i := 0
	// At the cap, new keys reuse evicted buckets.
	if n := testing.AllocsPerRun(1000, func() {
		l.Allow(keys[i%len(keys)])
		l.Retry(keys[i%len(keys)])
		i++
	}); n != 0 {
		t.Errorf("Allow+Retry allocs at the key cap = %v; want 0", n)
	}
}

func TestIPKey(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
	} {
		if got := IPKey(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IPKey(%s) = %q; want %q", tt.addr, got, tt.want)
		}
	}
	if got := IPKey(netip.Addr{}); got != "" {
		t.Errorf("IPKey(invalid) = %q; want \"\"", got)
	}
}

func TestEmailKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Ann@Example.COM", "ann@example.com"},
		{"  ann@example.com\n", "ann@example.com"},
		{"ann@example.com", "ann@example.com"},
		{"ａnn@Example.com", "ann@example.com"}, // full-width: one address, one key
	} {
		if got := EmailKey(tt.in); got != tt.want {
			t.Errorf("EmailKey(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
