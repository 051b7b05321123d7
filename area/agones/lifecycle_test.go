package agones

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func quietConfig() Config {
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

func newLifecycle(t *testing.T, c *Client, cfg Config) *Lifecycle {
	t.Helper()
	l, err := NewLifecycle(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLifecyclePingsHealth over a real socket: Run pings at once and keeps
// pinging at its period. No timing is asserted: the test polls until it
// has seen several pings.
func TestLifecyclePingsHealth(t *testing.T) {
	s, c := startSidecar(t)
	cfg := quietConfig()
	cfg.HealthEvery = 10 * time.Millisecond
	l := newLifecycle(t, c, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for s.count("/health") < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d health pings after 20 s; want at least 5", s.count("/health"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got := s.Calls(false); len(got) != 0 {
		t.Errorf("calls besides health = %s; want none before any status", callsString(got))
	}
}

// TestLifecycleHealthCadence in fake time: one ping at start and one per
// period, and a failing sidecar does not stop them.
func TestLifecycleHealthCadence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		cfg := quietConfig()
		l := newLifecycle(t, c, cfg)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { l.Run(ctx); close(done) }()

		s.failNext("/health", 500, 500, 503)
		time.Sleep(10*cfg.HealthEvery + cfg.HealthEvery/2)
		synctest.Wait()
		if got := s.count("/health"); got != 11 {
			t.Errorf("health pings over 10.5 periods = %d; want 11 (one at start, one per period, failures included)", got)
		}
		cancel()
		<-done
		n := s.count("/health")
		time.Sleep(5 * cfg.HealthEvery)
		if got := s.count("/health"); got != n {
			t.Errorf("pings after Run returned: %d; want none", got-n)
		}
	})
}

// TestLifecycleStatus: labels are set only when their figure changed,
// Allocate when the first Area arrives, Ready again once the host has been
// empty for ReleaseAfter, Allocate again when an Area comes back.
func TestLifecycleStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		cfg := quietConfig()
		cfg.ReleaseAfter = 10 * time.Second
		l := newLifecycle(t, c, cfg)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go l.Run(ctx)
		if err := l.Ready(ctx); err != nil {
			t.Fatal(err)
		}

		label := func(k, v string) call {
			return call{"PUT", "/metadata/label", `{"key":"` + k + `","value":"` + v + `"}`, "application/json"}
		}
		allocate := call{"POST", "/allocate", "{}", "application/json"}
		ready := call{"POST", "/ready", "{}", "application/json"}
		seen := 0
		expect := func(step string, want ...call) {
			t.Helper()
			synctest.Wait()
			all := s.Calls(false)
			got := all[seen:]
			seen = len(all)
			if !slices.Equal(got, want) {
				t.Errorf("%s: calls = %s; want %s", step, callsString(got), callsString(want))
			}
		}
		expect("ready", ready)

		l.SetStatus(0, 0)
		expect("first status", label("ley-areas", "0"), label("ley-players", "0"))
		l.SetStatus(0, 0)
		time.Sleep(3 * cfg.HealthEvery)
		expect("same status, three pings later")

		l.SetStatus(1, 3)
		expect("first Area", allocate, label("ley-areas", "1"), label("ley-players", "3"))
		l.SetStatus(1, 5)
		expect("players only", label("ley-players", "5"))
		l.SetStatus(2, 5)
		expect("areas only", label("ley-areas", "2"))
		// Changed and changed back before Run gets to apply the first (it
		// waits while another call holds ops, as a slow sidecar call does):
		// nothing changed. Without holding ops, Run may apply the first
		// before the second is set (it runs beside this goroutine).
		l.ops.Lock()
		l.SetStatus(3, 6)
		l.SetStatus(2, 5)
		l.ops.Unlock()
		expect("change and change back")

		l.SetStatus(0, 0)
		expect("empty", label("ley-areas", "0"), label("ley-players", "0"))
		time.Sleep(cfg.ReleaseAfter - cfg.HealthEvery)
		expect("empty, not yet ReleaseAfter")
		time.Sleep(3 * cfg.HealthEvery)
		expect("empty for ReleaseAfter", ready)
		time.Sleep(cfg.ReleaseAfter + cfg.HealthEvery)
		expect("released: Ready only once")

		l.SetStatus(1, 1)
		expect("an Area again", allocate, label("ley-areas", "1"), label("ley-players", "1"))
		time.Sleep(cfg.ReleaseAfter / 2)
		l.SetStatus(0, 0)
		time.Sleep(cfg.ReleaseAfter / 2)
		l.SetStatus(1, 1)
		time.Sleep(cfg.ReleaseAfter)
		expect("a short idle spell keeps the host Allocated", label("ley-areas", "0"), label("ley-players", "0"), label("ley-areas", "1"), label("ley-players", "1"))
	})
}

// TestLifecycleRetriesFailedChanges: a label or Allocate the sidecar
// refused is tried again at the next ping, and applied once.
func TestLifecycleRetriesFailedChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		cfg := quietConfig()
		l := newLifecycle(t, c, cfg)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go l.Run(ctx)

		s.failNext("/allocate", 503)
		s.failNext("/metadata/label", 500)
		l.SetStatus(2, 7)
		synctest.Wait()
		if got := s.count("/allocate"); got != 1 {
			t.Fatalf("allocate calls = %d; want 1 so far", got)
		}
		time.Sleep(cfg.HealthEvery)
		synctest.Wait()
		time.Sleep(5 * cfg.HealthEvery)
		synctest.Wait()
		if got := s.count("/allocate"); got != 2 {
			t.Errorf("allocate calls = %d; want 2 (one refused, one retried)", got)
		}
		// areas refused once, then areas and players once each.
		if got := s.count("/metadata/label"); got != 3 {
			t.Errorf("label calls = %d; want 3: %s", got, callsString(s.Calls(false)))
		}
	})
}

