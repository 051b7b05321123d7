package area

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// TestNothingBeforeHello: a connection that has not sent a valid hello gets
// nothing but errors (no snapshot, no presence) while the Area it will join
// runs and broadcasts to another peer; then hello_ack.
func TestNothingBeforeHello(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 32, 32)
	a := dial(t, h)
	a.hello(d.grant(1, 100, 1, 5, 5, time.Minute), 1)
	b := dial(t, h)
	for i := 0; i < 6; i++ {
		b.send(&wire.Intent{Seq: uint32(i + 1), Kind: wire.IntentStep, Dir: wire.DirE})
		if i == 3 {
			b.c.WriteMessage([]byte{0xff, 0x00}) // garbage
		}
		// Let real snapshot rounds pass for A meanwhile: A steps east and
		// back, each step answered by a snapshot.
		if code := a.act(uint32(i+1), wire.IntentStep, [2]wire.Dir{wire.DirE, wire.DirW}[i%2]); code != wire.CodeOK {
			t.Fatalf("A's step %d: %s", i+1, code)
		}
	}
	tok := d.grant(1, 101, 7, 8, 8, time.Minute)
	b.send(&wire.Hello{Grant: tok, JoinID: 7, Versions: []uint16{wire.Version}})
	var codes []wire.Code
	for {
		m := b.next(5 * time.Second)
		if ack, ok := m.(*wire.HelloAck); ok {
			if ack.JoinID != 7 {
				t.Fatalf("hello_ack join_id = %d; want 7", ack.JoinID)
			}
			break
		}
		e, ok := m.(*wire.Error)
		if !ok {
			t.Fatalf("before hello_ack the peer got %s", m.Type())
		}
		codes = append(codes, e.Code)
	}
	if len(codes) != 7 {
		t.Fatalf("got %d errors before hello_ack (%v); want 6 NOT_HELLO and 1 MALFORMED", len(codes), codes)
	}
	for i, c := range codes {
		want := wire.CodeNotHello
		if i == 4 {
			want = wire.CodeMalformed
		}
		if c != want {
			t.Fatalf("error %d = %v; want %v (all: %v)", i, c, want, codes)
		}
	}
	// Once bound, snapshots flow.
	expectMsg[*wire.Snapshot](b, 5*time.Second)
	if y := b.you(); y.X != 8 || y.Y != 8 {
		t.Fatalf("first snapshot you = %+v; want (8,8)", y)
	}
}

func TestGrantRules(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	tok := d.grant(1, 100, 1, 2, 2, time.Minute)

	wrongJoin := dial(t, h)
	wrongJoin.send(&wire.Hello{Grant: tok, JoinID: 99, Versions: []uint16{wire.Version}})
	if e := expectMsg[*wire.Error](wrongJoin, 5*time.Second); e.Code != wire.CodeBadGrant || e.JoinID != 99 {
		t.Fatalf("hello with another join's id: %+v; want BAD_GRANT echoing join 99", e)
	}

	c := dial(t, h)
	c.hello(tok, 1)
	again := dial(t, h)
	again.send(&wire.Hello{Grant: tok, JoinID: 1, Versions: []uint16{wire.Version}})
	if e := expectMsg[*wire.Error](again, 5*time.Second); e.Code != wire.CodeBadGrant || e.JoinID != 1 {
		t.Fatalf("grant used twice: %+v; want BAD_GRANT", e)
	}

	short := d.grant(1, 200, 3, 4, 4, 30*time.Millisecond)
	time.Sleep(60 * time.Millisecond) // let the grant's TTL pass
	late := dial(t, h)
	late.send(&wire.Hello{Grant: short, JoinID: 3, Versions: []uint16{wire.Version}})
	e := expectMsg[*wire.Error](late, 5*time.Second)
	if e.Code != wire.CodeGrantExpired {
		t.Fatalf("expired grant: %+v; want GRANT_EXPIRED (swept or not: a swept grant is remembered %v)", e, expiredKeep)
	}

	old := dial(t, h)
	old.send(&wire.Hello{Grant: "x", JoinID: 4, Versions: []uint16{9}})
	if e := expectMsg[*wire.Error](old, 5*time.Second); e.Code != wire.CodeVersionUnsupported || e.JoinID != 4 {
		t.Fatalf("no common version: %+v", e)
	}
}

