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

// TestALoopbackSourceOnlyForLoopbackHosts: a driver's loopback source
// address is bound for a host on this machine and left to the system for
// a host on another (the kernel refuses a loopback source there, and
// every player of a driver with a loopback director failed to connect to
// hosts on other machines with EINVAL).
func TestALoopbackSourceOnlyForLoopbackHosts(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 7)}
	lan := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9)}
	var none *net.TCPAddr
	for _, c := range []struct {
		url   string
		local net.Addr
		want  net.Addr
	}{
		{"ws://127.0.0.1:7100/ws", loop, loop},
		{"ws://127.9.0.1:7100/ws", loop, loop},
		{"ws://localhost:7100/ws", loop, loop},
		{"ws://[::1]:7100/ws", loop, loop},
		{"ws://10.88.0.2:7100/ws", loop, nil},
		{"wss://game-3.example.net/ws", loop, nil},
		{"ws://10.88.0.2:7100/ws", lan, lan},
		{"ws://127.0.0.1:7100/ws", lan, lan},
		{"ws://10.88.0.2:7100/ws", nil, nil},
		{"ws://10.88.0.2:7100/ws", none, none},
	} {
		if got := sourceFor(c.url, c.local); got != c.want {
			t.Errorf("sourceFor(%s, %v) = %v; want %v", c.url, c.local, got, c.want)
		}
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
