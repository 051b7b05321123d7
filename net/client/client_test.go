package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/area"
	"github.com/leyworks/ley/area/areatest"
	"github.com/leyworks/ley/net/client"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// realm is a real area host in this process, registered with the
// scripted director of area/areatest.
type realm struct {
	t *testing.T
	h *area.Host
	d *areatest.Director
}

func startHost(t *testing.T) *realm {
	t.Helper()
	d, err := areatest.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	d.AutoAck.Store(true)
	cfg := area.DefaultConfig()
	cfg.Director, cfg.SpawnToken, cfg.Name = d.Addr(), "spawn-token", t.Name()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.ShutdownGrace, cfg.FinalAckTimeout = 50*time.Millisecond, time.Second
	h, err := area.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("host Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the host did not stop")
		}
	})
	if _, err := d.Registered(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	return &realm{t: t, h: h, d: d}
}

// spawn makes an open floor of 32 x 32 squares live as Area id, with
// portals.
func (r *realm) spawn(id uint32, portals ...control.Portal) {
	r.t.Helper()
	if err := r.d.Send(&control.SpawnArea{Area: id, Epoch: 1, Kind: "village", W: 32, H: 32, Seed: uint64(id), Template: "empty", Portals: portals}); err != nil {
		r.t.Fatal(err)
	}
	ready, err := areatest.Expect[*control.AreaReady](r.d, 10*time.Second)
	if err != nil || ready.Error != "" {
		r.t.Fatalf("spawn Area %d: %v %+v", id, err, ready)
	}
}

func (r *realm) grant(area uint32, account, joinID uint64, x, y int32) string {
	r.t.Helper()
	tok, err := r.d.Grant(area, account, joinID, x, y, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	return tok
}

// recorder is a Handler that keeps every answer and event.
type recorder struct {
	mu      sync.Mutex
	answers map[uint32][]client.Answer // by seq
	events  chan client.Event
	frames  map[wire.Type]int
}

func newRecorder() *recorder {
	return &recorder{answers: map[uint32][]client.Answer{}, events: make(chan client.Event, 1024), frames: map[wire.Type]int{}}
}

func (r *recorder) handler() client.Handler {
	return client.Handler{
		Frame: func(f client.Frame) {
			r.mu.Lock()
			r.frames[f.Type]++
			r.mu.Unlock()
		},
		Answer: func(a client.Answer) {
			r.mu.Lock()
			r.answers[a.Intent.Seq] = append(r.answers[a.Intent.Seq], a)
			r.mu.Unlock()
		},
		Event: func(e client.Event) { r.events <- e },
	}
}

// event returns the next event of kind, failing on an unexpected drop,
// end or protocol breach on the way.
func (r *recorder) event(t *testing.T, kind client.EventKind) client.Event {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-r.events:
			if e.Kind == kind {
				return e
			}
			switch e.Kind {
			case client.EventProtocol, client.EventDropped, client.EventError, client.EventUnmatched:
				t.Fatalf("waiting for %s: %s %+v", kind, e.Kind, e)
			}
		case <-deadline:
			t.Fatalf("no %s event within 15 s", kind)
		}
	}
}

// TestWaitAnswerFollowsTheHandler: WaitAnswer returns an answer only once
// the Handler has had it, as Wait does, so a test that waits for an answer
// can read what its handler recorded. (Under two test suites at once,
// TestHelloStepAndAnswers found no answer recorded after WaitAnswer.) The
// handler here takes its time over each answer.
func TestWaitAnswerFollowsTheHandler(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, func(cfg *client.Config) {
		record := cfg.Handler.Answer
		cfg.Handler.Answer = func(a client.Answer) {
			time.Sleep(100 * time.Millisecond) // a slow handler: the window the wait must not return in
			record(a)
		}
	})
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 41, 5, 5), 41); err != nil {
		t.Fatal(err)
	}
	seq, err := c.MoveTo(100, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitAnswer(ctx(t), seq); err != nil {
		t.Fatal(err)
	}
	rec.only(t, seq)
}

// only returns the one answer seq got, failing unless there is exactly one.
func (r *recorder) only(t *testing.T, seq uint32) client.Answer {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.answers[seq]); n != 1 {
		t.Fatalf("seq %d got %d answers (%+v); want exactly one", seq, n, r.answers[seq])
	}
	return r.answers[seq][0]
}