func TestTakeoverKeepsBody(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	first := dial(t, h)
	ack1 := first.hello(d.grant(1, 100, 1, 3, 3, time.Minute), 1)
	first.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirE})
	for {
		s := expectMsg[*wire.Snapshot](first, 5*time.Second)
		if s.AckSeq == 1 {
			if y := first.you(); y.X != 4 || y.Facing != wire.DirE {
				t.Fatalf("after one step east you = %+v; want x 4, facing east", y)
			}
			break
		}
	}
	second := dial(t, h)
	ack2 := second.hello(d.grant(1, 100, 2, 0, 0, time.Minute), 2)
	if ack2.Entity != ack1.Entity {
		t.Fatalf("takeover got entity %d; want the same body %d", ack2.Entity, ack1.Entity)
	}
	// The old peer: its last snapshot (ack_seq 1), taken_over, then the
	// close (1000).
	var got []string
	var lastAck uint32
	for {
		m, ok := <-first.msgs
		if !ok {
			break
		}
		switch m := m.(type) {
		case *wire.Snapshot:
			lastAck = m.AckSeq
		default:
			got = append(got, m.Type().String())
		}
	}
	if len(got) != 1 || got[0] != "taken_over" || lastAck != 1 {
		t.Fatalf("old peer got %v (last ack_seq %d); want taken_over alone after its last snapshot (ack 1), before its close", got, lastAck)
	}
	var ce *gate.CloseError
	if err := <-first.errs; !errors.As(err, &ce) || ce.Code != gate.CloseNormal {
		t.Fatalf("old peer closed with %v; want 1000", err)
	}
	expectMsg[*wire.Snapshot](second, 5*time.Second)
	if y := second.you(); y.X != 4 || y.Y != 3 {
		t.Fatalf("position after takeover = (%d,%d); want (4,3) preserved", y.X, y.Y)
	}
}

func TestResumeWithinGrace(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = time.Minute })
	d.spawn(1, 16, 16)
	c := dial(t, h)
	ack := c.hello(d.grant(1, 100, 1, 6, 6, time.Minute), 1)
	c.c.Close(1000, "bye")
	waitFor(t, "peer gone", func() bool { return h.peers.Load() == 0 })
	r := dial(t, h)
	r.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 5})
	ack2 := expectMsg[*wire.HelloAck](r, 5*time.Second)
	if ack2.Entity != ack.Entity || ack2.JoinID != 5 {
		t.Fatalf("resume ack %+v; want entity %d join 5", ack2, ack.Entity)
	}
	bad := dial(t, h)
	bad.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 6}) // rotated at rebind
	if e := expectMsg[*wire.Error](bad, 5*time.Second); e.Code != wire.CodeBadToken {
		t.Fatalf("stale resume token: %+v; want BAD_TOKEN", e)
	}
}

// TestEveryIntentAnswered: three intents sent at once get three answers:
// two rejections and one applied (seen as ack_seq).
func TestEveryIntentAnswered(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 0, 0, time.Minute), 1)
	c.send(&wire.Intent{Seq: 1, Kind: wire.IntentStep, Dir: wire.DirN}) // off the grid
	c.send(&wire.Intent{Seq: 2, Kind: wire.IntentStep, Dir: wire.DirS}) // applied
	c.send(&wire.Intent{Seq: 3, Kind: 77})                              // unknown kind
	results := map[uint32]wire.Code{}
	acked := uint32(0)
	for len(results) < 2 || acked < 2 {
		switch m := c.next(5 * time.Second).(type) {
		case *wire.IntentResult:
			if _, dup := results[m.Seq]; dup {
				t.Fatalf("seq %d answered twice", m.Seq)
			}
			results[m.Seq] = m.Code
		case *wire.Snapshot:
			acked = max(acked, m.AckSeq)
		case *wire.AreaInfo, *wire.Static, *wire.Presence, *wire.Inventory, *wire.Recipes:
		default:
			t.Fatalf("unexpected %s", m.Type())
		}
	}
	if results[1] != wire.CodeOutOfBounds || results[3] != wire.CodeMalformed || len(results) != 2 {
		t.Fatalf("results %v; want 1: OUT_OF_BOUNDS, 3: MALFORMED", results)
	}
}

