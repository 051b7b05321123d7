// Package testport gives loopback addresses for processes started on a
// port picked for them: by tests, for processes they stop and start again
// on the same address (a director killed and restarted, a Postgres
// cluster restarted under a realm), and by the ladder, for the realm it
// runs.
//
// A port the kernel hands out for ":0" is an ephemeral one: while its
// process is down, an outgoing connection (a host dialling a director, a
// pool dialling Postgres) can be given that very port as its own end, and
// the restart fails with "address already in use". The ports here come
// from below the ephemeral range, which outgoing connections never use.
package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// first is the lowest port handed out: below it sit the well-known and
// commonly configured ones.
const first = 10000

// Loopback returns "127.0.0.1:port" for a port below the ephemeral range
// that no one listened on a moment ago.
func Loopback() (string, error) {
	low := ephemeralLow()
	for range 1000 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(first+rand.IntN(low-first)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken
		}
		ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("testport: no free port in [%d, %d)", first, low)
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	low := 32768 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > first+1000 {
				low = n
			}
		}
	}
	return low
}