func newClient(t *testing.T, rec *recorder, tune func(*client.Config)) *client.Client {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.Handler = rec.handler()
	if tune != nil {
		tune(&cfg)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestHelloStepAndAnswers: a hello binds, a step is applied (its seq is
// 1, its answer comes once, ack_seq reaches it), a move-to outside the
// grid is refused OUT_OF_BOUNDS, and the counters add up.
func TestHelloStepAndAnswers(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	ack, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 41, 5, 5), 41)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Area != 1 || ack.JoinID != 41 || ack.Version != wire.Version || ack.Entity == 0 {
		t.Fatalf("hello_ack %+v", ack)
	}
	if e := rec.event(t, client.EventBound); e.Ack != ack || e.Resumed || e.Followed {
		t.Fatalf("bound event %+v", e)
	}
	seq, err := c.Step(wire.DirE)
	if err != nil || seq != 1 {
		t.Fatalf("Step = %d, %v; want seq 1", seq, err)
	}
	if err := c.WaitAck(ctx(t), seq); err != nil {
		t.Fatal(err)
	}
	if a := rec.only(t, 1); a.Outcome != client.Applied || a.Intent.Kind != wire.IntentStep || a.Intent.Dir != wire.DirE || a.RTT <= 0 {
		t.Fatalf("answer %+v; want the step applied", a)
	}
	seq, err = c.MoveTo(100, 5)
	if err != nil || seq != 2 {
		t.Fatalf("MoveTo = %d, %v; want seq 2", seq, err)
	}
	a, err := c.WaitAnswer(ctx(t), 2)
	if err != nil || a.Outcome != client.Refused || a.Code != wire.CodeOutOfBounds {
		t.Fatalf("WaitAnswer(2) = %+v, %v; want refused OUT_OF_BOUNDS", a, err)
	}
	rec.only(t, 2)
	st := c.State()
	if st.Phase != client.Bound || st.Area != 1 || st.Entity != ack.Entity || st.LastSeq != 2 || st.Outstanding != 0 || st.Snapshots == 0 {
		t.Errorf("state %+v", st)
	}
	s := c.Stats()
	if s.Sent != 2 || s.Applied != 1 || s.Refused != 1 || s.Hellos != 1 || s.Snapshots == 0 || s.Frames <= s.Snapshots || s.Duplicates+s.Strays+s.Protocol != 0 {
		t.Errorf("stats %+v", s)
	}
	rec.mu.Lock()
	if rec.frames[wire.TypeAreaInfo] != 1 || rec.frames[wire.TypePresence] == 0 || rec.frames[wire.TypeStatic] == 0 {
		t.Errorf("frames by type %v; want area_info, presence and static", rec.frames)
	}
	rec.mu.Unlock()

	// A clean leave ends the session; the Client joins again.
	session := st.Session
	if err := c.Leave(); err != nil {
		t.Errorf("Leave: %v", err)
	}
	if _, err := c.Step(wire.DirW); !errors.Is(err, client.ErrNotBound) {
		t.Errorf("Step after Leave = %v; want ErrNotBound", err)
	}
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 42, 5, 5), 42); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendIn(session, wire.Intent{Kind: wire.IntentStop}); !errors.Is(err, client.ErrNotBound) {
		t.Errorf("SendIn of the session left = %v; want ErrNotBound", err)
	}
	if st := c.State(); st.Session == session || st.Phase != client.Bound || st.LastSeq != 0 {
		t.Errorf("after a second hello: %+v; want a fresh session", st)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.Step(wire.DirW); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Step after Close = %v; want ErrClosed", err)
	}
}

// TestHelloRefusals: an unknown grant and a version the server does not
// speak are refused, each by its code.
func TestHelloRefusals(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	c := newClient(t, newRecorder(), nil)
	var re *client.RefusedError
	if _, err := c.Hello(ctx(t), r.h.WSURL(), "no-such-grant", 7); !errors.As(err, &re) || re.Code != wire.CodeBadGrant {
		t.Errorf("hello with an unknown grant: %v; want BAD_GRANT", err)
	}
	old := newClient(t, newRecorder(), func(c *client.Config) { c.Versions = []uint16{1} })
	if _, err := old.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 8, 5, 5), 8); !errors.As(err, &re) || re.Code != wire.CodeVersionUnsupported {
		t.Errorf("hello speaking only version 1: %v; want VERSION_UNSUPPORTED", err)
	}
	both := newClient(t, newRecorder(), func(c *client.Config) {
		c.Versions = []uint16{1, wire.Version}
		c.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 9)}
	})
	if ack, err := both.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 9, 5, 5), 9); err != nil || ack.Version != wire.Version {
		t.Errorf("hello speaking 1 and %d from 127.0.0.9: %+v, %v", wire.Version, ack, err)
	}
}