func TestRateLimitAndFloodClose(t *testing.T) {
	h, d := testHost(t, func(c *Config) {
		c.IntentRate, c.IntentBurst, c.FloodClose = 5, 5, 30
	})
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 0, 0, time.Minute), 1)
	for i := 1; i <= 200; i++ {
		b, _ := wire.Encode(&wire.Intent{Seq: uint32(i), Kind: wire.IntentStop})
		if err := c.c.WriteMessage(b); err != nil {
			break // closed under us
		}
	}
	limited := 0
	for m := range c.msgs {
		if r, ok := m.(*wire.IntentResult); ok && r.Code == wire.CodeRateLimited {
			limited++
		}
	}
	var ce *gate.CloseError
	if err := <-c.errs; !errors.As(err, &ce) || ce.Code != gate.ClosePolicyViolation {
		t.Fatalf("flooding peer closed with %v; want 1008", err)
	}
	if limited < 20 {
		t.Fatalf("%d RATE_LIMITED answers before the close; want the flood answered", limited)
	}
}

// sendAt sends stop intents evenly at perSecond (as many every 10 ms as
// are due) from seq 1 until n are sent or the connection ends; it reports
// how many RATE_LIMITED answers came and the connection's end (nil while
// open).
func sendAt(c *client, perSecond, n int) (limited int, end error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	sent := 0
	for sent < n {
		for due := min(n, int(time.Since(start).Seconds()*float64(perSecond))+1); sent < due; {
			sent++
			b, _ := wire.Encode(&wire.Intent{Seq: uint32(sent), Kind: wire.IntentStop})
			if c.c.WriteMessage(b) != nil {
				break
			}
		}
		<-tick.C
	drain:
		for {
			select {
			case m, ok := <-c.msgs:
				if !ok {
					return limited, <-c.errs
				}
				if r, is := m.(*wire.IntentResult); is && r.Code == wire.CodeRateLimited {
					limited++
				}
			default:
				break drain
			}
		}
	}
	return limited, nil
}

// TestFloodMeterClosesASustainedFlood is the regression test of N12
// (issue 29): a client sending ten times, or twice, the intent rate has
// some intents accepted every second, and must be closed (1008) all the
// same; one at the rate never is. (The old counter counted refusals in a
// row, reset by every accepted intent: neither flood was ever closed.)
func TestFloodMeterClosesASustainedFlood(t *testing.T) {
	const rate = 40
	// n is enough for the 2x flood to fill the meter four times over
	// (+rate/2 a second past the burst: 20 in 1 s), and for the client at
	// the rate to spend its burst twice over.
	cases := []struct {
		name         string
		perSecond, n int
		closed       bool
	}{
		{"10x", 10 * rate, 8 * 2 * rate, true},
		{"2x", 2 * rate, 8 * 2 * rate, true},
		{"at the rate", rate, 3 * rate, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, d := testHost(t, func(c *Config) {
				c.IntentRate, c.IntentBurst, c.FloodClose = rate, rate, 20
			})
			d.spawn(1, 16, 16)
			c := dial(t, h)
			c.hello(d.grant(1, 100, 1, 0, 0, time.Minute), 1)
			limited, end := sendAt(c, tc.perSecond, tc.n)
			if !tc.closed {
				if end != nil {
					t.Fatalf("a client at the rate was closed: %v (%d refused)", end, limited)
				}
				return
			}
			var ce *gate.CloseError
			if end == nil {
				t.Fatalf("%d intents at %d/s (rate %d/s), %d refused RATE_LIMITED: still open; want closed 1008", tc.n, tc.perSecond, rate, limited)
			}
			if !errors.As(end, &ce) || ce.Code != gate.ClosePolicyViolation {
				t.Fatalf("flooding peer closed with %v; want 1008", end)
			}
		})
	}
}

