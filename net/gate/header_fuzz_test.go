package gate

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/leyworks/ley/net/wire"
)

// captureConn is a net.Conn that keeps what is written to it: the real
// client's frames, for seeds.
type captureConn struct {
	net.Conn
	buf bytes.Buffer
}

func (c *captureConn) Write(p []byte) (int, error)      { return c.buf.Write(p) }
func (c *captureConn) SetWriteDeadline(time.Time) error { return nil }
func (c *captureConn) Close() error                     { return nil }

// headerSeeds returns real frames as peers send them: the client's own
// (a hello, small, 16-bit and 64-bit lengths, a ping, a pong, a close)
// and headers gobwas writes for what a hostile or broken peer sends
// (unmasked, reserved bits and opcodes, fragmented control frames, text,
// huge lengths, a length with its top bit set), each also cut short.
func headerSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	cc := &captureConn{}
	c := &ClientConn{nc: cc}
	hello, err := wire.Encode(&wire.Hello{Grant: "0123456789abcdef", JoinID: 42, Versions: []uint16{wire.Version}})
	if err != nil {
		t.Fatal(err)
	}
	for _, send := range []func() error{
		func() error { return c.WriteMessage(hello) },
		func() error { return c.WriteMessage(nil) },
		func() error { return c.WriteMessage(make([]byte, 125)) },
		func() error { return c.WriteMessage(make([]byte, 126)) },
		func() error { return c.WriteMessage(make([]byte, 10000)) },
		func() error { return c.WriteMessage(make([]byte, 70000)) },
		func() error { return c.writeFrame(ws.OpPing, []byte("ping")) },
		func() error { return c.writeFrame(ws.OpPong, nil) },
		func() error { return c.Close(CloseNormal, "bye") },
	} {
		cc.buf.Reset()
		if err := send(); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, bytes.Clone(cc.buf.Bytes()))
	}
	mask := [4]byte{1, 2, 3, 4}
	for _, h := range []ws.Header{
		{Fin: true, OpCode: ws.OpBinary, Length: 5},                                     // unmasked
		{Fin: true, OpCode: ws.OpBinary, Masked: true, Mask: mask, Rsv: 4, Length: 5},   // RSV1
		{Fin: true, OpCode: 0x3, Masked: true, Mask: mask},                              // reserved data opcode
		{Fin: true, OpCode: 0xb, Masked: true, Mask: mask},                              // reserved control opcode
		{Fin: false, OpCode: ws.OpPing, Masked: true, Mask: mask, Length: 1},            // fragmented control
		{Fin: true, OpCode: ws.OpPing, Masked: true, Mask: mask, Length: 126},           // control too long
		{Fin: true, OpCode: ws.OpText, Masked: true, Mask: mask, Length: 3},             // text
		{Fin: false, OpCode: ws.OpBinary, Masked: true, Mask: mask, Length: 10},         // first fragment
		{Fin: true, OpCode: ws.OpContinuation, Masked: true, Mask: mask, Length: 10},    // continuation
		{Fin: true, OpCode: ws.OpBinary, Masked: true, Mask: mask, Length: 64<<10 + 1},  // one past the limit
		{Fin: true, OpCode: ws.OpBinary, Masked: true, Mask: mask, Length: 1<<62 + 123}, // huge
	} {
		var b bytes.Buffer
		if err := ws.WriteHeader(&b, h); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	seeds = append(seeds, []byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4}) // a 64-bit length with its top bit set
	for _, s := range seeds[:len(seeds):len(seeds)] {
		for _, cut := range []int{1, 3, 9, 13} {
			if cut < len(s) {
				seeds = append(seeds, s[:cut])
			}
		}
	}
	return seeds
}