// TestResumeSendsTheUnansweredAgain: intents in flight when the socket
// drops are sent again after the resume, with their seqs; each gets
// exactly one answer (none is left open, void or abandoned), and the
// session's seqs go on.
func TestResumeSendsTheUnansweredAgain(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 1, 10, 10), 1); err != nil {
		t.Fatal(err)
	}
	rec.event(t, client.EventBound)
	if _, err := c.Wait(ctx(t), func(s client.State) bool { return s.Snapshots > 0 }); err != nil {
		t.Fatal(err)
	}
	// Eight steps at once: the body takes one per 200 ms, so most of them
	// still wait in its queue when the socket drops right after.
	for i := range 8 {
		if _, err := c.Step([]wire.Dir{wire.DirE, wire.DirW}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	c.Drop()
	dropped := c.State()
	if dropped.Phase != client.Dropped || dropped.Outstanding == 0 {
		t.Fatalf("after the drop: %+v; want dropped with intents in flight", dropped)
	}
	if _, err := c.Step(wire.DirE); !errors.Is(err, client.ErrNotBound) {
		t.Fatalf("Step while dropped = %v; want ErrNotBound", err)
	}
	ack, err := c.Resume(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if e := rec.event(t, client.EventBound); !e.Resumed || e.Ack != ack {
		t.Fatalf("bound event %+v; want the resume's", e)
	}
	if _, err := c.Wait(ctx(t), func(s client.State) bool { return s.Outstanding == 0 }); err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if s.Resent != int64(dropped.Outstanding) || s.Resumes != 1 {
		t.Errorf("resent %d, resumes %d; want %d, 1", s.Resent, s.Resumes, dropped.Outstanding)
	}
	for seq := uint32(1); seq <= 8; seq++ {
		if a := rec.only(t, seq); a.Outcome != client.Applied && a.Outcome != client.Refused && a.Outcome != client.Unseen {
			t.Errorf("seq %d: %+v; want it applied, refused or unseen", seq, a)
		}
	}
	seq, err := c.Step(wire.DirS)
	if err != nil || seq != 9 {
		t.Fatalf("Step after the resume = %d, %v; want seq 9", seq, err)
	}
	if a, err := c.WaitAnswer(ctx(t), 9); err != nil || a.Outcome != client.Applied {
		t.Fatalf("seq 9: %+v, %v; want applied", a, err)
	}
	if s := c.Stats(); s.Duplicates+s.Strays+s.Protocol+s.Void+s.Abandoned != 0 || s.Sent != s.Applied+s.Refused+s.Unseen {
		t.Errorf("stats %+v; want every intent answered once", s)
	}
}

// TestTakeoverBySecondHello: a second hello of the same account (here from
// the same Client, as a player's second device) takes the session over:
// the old connection is told taken_over and closes, the new one plays
// from seq 1.
func TestTakeoverBySecondHello(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 1, 10, 10), 1); err != nil {
		t.Fatal(err)
	}
	first := rec.event(t, client.EventBound).Conn
	if seq, _ := c.Step(wire.DirE); c.WaitAck(ctx(t), seq) != nil {
		t.Fatal("the first session's step was not applied")
	}
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 2, 10, 10), 2); err != nil {
		t.Fatal(err)
	}
	var ended, closed, bound bool
	deadline := time.After(15 * time.Second)
	for !ended || !closed || !bound {
		select {
		case e := <-rec.events:
			switch {
			case e.Kind == client.EventEnded && e.Conn == first && e.Code == wire.CodeTakenOver:
				ended = true
			case e.Kind == client.EventDisconnected && e.Conn == first:
				closed = true
			case e.Kind == client.EventBound && e.Conn != first:
				bound = true
			default:
				t.Fatalf("unexpected event %+v", e)
			}
		case <-deadline:
			t.Fatalf("taken over %v, old connection closed %v, new one bound %v", ended, closed, bound)
		}
	}
	seq, err := c.Step(wire.DirW)
	if err != nil || seq != 1 {
		t.Fatalf("the new session's first Step = %d, %v; want seq 1", seq, err)
	}
	if a, err := c.WaitAnswer(ctx(t), seq); err != nil || a.Outcome != client.Applied {
		t.Fatalf("new session's step: %+v, %v", a, err)
	}
}

