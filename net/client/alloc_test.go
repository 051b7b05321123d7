package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// bound returns a Client bound on a real connection to a gate server that
// swallows what it is sent, as if a hello had been answered, and that
// connection. The server sends nothing: the test hands the client the
// server's frames itself.
func bound(t testing.TB, h Handler) (*Client, *conn) {
	t.Helper()
	var got atomic.Int64
	cfg := gate.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	srv, err := gate.Listen(context.Background(), cfg, gate.Handler{OnMessage: func(*gate.Conn, []byte) { got.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ccfg := DefaultConfig()
	ccfg.Handler = h
	c, err := New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ws, err := gate.Dial(context.Background(), "ws://"+srv.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	k := &conn{gen: 1, ws: ws, out: make([]Answer, 0, 8)}
	if err := c.install(k, &session{w: newWindow(ccfg.Window), wsURL: "ws://test/"}, &wire.HelloAck{Entity: 1, Area: 1, Version: wire.Version}, nil, Event{Kind: EventBound}); err != nil {
		t.Fatal(err)
	}
	return c, k
}

// TestSteadyLoopAllocs: the steady loop of a walking player, two intents
// sent, a snapshot acknowledging the first and an intent_result refusing
// the second, each handed to the Handler, allocates nothing.
func TestSteadyLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var frames, answers atomic.Int64
	c, k := bound(t, Handler{
		Frame:  func(f Frame) { frames.Add(int64(len(f.Bytes))) },
		Answer: func(a Answer) { answers.Add(int64(a.Intent.Seq)) },
	})
	snap := make([]byte, 0, 64)
	res := make([]byte, 0, 16)
	records := wire.AppendStep(nil, 1, wire.DirE)
	tick := uint64(0)
	loop := func() {
		a, err1 := c.Step(wire.DirE)
		b, err2 := c.Step(wire.DirW)
		if err1 != nil || err2 != nil {
			panic("send failed")
		}
		tick++
		snap = wire.AppendSnapshotHeader(snap[:0], tick, a, 0, len(records))
		snap = append(snap, records...)
		c.frame(k, snap, time.Now())
		res = wire.AppendIntentResult(res[:0], b, wire.CodeTooFast)
		c.frame(k, res, time.Now())
	}
	loop() // warm the buffers
	if allocs := testing.AllocsPerRun(200, loop); allocs != 0 {
		t.Errorf("steady loop allocs = %v; want 0", allocs)
	}
	s := c.Stats()
	if s.Sent != 2*202 || s.Applied != 202 || s.Refused != 202 || s.Protocol != 0 || c.State().Outstanding != 0 {
		t.Errorf("stats %+v; want every intent answered", s)
	}
}

// BenchmarkSteadyLoop: one intent sent and acknowledged by a snapshot.
func BenchmarkSteadyLoop(b *testing.B) {
	var frames atomic.Int64
	c, k := bound(b, Handler{Frame: func(f Frame) { frames.Add(1) }})
	snap := make([]byte, 0, 64)
	b.ReportAllocs()
	tick := uint64(0)
	for b.Loop() {
		seq, err := c.Step(wire.DirE)
		if err != nil {
			b.Fatal(err)
		}
		tick++
		snap = wire.AppendSnapshotHeader(snap[:0], tick, seq, 0, 0)
		c.frame(k, snap, time.Now())
	}
}
