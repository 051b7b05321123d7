package director

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/net/control"
)

func controlRefusals(reason string) string {
	return `ley_control_refusals_total{reason="` + reason + `"}`
}

// closedByPeer reports whether the director closed nc: a read ends in EOF
// or a reset (not in the read deadline, which is what a still open,
// silent connection gives).
func closedByPeer(nc net.Conn, within time.Duration) bool {
	_ = nc.SetReadDeadline(time.Now().Add(within))
	_, err := io.ReadAll(nc)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestControlBeforeRegistration (issue 12, finding 4; issue 29, N5): a
// control connection that has not registered may send a small frame
// only, must register within the deadline, and only so many may wait at
// once. A large frame closes the connection at once (its body never
// read); past the cap a new connection sheds the oldest waiting one, so
// strangers holding every slot cannot keep a real host from registering;
// slow registrants are cut at the deadline.
func TestControlBeforeRegistration(t *testing.T) {
	const maxWaiting = 3
	r := startRealm(t, func(c *Config) {
		c.ControlMaxUnregistered = maxWaiting
		c.ControlRegisterTimeout = 2 * time.Second
	})
	dial := func() net.Conn {
		t.Helper()
		nc, err := net.Dial("tcp", r.d.controlAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}

	// A 1 MiB frame announced before registering: closed as soon as its
	// header is read, the body never waited for.
	big := dial()
	if _, err := big.Write(binary.BigEndian.AppendUint32(nil, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if !closedByPeer(big, time.Second) {
		t.Fatal("a connection announcing a 1 MiB frame before registering is still open")
	}
	waitFor(t, "the large frame counted", func() bool { return r.metric(controlRefusals(registry.ControlFrameSize)) == 1 })

	// The first message must be a register, with valid credentials.
	notReg := dial()
	hb, _ := control.Encode(&control.Heartbeat{UnixMS: 1})
	notReg.Write(hb)
	if !closedByPeer(notReg, time.Second) {
		t.Fatal("a connection whose first message is a heartbeat is still open")
	}
	badKey, err := control.Dial(r.d.controlAddr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer badKey.Close()
	if err := badKey.Send(&control.Register{HostKey: "wrong", Name: "x", WSURL: "ws://127.0.0.1:1/ws", PoolSize: 1}); err != nil {
		t.Fatal(err)
	}
	if m, err := badKey.Recv(); err != nil || m.(*control.Registered).Error == "" {
		t.Fatalf("register with a wrong key: %#v, %v; want refused", m, err)
	}
	waitFor(t, "no connection waiting", func() bool { return r.d.registry.Unregistered() == 0 })

	// maxWaiting slow registrants (one trickles half a frame, the rest say
	// nothing) fill the cap: the next connection sheds the oldest.
	var slow []net.Conn
	for i := range maxWaiting {
		nc := dial()
		if i == 0 {
			nc.Write(append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 10)...))
		}
		slow = append(slow, nc)
		waitFor(t, "the slow registrant waiting", func() bool { return r.d.registry.Unregistered() == i+1 })
	}
	over := dial()
	if !closedByPeer(slow[0], time.Second) {
		t.Fatal("the oldest waiting connection is still open after a new one came past the cap")
	}
	if got := r.metric(controlRefusals(registry.ControlShed)); got != 1 {
		t.Fatalf("connections shed past the cap = %v; want 1", got)
	}
	if n := r.d.registry.Unregistered(); n != maxWaiting {
		t.Fatalf("%d connections waiting after the shedding; want %d", n, maxWaiting)
	}

	// While strangers hold every slot, a real host still registers: its
	// connection sheds the oldest stranger's.
	if err := r.d.spawner.StartExtra(0); err != nil {
		t.Fatal(err)
	}
	r.waitHosts(2)

	// The strangers left are cut at the deadline.
	for i, nc := range append(slow[1:], over) {
		if !closedByPeer(nc, 10*time.Second) {
			t.Fatalf("slow registrant %d still open after the deadline", i)
		}
	}
	waitFor(t, "the slow registrants counted", func() bool {
		return r.metric(controlRefusals(registry.ControlDeadline))+r.metric(controlRefusals(registry.ControlShed)) == maxWaiting+1
	})
	for reason, want := range map[string]float64{registry.ControlNotReg: 1, registry.ControlBadCreds: 1} {
		if got := r.metric(controlRefusals(reason)); got != want {
			t.Errorf("%s = %v; want %v", reason, got, want)
		}
	}
}
