package gate

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestAddrKey: a client counts for the per-address caps as its IPv4
// address, or its IPv6 /64.
func TestAddrKey(t *testing.T) {
	cases := []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.2", "192.0.2.2"},
		{"::ffff:192.0.2.1", "192.0.2.1"}, // IPv4-mapped: its IPv4
		{"2001:db8::1", "2001:db8::"},
		{"2001:db8::ffff:ffff:ffff:ffff", "2001:db8::"}, // the same /64
		{"2001:db8:0:1::1", "2001:db8:0:1::"},           // the next /64
		{"fe80::1%eth0", "fe80::"},                      // zone dropped
		{"::1", "::"},
	}
	for _, tc := range cases {
		if got := addrKey(netip.MustParseAddr(tc.in)); got != netip.MustParseAddr(tc.want) {
			t.Errorf("addrKey(%s) = %v; want %s", tc.in, got, tc.want)
		}
	}
}

// holdHandshakes opens n connections from local that send half a request
// and wait: handshakes in progress until the server's timeout.
func holdHandshakes(t *testing.T, s *Server, local net.IP, n int) []net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
	var held []net.Conn
	for range n {
		nc, err := d.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		if _, err := nc.Write([]byte("GET /ws HTTP/1.1\r\n")); err != nil {
			t.Fatal(err)
		}
		held = append(held, nc)
	}
	return held
}

func (s *Server) handshakesOf(key string) int {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	if u := s.addrs[netip.MustParseAddr(key)]; u != nil {
		return u.handshakes
	}
	return 0
}

// TestIPv6AddressCountsAsItsSlash64: an IPv6 client's handshakes are
// counted under its /64, and its share is that prefix's: past it, it is
// shed at accept. (Loopback has one IPv6 address; TestAddrKey shows two
// addresses of a /64 share a key.)
func TestIPv6AddressCountsAsItsSlash64(t *testing.T) {
	cfg := testConfig()
	cfg.Addr = "[::1]:0"
	cfg.MaxHandshakesPerAddr = 4
	cfg.HandshakeTimeout = 30 * time.Second
	s := startServer(t, cfg, newRecorder().handler(true))
	holdHandshakes(t, s, net.IPv6loopback, 4)
	waitFor(t, "four handshakes counted under ::/64", func() bool { return s.handshakesOf("::") == 4 })
	before := s.Refused()
	holdHandshakes(t, s, net.IPv6loopback, 1)
	waitFor(t, "the prefix's fifth refused", func() bool { return s.Refused() > before })
}

// TestFullHandshakeTableLetsAPlayerIn: with every handshake slot held by
// idle half-open connections (from several addresses, each within its
// share), a real client still completes its upgrade and is served: the
// oldest idle handshake is shed for it.
func TestFullHandshakeTableLetsAPlayerIn(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHandshakes, cfg.MaxHandshakesPerAddr = 32, 8
	cfg.HandshakeTimeout = 30 * time.Second // the idlers outlast the test
	s := startServer(t, cfg, newRecorder().handler(true))
	var held []net.Conn
	for i := range 4 { // 127.0.0.2..127.0.0.5: 4 x 8 = every slot
		held = append(held, holdHandshakes(t, s, net.IPv4(127, 0, 0, byte(2+i)), 8)...)
		key := netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}).String()
		waitFor(t, "the idlers' handshakes in progress", func() bool { return s.handshakesOf(key) == 8 })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialWith(ctx, "ws://"+s.Addr().String()+"/ws", DialOptions{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 9)}})
	if err != nil {
		t.Fatalf("a player with every handshake slot held by idlers: %v; want upgraded", err)
	}
	defer c.Close(1000, "")
	if err := c.WriteMessage([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	if p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
		t.Fatalf("the player's echo: %q, %v; want \"hi\"", p, err)
	}
	if s.Shed() == 0 {
		t.Fatal("Shed() = 0; want the oldest idle handshake shed")
	}
	// The one shed is the oldest: its socket is closed.
	_ = held[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := held[0].Read(make([]byte, 1)); isTimeout(err) {
		t.Fatal("the oldest idle handshake is still open; want it shed")
	}
}

// TestAnAnsweredHandshakeHoldsNoHandshakeSlot: a client that has read its
// 101 may open its next connection at once, so by then the handshake it
// finished holds none of its address's handshake slots
// (Config.MaxHandshakesPerAddr), only a connection slot. Before, the slot
// was given back after the socket was handed to a loop, and a client
// dialling in a row on a busy machine was refused 503.
func TestAnAnsweredHandshakeHoldsNoHandshakeSlot(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHandshakesPerAddr = 1
	s := startServer(t, cfg, Handler{})
	ip := netip.MustParseAddr("127.0.0.1")
	for i := range 100 {
		c, err := Dial(context.Background(), "ws://"+s.Addr().String()+"/")
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		s.addrMu.Lock()
		var handshakes, conns int
		if u := s.addrs[ip]; u != nil {
			handshakes, conns = u.handshakes, u.conns
		}
		s.addrMu.Unlock()
		if handshakes != 0 || conns < 1 {
			t.Fatalf("dial %d: once answered, the address holds %d handshake slots and %d connection slots; want 0 and at least 1", i, handshakes, conns)
		}
		c.NetConn().Close()
	}
}
