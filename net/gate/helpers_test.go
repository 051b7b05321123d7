package gate

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
)

// recorder counts callbacks and records close errors.
type recorder struct {
	opens  atomic.Int64
	closes atomic.Int64
	msgs   atomic.Int64
	mu     sync.Mutex
	errs   map[uint64][]error
	conns  map[uint64]*Conn
}

func newRecorder() *recorder {
	return &recorder{errs: map[uint64][]error{}, conns: map[uint64]*Conn{}}
}

func (r *recorder) handler(echo bool) Handler {
	return Handler{
		OnOpen: func(c *Conn) {
			r.mu.Lock()
			r.conns[c.ID()] = c
			r.mu.Unlock()
			r.opens.Add(1)
		},
		OnMessage: func(c *Conn, p []byte) {
			r.msgs.Add(1)
			if echo {
				_ = c.Send(p)
			}
		},
		OnClose: func(c *Conn, err error) {
			r.mu.Lock()
			r.errs[c.ID()] = append(r.errs[c.ID()], err)
			r.mu.Unlock()
			r.closes.Add(1)
		},
	}
}

func (r *recorder) closeErrs(id uint64) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs[id]...)
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.HandshakeTimeout = 2 * time.Second
	cfg.CloseTimeout = 500 * time.Millisecond
	cfg.Loops = 2
	return cfg
}

// writePaths runs f once per way the gate writes, with testConfig set for
// it: one io_uring submission per loop batch (the default; the test fails
// where the kernel refuses io_uring, rather than test writev twice), and
// one writev per connection; and once with paced loops (io_uring), which
// read only when their fallback goes by.
func writePaths(t *testing.T, f func(t *testing.T, base Config)) {
	for _, path := range []string{"io_uring", "writev", "paced"} {
		writev := path == "writev"
		t.Run(path, func(t *testing.T) {
			cfg := testConfig()
			cfg.Writev = writev
			if path == "paced" {
				// Paced loops with no harvester: every read waits for the
				// fallback, as when an Area host's clock stalls.
				cfg.PacedReads = 5 * time.Millisecond
			}
			if !writev {
				probe := startServer(t, cfg, Handler{})
				if got := probe.WritePath(); got != "io_uring" {
					t.Fatalf("the gate writes with %s: io_uring is refused on this machine", got)
				}
				probe.Close()
			}
			f(t, cfg)
		})
	}
}

func startServer(t testing.TB, cfg Config, h Handler) *Server {
	t.Helper()
	s, err := Listen(context.Background(), cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// rawConn is a handshaken client connection driven frame by frame.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, s *Server) *rawConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, br, _, err := ws.Dialer{}.Dial(ctx, "ws://"+s.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	if br == nil {
		br = bufio.NewReader(nc)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(15 * time.Second))
	return &rawConn{Conn: nc, br: br}
}

// frame is a client frame for raw tests.
type frame struct {
	fin      bool
	rsv      byte
	op       ws.OpCode
	payload  []byte
	unmasked bool
	length   int64 // announced length if > 0 and payload is nil
}

func (f frame) bytes() []byte {
	h := ws.Header{Fin: f.fin, Rsv: f.rsv, OpCode: f.op, Length: int64(len(f.payload)), Masked: !f.unmasked}
	if f.length > 0 {
		h.Length = f.length
	}
	if h.Masked {
		h.Mask = ws.NewMask()
	}
	var b bytesBuffer
	if err := ws.WriteHeader(&b, h); err != nil {
		panic(err)
	}
	p := append([]byte(nil), f.payload...)
	if h.Masked {
		ws.Cipher(p, h.Mask, 0)
	}
	return append(b.b, p...)
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func bin(p []byte) frame  { return frame{fin: true, op: ws.OpBinary, payload: p} }
func ping(p []byte) frame { return frame{fin: true, op: ws.OpPing, payload: p} }
func closeF(code uint16, reason string) frame {
	p := binary.BigEndian.AppendUint16(nil, code)
	return frame{fin: true, op: ws.OpClose, payload: append(p, reason...)}
}

func (r *rawConn) send(t testing.TB, fs ...frame) {
	t.Helper()
	var out []byte
	for _, f := range fs {
		out = append(out, f.bytes()...)
	}
	if _, err := r.Write(out); err != nil {
		t.Fatalf("write frames: %v", err)
	}
}

// next reads one server frame; server frames are trusted here.
func (r *rawConn) next() (ws.Header, []byte, error) {
	h, err := ws.ReadHeader(r.br)
	if err != nil {
		return h, nil, err
	}
	p := make([]byte, h.Length)
	_, err = io.ReadFull(r.br, p)
	return h, p, err
}

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + 3)
	}
	return p
}
