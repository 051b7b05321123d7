//go:build leytest

package director

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/wire"
)

// TestAreaPanicIsContained runs a real host process with three busy Areas
// and a failpoint that panics inside the second one's tick. That Area alone
// fails: its players get area_closing{INTERNAL} and rehello{INTERNAL}, and
// are back in it within seconds through an ordinary join (the director
// makes it live again from its last snapshot); the host process survives;
// the players of the other two Areas keep walking with every intent
// acknowledged, and the director counts the failure. The largest snapshot
// gap the other players saw while it happened is logged (measured, not
// asserted: timings are never asserted in tests; bench/RESULTS.md has it).
func TestAreaPanicIsContained(t *testing.T) {
	t.Setenv("LEY_FAILPOINT", failpoint.AreaTickPanic+"2@60") // ~3 s into play
	r := startRealm(t, func(c *Config) { c.Spawn.MaxHosts = 1 })
	ctx := context.Background()
	owner, ownerAcct := r.player("owner")
	r.admin(ownerAcct)
	var areas []dirclient.Area
	for i := range 3 {
		a, err := owner.CreateArea(ctx, fmt.Sprintf("busy %d", i+1), "village", 32, 32)
		if err != nil {
			t.Fatal(err)
		}
		areas = append(areas, a)
	}
	if areas[1].ID != 2 {
		t.Fatalf("the second area got id %d; the failpoint is armed for 2", areas[1].ID)
	}
	var pid int
	for _, h := range r.d.registry.Hosts() {
		pid = h.PID
	}

	var walkers []*walker
	for _, a := range areas {
		code, err := owner.Invite(ctx, a.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			c, _ := r.player(fmt.Sprintf("w%d-%d", a.ID, i))
			if _, err := c.Redeem(ctx, code); err != nil {
				t.Fatal(err)
			}
			j, err := c.Join(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := connect(t, j)
			walkers = append(walkers, &walker{c: c, area: a.ID, p: p, joinedAt: time.Now()})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(walkers))
	for _, w := range walkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- w.play(ctx, 8*time.Second)
		}()
	}
	wg.Wait()
	close(errs)
	for _, w := range walkers {
		w.p.c.Close(1000, "")
	}
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var worst time.Duration
	for _, w := range walkers {
		if w.area != 2 {
			worst = max(worst, w.maxGap)
		}
	}
	var back time.Duration
	for _, w := range walkers {
		if w.area == 2 {
			if w.rejoins != 1 {
				t.Fatalf("a player of the failing Area rejoined %d times; want 1", w.rejoins)
			}
			back = max(back, w.backIn)
		} else if w.rejoins != 0 {
			t.Fatalf("a player of Area %d had to rejoin", w.area)
		}
	}
	t.Logf("largest snapshot gap of the other Areas' players while one Area failed: %v; the failed Area's players were back in (hello_ack) after at most %v", worst, back)
	if n := r.metric("ley_area_failures_total"); n != 1 {
		t.Fatalf("ley_area_failures_total = %v; want 1", n)
	}
	hosts := r.d.registry.Hosts()
	if len(hosts) != 1 {
		t.Fatalf("%d hosts registered; want the one that survived", len(hosts))
	}
	for _, h := range hosts {
		if h.PID != pid {
			t.Fatalf("host pid %d; want %d (the process must survive an Area's panic)", h.PID, pid)
		}
	}
}

// walker is a player of TestAreaPanicIsContained.
type walker struct {
	c        *dirclient.Client
	area     uint32
	p        *peer
	joinedAt time.Time
	seq      uint32
	maxGap   time.Duration // largest time between two snapshots
	rejoins  int
	backIn   time.Duration // from area_closing to the new hello_ack
}

// play walks back and forth for d, checking that every step is
// acknowledged; a player whose Area fails (area_closing{INTERNAL}, then
// rehello{INTERNAL}) joins again through the director and walks on. It
// runs on its own goroutine and reports failures as errors.
func (w *walker) play(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	last := time.Now()
	for time.Now().Before(end) {
		w.seq++
		dir := wire.DirE
		if w.seq%2 == 0 {
			dir = wire.DirW
		}
		if err := w.p.write(&wire.Intent{Seq: w.seq, Kind: wire.IntentStep, Dir: dir}); err != nil {
			return fmt.Errorf("area %d: send: %w", w.area, err)
		}
	acked:
		for {
			var m wire.Message
			select {
			case msg, ok := <-w.p.msgs:
				if !ok {
					return fmt.Errorf("area %d: connection ended unannounced: %v", w.area, <-w.p.done)
				}
				m = msg
			case <-time.After(10 * time.Second):
				return fmt.Errorf("area %d: seq %d not acknowledged in 10 s", w.area, w.seq)
			}
			switch m := m.(type) {
			case *wire.Snapshot:
				now := time.Now()
				w.maxGap = max(w.maxGap, now.Sub(last))
				last = now
				if m.AckSeq >= w.seq {
					break acked
				}
			case *wire.AreaClosing:
				if m.Reason != wire.CodeInternal {
					return fmt.Errorf("area %d: area_closing %v; want INTERNAL", w.area, m.Reason)
				}
				if err := w.rejoin(ctx); err != nil {
					return err
				}
				last = time.Now()
				break acked
			case *wire.IntentResult:
				// Another walker or a wanderer in the way: answered all the same.
				if m.Seq == w.seq && m.Code == wire.CodeBlocked {
					break acked
				}
				return fmt.Errorf("area %d: seq %d refused %v", w.area, m.Seq, m.Code)
			case *wire.Error:
				return fmt.Errorf("area %d: error %v %s", w.area, m.Code, m.Detail)
			}
		}
	}
	return nil
}

// rejoin follows a failed Area: rehello{INTERNAL}, the connection's close,
// then an ordinary join through the director and a hello.
func (w *walker) rejoin(ctx context.Context) error {
	start := time.Now()
	sawRehello := false
	for m := range w.p.msgs { // until the server closes the connection
		if rh, ok := m.(*wire.Rehello); ok {
			if rh.Code != wire.CodeInternal {
				return fmt.Errorf("area %d: rehello %v; want INTERNAL", w.area, rh.Code)
			}
			sawRehello = true
		}
	}
	if !sawRehello {
		return fmt.Errorf("area %d: closed without rehello", w.area)
	}
	for {
		j, err := w.c.Join(ctx, w.area)
		if err == nil {
			p, ack, err := dialPeer(j)
			if err != nil {
				return fmt.Errorf("area %d: hello after the failure: %w", w.area, err)
			}
			if ack.Area != w.area {
				return fmt.Errorf("area %d: rejoined area %d", w.area, ack.Area)
			}
			w.p, w.seq = p, 0
			w.rejoins++
			w.backIn = time.Since(start)
			return nil
		}
		if time.Since(start) > 10*time.Second {
			return fmt.Errorf("area %d: no join within 10 s of the failure: %w", w.area, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