func TestPersistAckResendAndReconnect(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 150 * time.Millisecond })
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 2, 2, time.Minute), 1)
	s1 := expect[*control.Snapshot](d, 5*time.Second)
	for len(s1.Characters) == 0 { // one taken before the hello landed
		s1 = expect[*control.Snapshot](d, 5*time.Second)
	}
	if s1.Area != 1 || s1.Epoch != 1 || len(s1.Characters) != 1 || s1.Characters[0].Account != 100 {
		t.Fatalf("snapshot %+v", s1)
	}
	// Not acked: after two intervals the host resends (a newer one replaces it).
	s2 := expect[*control.Snapshot](d, 5*time.Second)
	if s2.Seq < s1.Seq {
		t.Fatalf("seq went back: %d then %d", s1.Seq, s2.Seq)
	}
	d.send(&control.SnapshotAck{Area: 1, Seq: s2.Seq})
	// Drop the link: the host reconnects, re-registers with its Areas, and
	// resends what is unacked.
	d.DropLink()
	reg, err := d.Registered(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Areas) != 1 || reg.Areas[0].Area != 1 || reg.Areas[0].Acked < s2.Seq {
		t.Fatalf("re-registration areas %+v; want area 1 acked >= %d", reg.Areas, s2.Seq)
	}
	s3 := expect[*control.Snapshot](d, 5*time.Second)
	if s3.Seq <= s2.Seq {
		t.Fatalf("after reconnect seq %d; want > %d", s3.Seq, s2.Seq)
	}
}

func TestRegistrationRefusedIsFatal(t *testing.T) {
	d := newDirector(t)
	d.Refuse("unknown spawn token")
	cfg := DefaultConfig()
	cfg.Director = d.Addr()
	cfg.SpawnToken = "nope"
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(t.Context()) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrRegistration) {
			t.Fatalf("Run = %v; want ErrRegistration", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return on a refused registration")
	}
}

func TestCloseAreaTellsPeersThenFinalSnapshot(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 2, 2, time.Minute), 1)
	d.send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeRealmClosed), GraceMS: 300})
	ac := expectMsg[*wire.AreaClosing](c, 5*time.Second)
	if ac.Reason != wire.CodeRealmClosed || ac.GraceMS != 300 {
		t.Fatalf("area_closing %+v", ac)
	}
	// Still running through the grace: snapshots keep coming.
	expectMsg[*wire.Snapshot](c, 5*time.Second)
	var final *control.Snapshot
	for final == nil {
		if s := expect[*control.Snapshot](d, 5*time.Second); s.Final {
			final = s
		}
	}
	d.send(&control.SnapshotAck{Area: 1, Seq: final.Seq})
	closed := expect[*control.AreaClosed](d, 5*time.Second)
	if closed.Seq != final.Seq || !closed.Acked {
		t.Fatalf("area closed %+v; want final seq %d acked", closed, final.Seq)
	}
	r := expectMsg[*wire.Rehello](c, 5*time.Second)
	if r.Code != wire.CodeRealmClosed {
		t.Fatalf("rehello %+v", r)
	}
	c.closed(5 * time.Second)
	if h.area(1) != nil {
		t.Fatal("area still in the pool")
	}
}

