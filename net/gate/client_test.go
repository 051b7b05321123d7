package gate

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestDialWithLocalAddr: a connection dialled with a local address comes
// from it, as the server sees it.
func TestDialWithLocalAddr(t *testing.T) {
	var from atomic.Value
	s := startServer(t, testConfig(), Handler{OnOpen: func(c *Conn) { from.Store(c.RemoteAddr().String()) }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 7)}
	c, err := DialWith(ctx, "ws://"+s.Addr().String()+"/", DialOptions{LocalAddr: local})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(1000, "")
	waitFor(t, "the server's open", func() bool { return from.Load() != nil })
	if h, _, _ := net.SplitHostPort(from.Load().(string)); h != "127.0.0.7" {
		t.Errorf("the server sees %s; want 127.0.0.7", from.Load())
	}
}

// TestClientWriteMessageAllocs: a client sending at rate (a load driver's
// intents) writes each message without allocating.
func TestClientWriteMessageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var got atomic.Int64
	s := startServer(t, testConfig(), Handler{OnMessage: func(*Conn, []byte) { got.Add(1) }})
	c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(1000, "")
	msg := make([]byte, 24)
	if err := c.WriteMessage(msg); err != nil { // warm the frame buffer
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() {
		if err := c.WriteMessage(msg); err != nil {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("WriteMessage allocs = %v; want 0", allocs)
	}
	waitFor(t, "every message received", func() bool { return got.Load() == 202 })
}