// TestFollowsAPortal: stepping onto a portal crosses to the other Area
// (the scripted director answers the host's crossing with a grant there);
// the client follows portal_moved to its ws_url with its grant, and plays
// on in a fresh session.
func TestFollowsAPortal(t *testing.T) {
	r := startHost(t)
	r.spawn(1, control.Portal{X: 5, Y: 5, ToArea: 2, ToX: 7, ToY: 7})
	r.spawn(2)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 1, 4, 5), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(wire.DirE); err != nil { // onto the portal
		t.Fatal(err)
	}
	out, err := areatest.Expect[*control.PortalOut](r.d, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	grant := r.grant(2, 100, 77, 7, 7)
	if err := r.d.Send(&control.PortalResult{Transfer: out.Transfer, Area: 1, Account: 100, OK: true, ToArea: 2, WSURL: r.h.WSURL(), Grant: grant, JoinID: 77}); err != nil {
		t.Fatal(err)
	}
	if e := rec.event(t, client.EventMoved); e.Moved.Area != 2 || e.Moved.JoinID != 77 {
		t.Fatalf("moved %+v", e.Moved)
	}
	if e := rec.event(t, client.EventBound); !e.Followed || e.Ack.Area != 2 || e.Ack.JoinID != 77 {
		t.Fatalf("bound after the crossing %+v", e)
	}
	if a := rec.only(t, 1); a.Outcome != client.Applied {
		t.Errorf("the step onto the portal: %+v; want applied (the crossing's last snapshot acknowledges it)", a)
	}
	seq, err := c.Step(wire.DirS)
	if err != nil || seq != 1 {
		t.Fatalf("first Step in Area 2 = %d, %v; want seq 1 of a fresh session", seq, err)
	}
	if err := c.WaitAck(ctx(t), seq); err != nil {
		t.Fatal(err)
	}
	if st, s := c.State(), c.Stats(); st.Area != 2 || s.Follows != 1 || s.Hellos != 1 {
		t.Errorf("state %+v, stats %+v; want Area 2 after one follow", st, s)
	}
}

// TestAreaClosing: an Area closing tells its players, plays on through
// the grace, then ends the session with rehello and closes.
func TestAreaClosing(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 1, 10, 10), 1); err != nil {
		t.Fatal(err)
	}
	conn := rec.event(t, client.EventBound).Conn
	if err := r.d.Send(&control.CloseArea{Area: 1, Reason: uint16(wire.CodeAreaClosing), GraceMS: 300}); err != nil {
		t.Fatal(err)
	}
	if e := rec.event(t, client.EventClosing); e.Code != wire.CodeAreaClosing || e.Grace != 300*time.Millisecond {
		t.Fatalf("closing %+v", e)
	}
	if e := rec.event(t, client.EventEnded); e.Code != wire.CodeAreaClosing || e.Type != wire.TypeRehello || e.Conn != conn {
		t.Fatalf("ended %+v; want rehello AREA_CLOSING", e)
	}
	rec.event(t, client.EventDisconnected)
	if st := c.State(); st.Phase != client.Ended || !st.Closing || st.EndCode != wire.CodeAreaClosing {
		t.Errorf("state %+v; want ended by AREA_CLOSING", st)
	}
	if _, err := c.Step(wire.DirE); !errors.Is(err, client.ErrNotBound) {
		t.Errorf("Step after the rehello = %v; want ErrNotBound", err)
	}
}

// TestHelloAfterADropAbandons: a new hello instead of a resume leaves the
// dropped session: what it had in flight is abandoned (its fate unknown),
// each with one answer, and the new session starts at seq 1.
func TestHelloAfterADropAbandons(t *testing.T) {
	r := startHost(t)
	r.spawn(1)
	rec := newRecorder()
	c := newClient(t, rec, nil)
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 1, 10, 10), 1); err != nil {
		t.Fatal(err)
	}
	old := rec.event(t, client.EventBound).Session
	for range 4 {
		if _, err := c.Step(wire.DirE); err != nil {
			t.Fatal(err)
		}
	}
	c.Drop()
	open := c.State().Outstanding
	if _, err := c.Hello(ctx(t), r.h.WSURL(), r.grant(1, 100, 2, 10, 10), 2); err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if s.Abandoned != int64(open) || s.Sent != s.Applied+s.Refused+s.Abandoned {
		t.Errorf("stats %+v; want the %d in flight abandoned, every intent answered once", s, open)
	}
	for seq := uint32(1); seq <= 4; seq++ {
		if a := rec.only(t, seq); a.Session != old {
			t.Errorf("seq %d answered in session %d; want %d", seq, a.Session, old)
		}
	}
	if seq, err := c.Step(wire.DirW); err != nil || seq != 1 {
		t.Errorf("first Step of the new session = %d, %v; want seq 1", seq, err)
	}
}