// FuzzFrameHeader fuzzes the gate's parse of a frame header from a peer's
// bytes (parseHeader, what Conn.consume calls on every frame) and its
// check of the header against RFC 6455 and the limits (Conn.check). For
// every input: nothing panics; the parse allocates nothing (but the error
// of a refusal, after which the connection is failed); it agrees
// with gobwas/ws's ReadHeader on the same bytes (the same header, the same
// size, the same refusal of a length with its top bit set, "incomplete"
// exactly when gobwas runs out of bytes) and asks for more bytes on every
// cut of a complete header; the check refuses whatever gobwas's
// CheckHeader refuses (as a protocol error), accepts nothing else but
// text (1003) and sizes past the limits (1009), and whatever it accepts
// bounds what the connection buffers for the frame: the header and at
// most MaxFrameSize bytes, and at most MaxMessageSize for the message.
//
//	go test -run '^$' -fuzz FuzzFrameHeader -fuzztime 2000x ./net/gate/
func FuzzFrameHeader(f *testing.F) {
	for _, s := range headerSeeds(f) {
		f.Add(s, false, uint32(0))
		f.Add(s, true, uint32(1000))
	}
	// A frame limit under the message limit, so that each limit is one a
	// frame can break alone.
	cfg := DefaultConfig()
	cfg.MaxFrameSize, cfg.MaxMessageSize = 4<<10, 64<<10
	assembled := make([]byte, cfg.MaxMessageSize) // backs the simulated message in reassembly
	f.Fuzz(func(t *testing.T, b []byte, fragmented bool, prior uint32) {
		h, n, ok, err := parseHeader(b)
		if allocs := testing.AllocsPerRun(1, func() { _, _, _, _ = parseHeader(b) }); allocs != 0 && err == nil {
			t.Fatalf("parseHeader allocated %v times", allocs)
		}

		r := bytes.NewReader(b)
		gh, gerr := ws.ReadHeader(r)
		used := len(b) - r.Len()
		switch {
		case err != nil:
			if !errors.Is(err, ErrProtocol) || !errors.Is(gerr, ws.ErrHeaderLengthMSB) {
				t.Fatalf("parseHeader refused %x (%v); gobwas: %v", b, err, gerr)
			}
			return
		case !ok:
			if n != 0 || (gerr != io.EOF && gerr != io.ErrUnexpectedEOF) {
				t.Fatalf("parseHeader wants more of %x (n=%d); gobwas: %+v, %v", b, n, gh, gerr)
			}
			return
		case gerr != nil:
			t.Fatalf("parseHeader took %x as %+v; gobwas refused it: %v", b, h, gerr)
		case h != gh || n != used:
			t.Fatalf("parseHeader read %x as %+v (%d bytes); gobwas as %+v (%d bytes)", b, h, n, gh, used)
		case n < 2 || n > ws.MaxHeaderSize || n > len(b) || h.Length < 0:
			t.Fatalf("parseHeader read %x as %d bytes, length %d", b, n, h.Length)
		}
		for cut := range n {
			if _, cn, cok, cerr := parseHeader(b[:cut]); cok || cerr != nil || cn != 0 {
				t.Fatalf("parseHeader took the first %d bytes of a %d-byte header %x: ok=%v err=%v", cut, n, b[:n], cok, cerr)
			}
		}

		c := &Conn{srv: &Server{cfg: cfg}, fragmented: fragmented}
		if fragmented {
			c.msg = assembled[:int64(prior)%(cfg.MaxMessageSize+1)]
		}
		code, cerr := c.check(h)
		state := ws.StateServerSide
		if fragmented {
			state |= ws.StateFragmented
		}
		rfc := ws.CheckHeader(h, state)
		switch {
		case rfc != nil && (cerr == nil || code != CloseProtocolError):
			t.Fatalf("check took %+v (fragmented=%v) with code %d, err %v; gobwas refuses it: %v", h, fragmented, code, cerr, rfc)
		case rfc == nil && cerr != nil:
			text := h.OpCode == ws.OpText && code == CloseUnsupportedData && errors.Is(cerr, ErrUnsupportedData)
			big := code == CloseTooBig && errors.Is(cerr, ErrTooBig) &&
				(h.Length > cfg.MaxFrameSize || int64(len(c.msg))+h.Length > cfg.MaxMessageSize ||
					(h.OpCode == ws.OpBinary && h.Length > cfg.MaxMessageSize))
			if !text && !big {
				t.Fatalf("check refused %+v (fragmented=%v, %d bytes assembled) with %d %v; gobwas and the limits accept it", h, fragmented, len(c.msg), code, cerr)
			}
		case cerr == nil:
			if int64(n)+h.Length > ws.MaxHeaderSize+cfg.MaxFrameSize {
				t.Fatalf("check accepted a frame of %d bytes, past the %d-byte frame limit", int64(n)+h.Length, cfg.MaxFrameSize)
			}
			if (h.OpCode == ws.OpBinary || h.OpCode == ws.OpContinuation) && int64(len(c.msg))+h.Length > cfg.MaxMessageSize {
				t.Fatalf("check accepted %d more bytes onto %d assembled, past the %d-byte message limit", h.Length, len(c.msg), cfg.MaxMessageSize)
			}
			if h.OpCode == ws.OpText || !h.Masked || h.Rsv != 0 {
				t.Fatalf("check accepted %+v", h)
			}
		}
	})
}