func TestAreaFreezesWhenEmptyAndGrantWakes(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = 0 })
	d.spawn(1, 16, 16)
	ha := h.area(1)
	c := dial(t, h)
	c.hello(d.grant(1, 100, 1, 2, 2, time.Minute), 1)
	if ha.a.Mode() != ecs.Active {
		t.Fatal("area with a bound peer is not active")
	}
	c.c.Close(1000, "bye")
	waitFor(t, "freeze", func() bool { return ha.a.Mode() == ecs.Frozen })
	d.grant(1, 101, 2, 3, 3, time.Minute)
	if ha.a.Mode() != ecs.Active {
		t.Fatal("a grant did not wake the area")
	}
}

// TestSlowAndOverflowingPeersKeepTheirBodies: a peer that never reads only
// skips snapshots (the others keep receiving); a peer whose reliable queue
// overflows is dropped, and its body stays in the world for a resume.
func TestSlowAndOverflowingPeersKeepTheirBodies(t *testing.T) {
	h, d := testHost(t, func(c *Config) {
		c.Gate.ReliableQueueLimit = 2 << 10
		c.IntentRate, c.IntentBurst, c.FloodClose = 1e6, 1e6, 1e6
		c.ResumeGrace = time.Minute
	})
	d.spawn(1, 32, 32)
	fast := dial(t, h)
	fast.hello(d.grant(1, 100, 1, 2, 2, time.Minute), 1)
	slow := dial(t, h)
	slowAck := slow.hello(d.grant(1, 101, 2, 9, 9, time.Minute), 2)
	// The slow peer stops reading; snapshots for it are skipped, never queued.
	slow.c.NetConn().(interface{ CloseRead() error }).CloseRead()
	for i := 0; i < 20; i++ {
		expectMsg[*wire.Snapshot](fast, 5*time.Second)
	}
	// Now make its reliable queue overflow: each unknown-kind intent earns an
	// intent_result it never reads.
	for i := 1; i <= 5000; i++ {
		b, _ := wire.Encode(&wire.Intent{Seq: uint32(i), Kind: 77})
		if err := slow.c.WriteMessage(b); err != nil {
			break
		}
	}
	ha := h.area(1)
	waitFor(t, "the overflowing peer dropped", func() bool { return h.peers.Load() == 1 })
	// The gate counts the peer gone before the Area has taken in the drop
	// (it does so on its own goroutine, at its next tick): ask until it has,
	// and check that the body is kept when it has.
	kept := func() (dropped, alive bool) {
		res := make(chan [2]bool)
		ha.a.PostControl(func(a *ecs.Area) {
			b := ha.bodies[101]
			res <- [2]bool{b == nil || b.peer == nil, b != nil && a.Alive(b.entity) && b.entity.ID() == slowAck.Entity}
		})
		r := <-res
		return r[0], r[1]
	}
	waitFor(t, "the Area takes in the drop", func() bool { dropped, _ := kept(); return dropped })
	if _, alive := kept(); !alive {
		t.Fatal("the dropped peer's body is not kept for a resume")
	}
	for i := 0; i < 5; i++ { // the others never slowed
		expectMsg[*wire.Snapshot](fast, 5*time.Second)
	}
}

