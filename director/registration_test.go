package director

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

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

// TestControlBeforeRegistration (issue 12, finding 4): a control
// connection that has not registered may send a small frame only, must
// register within the deadline, and only so many may wait at once. A
// large frame closes the connection at once (its body never read), past
// the cap a new connection is closed at once, slow registrants are cut at
// the deadline, and real hosts still register.
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
	waitFor(t, "the large frame counted", func() bool { return r.metric(controlRefusals(controlFrameSize)) == 1 })

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
	waitFor(t, "no connection waiting", func() bool { return r.d.unregistered.Load() == 0 })

	// maxWaiting slow registrants (one trickles half a frame, the rest say
	// nothing) fill the cap: the next connection is closed at once.
	var slow []net.Conn
	for i := range maxWaiting {
		nc := dial()
		if i == 0 {
			nc.Write(append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 10)...))
		}
		slow = append(slow, nc)
	}
	waitFor(t, "the cap filled", func() bool { return r.d.unregistered.Load() == maxWaiting })
	over := dial()
	if !closedByPeer(over, time.Second) {
		t.Fatal("a connection past the cap is still open")
	}
	if got := r.metric(controlRefusals(controlCap)); got != 1 {
		t.Fatalf("refusals past the cap = %v; want 1", got)
	}
	if n := r.d.unregistered.Load(); n != maxWaiting {
		t.Fatalf("%d connections waiting after the refusal; want the %d slow ones", n, maxWaiting)
	}

	// The slow ones are cut at the deadline.
	for i, nc := range slow {
		if !closedByPeer(nc, 10*time.Second) {
			t.Fatalf("slow registrant %d still open after the deadline", i)
		}
	}
	waitFor(t, "the slow registrants counted", func() bool { return r.metric(controlRefusals(controlDeadline)) == maxWaiting })
	for reason, want := range map[string]float64{controlNotReg: 1, controlBadCreds: 1} {
		if got := r.metric(controlRefusals(reason)); got != want {
			t.Errorf("%s = %v; want %v", reason, got, want)
		}
	}

	// Real hosts still register: one spawned now.
	if err := r.d.spawner.startExtra(); err != nil {
		t.Fatal(err)
	}
	r.waitHosts(2)
}