// TestLifecycleReadyWaitsForTheSidecar: the sidecar may come up after the
// host; Ready retries while it is unreachable or answers 5xx, and gives up
// at once on a 4xx.
func TestLifecycleReadyWaitsForTheSidecar(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		l := newLifecycle(t, c, quietConfig())
		s.failNext("/ready", 503, 502, 500, 503)
		start := time.Now()
		if err := l.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if got := s.count("/ready"); got != 5 {
			t.Errorf("ready calls = %d; want 5", got)
		}
		// 0.5 + 1 + 2 + 4 s of backoff.
		if got := time.Since(start); got != 7500*time.Millisecond {
			t.Errorf("Ready took %v of fake time; want 7.5s of backoff", got)
		}

		s.failNext("/ready", http.StatusConflict)
		var se *StatusError
		if err := l.Ready(t.Context()); !errors.As(err, &se) || se.Code != http.StatusConflict {
			t.Errorf("Ready on 409 = %v; want the *StatusError at once", err)
		}

		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		s.failNext("/ready", 503, 503, 503, 503, 503, 503)
		if err := l.Ready(ctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrStatus) {
			t.Errorf("Ready until the deadline = %v; want the deadline and the last refusal", err)
		}
	})
}

// TestLifecycleReadyWaitsForAnUnreachableSidecar: a sidecar that is not
// listening yet is retried like a 5xx.
func TestLifecycleReadyWaitsForAnUnreachableSidecar(t *testing.T) {
	s, c := startSidecar(t)
	cfg := DefaultClientConfig()
	cfg.BaseURL = "http://127.0.0.1:1" // nothing listens on port 1
	down, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lcfg := quietConfig()
	lcfg.RetryEvery = time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := newLifecycle(t, down, lcfg).Ready(ctx); !errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ready against nothing = %v; want ErrUnreachable and the deadline", err)
	}
	if err := newLifecycle(t, c, lcfg).Ready(context.Background()); err != nil || s.count("/ready") != 1 {
		t.Errorf("Ready = %v after %d calls; want nil after 1", err, s.count("/ready"))
	}
}

// TestLifecycleShutdown: Shutdown is sent once, Run returns, and nothing
// is sent after it.
func TestLifecycleShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		cfg := quietConfig()
		l := newLifecycle(t, c, cfg)
		done := make(chan struct{})
		go func() { l.Run(t.Context()); close(done) }()
		l.SetStatus(1, 1)
		synctest.Wait()

		s.failNext("/shutdown", 503)
		if err := l.Shutdown(t.Context()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		<-done // Run returns after Shutdown
		before := len(s.Calls(true))
		l.SetStatus(0, 0)
		time.Sleep(10 * cfg.HealthEvery)
		synctest.Wait()
		if err := l.Ready(t.Context()); !errors.Is(err, ErrShutdown) {
			t.Errorf("Ready after Shutdown = %v; want ErrShutdown", err)
		}
		if err := l.Shutdown(t.Context()); !errors.Is(err, ErrShutdown) {
			t.Errorf("second Shutdown = %v; want ErrShutdown", err)
		}
		if got := s.Calls(true)[before:]; len(got) != 0 {
			t.Errorf("calls after Shutdown = %s; want none", callsString(got))
		}
		if got := s.count("/shutdown"); got != 2 {
			t.Errorf("shutdown calls = %d; want 2 (one refused, one accepted)", got)
		}
	})
}

// TestLifecycleAddress waits until Agones has given the GameServer an
// address and the named port.
func TestLifecycleAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c, closeAll := pipeSidecar(t)
		defer closeAll()
		l := newLifecycle(t, c, quietConfig())
		go func() {
			time.Sleep(3 * time.Second)
			s.setStatus(map[string]any{"state": "Scheduled", "address": "203.0.113.7"})
			time.Sleep(3 * time.Second)
			s.setStatus(map[string]any{"state": "Scheduled", "address": "203.0.113.7", "ports": []any{
				map[string]any{"name": "metrics", "port": 7001},
				map[string]any{"name": "client", "port": 7342},
			}})
		}()
		addr, err := l.Address(t.Context(), "client")
		if err != nil || addr != "203.0.113.7:7342" {
			t.Fatalf("Address = %q, %v; want 203.0.113.7:7342", addr, err)
		}
		if addr, err := l.Address(t.Context(), ""); err != nil || addr != "203.0.113.7:7001" {
			t.Errorf("Address of the first port = %q, %v; want 203.0.113.7:7001", addr, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := l.Address(ctx, "admin"); !errors.Is(err, ErrNoAddress) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Address of a port that never comes = %v; want ErrNoAddress and the deadline", err)
		}
	})
}

// TestNewLifecycleValidates refuses configs that cannot work.
func TestNewLifecycleValidates(t *testing.T) {
	_, c := startSidecar(t)
	bad := []func(*Config){
		func(c *Config) { c.HealthEvery = 0 },
		func(c *Config) { c.RetryEvery = -time.Second },
		func(c *Config) { c.ReleaseAfter = -time.Second },
		func(c *Config) { c.AreasLabel = "ley.dev/areas" },
		func(c *Config) { c.PlayersLabel = "" },
		func(c *Config) { c.PlayersLabel = c.AreasLabel },
	}
	for i, mod := range bad {
		cfg := quietConfig()
		mod(&cfg)
		if _, err := NewLifecycle(c, cfg); err == nil {
			t.Errorf("config %d: NewLifecycle succeeded; want an error", i)
		}
	}
	if _, err := NewLifecycle(nil, quietConfig()); err == nil {
		t.Error("NewLifecycle(nil client) succeeded; want an error")
	}
}