// TestFloodersAreBoundedByTheirBuckets: ten peers flooding intents put no
// more into the Area than their token buckets allow, so the Area's tick
// load does not grow with the flood; a calm peer keeps every answer.
func TestFloodersAreBoundedByTheirBuckets(t *testing.T) {
	const rate, burst = 10, 10
	h, d := testHost(t, func(c *Config) { c.IntentRate, c.IntentBurst, c.FloodClose = rate, burst, 1<<30 })
	d.spawn(1, 48, 48)
	ha := h.area(1)
	var posted atomic.Int64
	ha.a.PostControl(func(a *ecs.Area) {
		prev := a.AfterTick
		a.AfterTick = func(a *ecs.Area) {
			for _, ans := range a.Outbox {
				if ans.Seq > 0 {
					posted.Add(1)
				}
			}
			prev(a)
		}
	})
	start := time.Now()
	var flooders []*client
	for i := 0; i < 10; i++ {
		c := dial(t, h)
		c.hello(d.grant(1, uint64(200+i), uint64(10+i), int32(4*i), 20, time.Minute), uint64(10+i))
		flooders = append(flooders, c)
	}
	calm := dial(t, h)
	calm.hello(d.grant(1, 100, 1, 2, 2, time.Minute), 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range flooders {
		wg.Add(1)
		go func(c *client) {
			defer wg.Done()
			// 1,000 intents a second each, 100 times their rate: a flood the
			// server must absorb, paced so the test's own clients do not
			// starve this 2-core machine instead.
			b, _ := wire.Encode(&wire.Intent{Seq: 1, Kind: wire.IntentStop})
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				for range 10 {
					if c.c.WriteMessage(b) != nil {
						return
					}
				}
			}
		}(c)
	}
	// The calm peer steps back and forth 10 times; each step is answered.
	for seq := uint32(1); seq <= 10; seq++ {
		dir := wire.DirE
		if seq%2 == 0 {
			dir = wire.DirW
		}
		calm.send(&wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: dir})
		for answered := false; !answered; {
			switch m := calm.next(5 * time.Second).(type) {
			case *wire.IntentResult:
				answered = m.Seq == seq
			case *wire.Snapshot:
				answered = m.AckSeq >= seq
			}
		}
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	// What reached the Area: at most the buckets' burst plus their refill,
	// for the flooders, plus the calm peer's 10.
	limit := float64(10*burst) + 10*rate*elapsed + 10
	if got := float64(posted.Load()); got > limit {
		t.Fatalf("%v intents reached the Area in %.1fs; the buckets allow %v", got, elapsed, limit)
	}
}

// TestNewSessionStartsItsOwnSeqs: a second login (a fresh hello) numbers
// its intents from 1 again, and they are acknowledged, though the body's
// previous session had gone higher.
func TestNewSessionStartsItsOwnSeqs(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	first := dial(t, h)
	first.hello(d.grant(1, 100, 1, 3, 3, time.Minute), 1)
	first.send(&wire.Intent{Seq: 50, Kind: wire.IntentStop})
	for {
		if s := expectMsg[*wire.Snapshot](first, 5*time.Second); s.AckSeq == 50 {
			break
		}
	}
	second := dial(t, h)
	second.hello(d.grant(1, 100, 2, 0, 0, time.Minute), 2)
	if s := expectMsg[*wire.Snapshot](second, 5*time.Second); s.AckSeq != 0 {
		t.Fatalf("new session's first snapshot ack_seq = %d; want 0", s.AckSeq)
	}
	second.send(&wire.Intent{Seq: 1, Kind: wire.IntentStop})
	for {
		if s := expectMsg[*wire.Snapshot](second, 5*time.Second); s.AckSeq == 1 {
			break
		}
	}
}

// TestNoResumeWhileOutOfTouch: a host whose link to the director is down
// cannot know whether the character joined another Area meanwhile, so it
// refuses a resume (BAD_TOKEN: join through the director); once linked
// again, the same token resumes.
func TestNoResumeWhileOutOfTouch(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = time.Minute })
	d.spawn(1, 16, 16)
	c := d.grant(1, 100, 1, 6, 6, time.Minute)
	cl := dial(t, h)
	ack := cl.hello(c, 1)
	cl.c.Close(1000, "bye")
	waitFor(t, "peer gone", func() bool { return h.peers.Load() == 0 })
	d.Away(true) // it will not take the host back for now
	d.DropLink()
	waitFor(t, "the link down", func() bool { return !h.link.up.Load() })
	r := dial(t, h)
	r.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 5})
	if e := expectMsg[*wire.Error](r, 5*time.Second); e.Code != wire.CodeBadToken || e.JoinID != 5 {
		t.Fatalf("resume while out of touch: %+v; want BAD_TOKEN for join 5", e)
	}
	d.Away(false)
	waitFor(t, "the link up again", func() bool { return h.link.up.Load() })
	r2 := dial(t, h)
	r2.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 6})
	if a := expectMsg[*wire.HelloAck](r2, 5*time.Second); a.Entity != ack.Entity {
		t.Fatalf("resume once linked again: %+v", a)
	}
}

