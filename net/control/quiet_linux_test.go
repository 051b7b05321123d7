//go:build linux

package control

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// quietPair returns the two ends of a link over network ("tcp" or
// "unix"), as DialContext and Accept make them.
func quietPair(t *testing.T, network string) (dialed, accepted *Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "control.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	type result struct {
		c   *Conn
		err error
	}
	acc := make(chan result, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			acc <- result{err: err}
			return
		}
		c, err := Accept(context.Background(), nc, nil)
		acc <- result{c, err}
	}()
	dial := ln.Addr().String()
	if network == "unix" {
		dial = "unix:" + dial
	}
	d, err := DialContext(context.Background(), dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// Accept waits for the first byte to tell TLS from a frame.
	if err := d.Send(&Heartbeat{UnixMS: 1}); err != nil {
		t.Fatal(err)
	}
	r := <-acc
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close() })
	if m, err := r.c.Recv(); err != nil || m.(*Heartbeat).UnixMS != 1 {
		t.Fatalf("first frame: %v, %v", m, err)
	}
	return d, r.c
}

// socketOf returns the quietConn under a link's end, or nil.
func socketOf(c *Conn) *quietConn {
	nc := c.nc
	if pc, ok := nc.(*peekedConn); ok {
		nc = pc.Conn
	}
	q, _ := nc.(*quietConn)
	return q
}

// Both ends of a link, over TCP and over a unix socket, read and write
// without telling the scheduler: a link read through the net package
// woke sysmon and reset its poll to 20 µs (bench/RESULTS.md, "A link
// that lets sysmon sleep").
func TestLinkSocketsAreQuiet(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			d, a := quietPair(t, network)
			if socketOf(d) == nil || socketOf(a) == nil {
				t.Fatalf("dialed end %T, accepted end %T: want both on a quietConn", d.nc, a.nc)
			}
			// Frames both ways, one larger than the sockets' buffers, so
			// that a write waits for the reader (EAGAIN, then the poller).
			big := &Snapshot{Area: 7, Epoch: 1, Seq: 1, Blob: bytes.Repeat([]byte("home"), 2<<20)}
			errc := make(chan error, 1)
			go func() { errc <- d.Send(big) }()
			m, err := a.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if s := m.(*Snapshot); !bytes.Equal(s.Blob, big.Blob) {
				t.Fatalf("the snapshot arrived with %d bytes of blob, want %d the same", len(s.Blob), len(big.Blob))
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if err := a.Send(&HeartbeatAck{SentMS: 9}); err != nil {
				t.Fatal(err)
			}
			if m, err := d.Recv(); err != nil || m.(*HeartbeatAck).SentMS != 9 {
				t.Fatalf("ack: %v, %v", m, err)
			}
		})
	}
}

// A quiet socket ends as the net package's does: a deadline is a timeout,
// a closed socket net.ErrClosed, the peer's close io.EOF, its reset
// ECONNRESET, and a write to a full socket waits under its deadline.
func TestQuietConnErrors(t *testing.T) {
	pair := func(t *testing.T) (*quietConn, *net.TCPConn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		q, ok := quiet(nc).(*quietConn)
		if !ok {
			t.Fatalf("quiet(%T) is not a quietConn", nc)
		}
		t.Cleanup(func() { q.Close(); peer.Close() })
		return q, peer.(*net.TCPConn)
	}
	buf := make([]byte, 64)

	t.Run("read deadline", func(t *testing.T) {
		q, _ := pair(t)
		_ = q.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := q.Read(buf)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past its deadline: %v, want a timeout", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		q, _ := pair(t)
		done := make(chan error, 1)
		go func() { _, err := q.Read(buf); done <- err }()
		q.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read of a closed socket: %v, want net.ErrClosed", err)
		}
	})
	t.Run("peer closes", func(t *testing.T) {
		q, peer := pair(t)
		if _, err := peer.Write([]byte("last")); err != nil {
			t.Fatal(err)
		}
		peer.Close()
		got, err := io.ReadAll(q)
		if err != nil || string(got) != "last" {
			t.Fatalf("read to the end: %q, %v; want \"last\" and no error (io.EOF)", got, err)
		}
	})
	t.Run("peer resets", func(t *testing.T) {
		q, peer := pair(t)
		_ = peer.SetLinger(0)
		peer.Close()
		_, err := q.Read(buf)
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read after a reset: %v, want a read OpError of ECONNRESET", err)
		}
	})
	t.Run("write deadline", func(t *testing.T) {
		q, _ := pair(t) // the peer never reads
		if n, err := q.Write(make([]byte, 1024)); n != 1024 || err != nil {
			t.Fatalf("write of 1 KiB: %d, %v", n, err)
		}
		// However late this goroutine gets to it (the deadline may have
		// passed before the first try), the write ends with a timeout.
		_ = q.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		p := make([]byte, 64<<20)
		n, err := q.Write(p)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(p) {
			t.Fatalf("write past a full socket: %d of %d bytes, %v; want a timeout before the end", n, len(p), err)
		}
	})
	t.Run("empty read", func(t *testing.T) {
		q, _ := pair(t)
		if n, err := q.Read(nil); n != 0 || err != nil {
			t.Fatalf("empty read: %d, %v", n, err)
		}
	})
}

// A connection that is not a socket of its own is left as it is.
func TestQuietLeavesOthers(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if q := quiet(a); q != a {
		t.Fatalf("quiet(pipe) = %T, want the pipe itself", q)
	}
}
