package testport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopbackIsBelowTheEphemeralRange: the address is bindable and its
// port is one an outgoing connection is never given.
func TestLoopbackIsBelowTheEphemeralRange(t *testing.T) {
	for range 20 {
		addr, err := Loopback()
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(port)
		if n < first || n >= ephemeralLow() {
			t.Fatalf("Loopback() = %s; want a port in [%d, %d)", addr, first, ephemeralLow())
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		ln.Close()
	}
}