// TestSessionsEndPastTheLease: a host whose director stops answering its
// heartbeats for its lease (a partition, a director gone) ends every
// session (rehello{UNAVAILABLE}; the body stays, away) and binds no one,
// not even with a grant the director gave before: past the lease the
// director may have let the character into another Area. Once the
// director answers again, the host binds players again, and the body
// that waited is the one a grant binds.
func TestSessionsEndPastTheLease(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = time.Minute; c.HeartbeatEvery = 100 * time.Millisecond })
	d.LeaseMS.Store(600)
	d.DropLink() // register again, now with a lease
	waitFor(t, "the lease given", func() bool { return h.link.leaseMS.Load() == 600 && h.link.up.Load() })
	d.spawn(1, 16, 16)
	cl := dial(t, h)
	ack := cl.hello(d.grant(1, 100, 1, 6, 6, time.Minute), 1)
	later := d.grant(1, 101, 2, 8, 8, time.Minute) // given while in touch, used once out of touch

	d.Mute.Store(true)
	for {
		m := cl.next(5 * time.Second)
		if r, ok := m.(*wire.Rehello); ok {
			if r.Code != wire.CodeUnavailable {
				t.Fatalf("the session ended with rehello{%v}; want UNAVAILABLE", r.Code)
			}
			break
		}
	}
	if err := cl.closed(5 * time.Second); err == nil || !strings.Contains(err.Error(), "1001") {
		t.Fatalf("the connection closed with %v; want 1001 (going away)", err)
	}
	if h.link.inTouch() {
		t.Fatal("the host is in touch with no heartbeat answered for its lease")
	}
	late := dial(t, h)
	late.send(&wire.Hello{Grant: later, JoinID: 2, Versions: []uint16{wire.Version}})
	if e := expectMsg[*wire.Error](late, 5*time.Second); e.Code != wire.CodeUnavailable || e.JoinID != 2 {
		t.Fatalf("hello while out of touch: %+v; want UNAVAILABLE for join 2", e)
	}
	resume := dial(t, h)
	resume.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 3})
	if e := expectMsg[*wire.Error](resume, 5*time.Second); e.Code != wire.CodeBadToken {
		t.Fatalf("resume while out of touch: %+v; want BAD_TOKEN (join through the director)", e)
	}

	d.Mute.Store(false)
	waitFor(t, "back in touch", h.link.inTouch)
	again := dial(t, h)
	again.send(&wire.Resume{Token: ack.ResumeToken, JoinID: 4})
	if a := expectMsg[*wire.HelloAck](again, 5*time.Second); a.Entity != ack.Entity {
		t.Fatalf("resume once in touch again: %+v; want the body that waited (%d)", a, ack.Entity)
	}
}

// TestOrphanedHostStops: a host no director takes for its orphan timeout
// stops (Run returns, its Areas closed), rather than run for ever.
func TestOrphanedHostStops(t *testing.T) {
	d := newDirector(t)
	cfg := DefaultConfig()
	cfg.Director = d.Addr()
	cfg.SpawnToken = "spawn-token"
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.ShutdownGrace = 50 * time.Millisecond
	cfg.FinalAckTimeout = 100 * time.Millisecond
	cfg.OrphanTimeout = 500 * time.Millisecond
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(context.Background()) }()
	if _, err := d.Registered(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("the host stopped while its director had it")
	case <-time.After(time.Second):
	}
	d.Close() // the director goes, and none comes
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run of an orphaned host: %v; want nil (a clean stop)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an orphaned host still runs 20 s after its director went (orphan timeout 500 ms)")
	}
}
