package gate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gobwas/ws"
)

// want is one expected server frame: a message/pong (op, payload) or a close
// with a code; or, with latest set, pongs answering some of the payloads
// in latest, in order, the last one always (RFC 6455 5.5.3: a server may
// answer only the latest ping it has not yet answered).
type want struct {
	op      ws.OpCode
	payload []byte
	code    uint16
	latest  [][]byte
}

func echo(p []byte) want      { return want{op: ws.OpBinary, payload: p} }
func pong(p []byte) want      { return want{op: ws.OpPong, payload: p} }
func closed(code uint16) want { return want{op: ws.OpClose, code: code} }

// pongs expects pongs for the pings with these payloads, at least the last.
func pongs(ps ...string) want {
	w := want{op: ws.OpPong}
	for _, p := range ps {
		w.latest = append(w.latest, []byte(p))
	}
	return w
}

func fragments(p []byte, size int) []frame {
	var fs []frame
	for i := 0; i < len(p); i += size {
		end := min(i+size, len(p))
		op := ws.OpContinuation
		if i == 0 {
			op = ws.OpBinary
		}
		fs = append(fs, frame{fin: end == len(p), op: op, payload: p[i:end]})
	}
	return fs
}

// TestConformance mirrors Autobahn|Testsuite cases (sections 1-7 and 9) for a
// binary-only server: text is refused with 1003, so section 6 (UTF-8 in text
// messages) is moot except for close reasons (7.5.1). The row names give the
// Autobahn case ids.
func TestConformance(t *testing.T) { writePaths(t, testConformance) }

func testConformance(t *testing.T, base Config) {
	validCodes := []uint16{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999}
	invalidCodes := []uint16{0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999, 5000, 65535}
	type row struct {
		name  string
		send  []frame
		split int // write the frames in chunks of this many bytes (0: at once)
		want  []want
	}
	rows := []row{
		{name: "1.1.1 text 0 bytes refused", send: []frame{{fin: true, op: ws.OpText}}, want: []want{closed(1003)}},
		{name: "1.1.2 text 125 bytes refused", send: []frame{{fin: true, op: ws.OpText, payload: []byte(strings.Repeat("*", 125))}}, want: []want{closed(1003)}},
		{name: "1.2.1 binary 0 bytes", send: []frame{bin(nil)}, want: []want{echo(nil)}},
		{name: "1.2.2 binary 125 bytes", send: []frame{bin(pattern(125))}, want: []want{echo(pattern(125))}},
		{name: "1.2.3 binary 126 bytes", send: []frame{bin(pattern(126))}, want: []want{echo(pattern(126))}},
		{name: "1.2.4 binary 127 bytes", send: []frame{bin(pattern(127))}, want: []want{echo(pattern(127))}},
		{name: "1.2.5 binary 128 bytes", send: []frame{bin(pattern(128))}, want: []want{echo(pattern(128))}},
		{name: "1.2.6 binary 65535 bytes", send: []frame{bin(pattern(65535))}, want: []want{echo(pattern(65535))}},
		{name: "1.2.7 binary 65536 bytes", send: []frame{bin(pattern(65536))}, want: []want{echo(pattern(65536))}},
		{name: "1.2.8 binary 65536 bytes in 997-byte chops", send: []frame{bin(pattern(65536))}, split: 997, want: []want{echo(pattern(65536))}},
		{name: "2.1 ping 0 bytes", send: []frame{ping(nil)}, want: []want{pong(nil)}},
		{name: "2.3 ping binary payload", send: []frame{ping([]byte{0, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0, 0xff})}, want: []want{pong([]byte{0, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0, 0xff})}},
		{name: "2.4 ping 125 bytes", send: []frame{ping(pattern(125))}, want: []want{pong(pattern(125))}},
		{name: "2.5 ping 126 bytes", send: []frame{ping(pattern(126))}, want: []want{closed(1002)}},
		{name: "2.6 ping 125 bytes in 1-byte chops", send: []frame{ping(pattern(125))}, split: 1, want: []want{pong(pattern(125))}},
		{name: "2.10 ten pings", send: []frame{ping([]byte("0")), ping([]byte("1")), ping([]byte("2")), ping([]byte("3")), ping([]byte("4")), ping([]byte("5")), ping([]byte("6")), ping([]byte("7")), ping([]byte("8")), ping([]byte("9"))},
			want: []want{pongs("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")}},
		{name: "3.1 RSV1 set", send: []frame{{fin: true, rsv: 4, op: ws.OpBinary, payload: []byte("x")}}, want: []want{closed(1002)}},
		{name: "3.2 RSV2 after a good message", send: []frame{bin([]byte("ok")), {fin: true, rsv: 2, op: ws.OpBinary, payload: []byte("x")}}, want: []want{echo([]byte("ok")), closed(1002)}},
		{name: "3.3 RSV3 then ping", send: []frame{{fin: true, rsv: 1, op: ws.OpBinary}, ping(nil)}, want: []want{closed(1002)}},
		{name: "3.6 RSV on ping", send: []frame{{fin: true, rsv: 6, op: ws.OpPing}}, want: []want{closed(1002)}},
		{name: "3.7 RSV on close", send: []frame{{fin: true, rsv: 7, op: ws.OpClose}}, want: []want{closed(1002)}},
		{name: "4.1.1 reserved opcode 3", send: []frame{{fin: true, op: 3}}, want: []want{closed(1002)}},
		{name: "4.1.3 message then reserved opcode 5", send: []frame{bin([]byte("a")), {fin: true, op: 5, payload: []byte("x")}, ping(nil)}, want: []want{echo([]byte("a")), closed(1002)}},
		{name: "4.2.1 reserved control opcode 11", send: []frame{{fin: true, op: 11}}, want: []want{closed(1002)}},
		{name: "4.2.5 reserved control opcode 15", send: []frame{{fin: true, op: 15, payload: []byte("x")}}, want: []want{closed(1002)}},
		{name: "5.1 fragmented ping", send: []frame{{fin: false, op: ws.OpPing, payload: []byte("a")}, {fin: true, op: ws.OpContinuation, payload: []byte("b")}}, want: []want{closed(1002)}},
		{name: "5.3 binary in 2 fragments", send: fragments([]byte("fragment1fragment2"), 9), want: []want{echo([]byte("fragment1fragment2"))}},
		{name: "5.6 fragments with interleaved ping", send: []frame{{op: ws.OpBinary, payload: []byte("frag1")}, ping([]byte("p")), {fin: true, op: ws.OpContinuation, payload: []byte("frag2")}}, want: []want{pong([]byte("p")), echo([]byte("frag1frag2"))}},
		{name: "5.9 continuation with nothing to continue", send: []frame{{fin: true, op: ws.OpContinuation, payload: []byte("x")}}, want: []want{closed(1002)}},
		{name: "5.15 fragments then stray continuation", send: append(fragments([]byte("abcd"), 2), frame{op: ws.OpContinuation, payload: []byte("e")}), want: []want{echo([]byte("abcd")), closed(1002)}},
		{name: "5.18 new binary inside fragmented message", send: []frame{{op: ws.OpBinary, payload: []byte("a")}, bin([]byte("b"))}, want: []want{closed(1002)}},
		{name: "5.19 many fragments and pings", send: []frame{{op: ws.OpBinary, payload: []byte("1")}, {op: ws.OpContinuation, payload: []byte("2")}, ping([]byte("x")), {op: ws.OpContinuation, payload: []byte("3")}, ping([]byte("y")), {fin: true, op: ws.OpContinuation, payload: []byte("4")}}, want: []want{pongs("x", "y"), echo([]byte("1234"))}},
		{name: "6.1.1 text (UTF-8 moot: text refused)", send: []frame{{fin: true, op: ws.OpText, payload: []byte("κόσμε")}}, want: []want{closed(1003)}},
		{name: "7.1.1 message then close", send: []frame{bin([]byte("hi")), closeF(1000, "")}, want: []want{echo([]byte("hi")), closed(1000)}},
		{name: "7.1.3 message after close ignored", send: []frame{closeF(1000, ""), bin([]byte("late"))}, want: []want{closed(1000)}},
		{name: "7.3.1 close empty payload", send: []frame{{fin: true, op: ws.OpClose}}, want: []want{closed(1000)}},
		{name: "7.3.2 close 1-byte payload", send: []frame{{fin: true, op: ws.OpClose, payload: []byte{3}}}, want: []want{closed(1002)}},
		{name: "7.3.4 close 123-byte reason", send: []frame{closeF(1000, strings.Repeat("r", 123))}, want: []want{closed(1000)}},
		{name: "7.3.5 close 124-byte reason (control > 125)", send: []frame{closeF(1000, strings.Repeat("r", 124))}, want: []want{closed(1002)}},
		{name: "7.5.1 close reason not UTF-8", send: []frame{closeF(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")}, want: []want{closed(1007)}},
		{name: "9.1 unmasked client frame", send: []frame{{fin: true, op: ws.OpBinary, payload: []byte("x"), unmasked: true}}, want: []want{closed(1002)}},
		{name: "9.2.1 binary 64 KiB (at MaxFrameSize)", send: []frame{bin(pattern(64 << 10))}, want: []want{echo(pattern(64 << 10))}},
		{name: "9.2.2 binary 256 KiB (over MaxFrameSize)", send: []frame{{fin: true, op: ws.OpBinary, length: 256 << 10}}, want: []want{closed(1009)}},
		{name: "9.4.1 64 KiB in 4 KiB fragments", send: fragments(pattern(64<<10), 4<<10), want: []want{echo(pattern(64 << 10))}},
		{name: "9.4.2 128 KiB in 4 KiB fragments (over MaxMessageSize)", send: fragments(pattern(128<<10), 4<<10), want: []want{closed(1009)}},
	}
	for _, code := range validCodes {
		rows = append(rows, row{name: "7.7.x valid close code " + itoa(int(code)), send: []frame{closeF(code, "")}, want: []want{closed(code)}})
	}
	for _, code := range invalidCodes {
		rows = append(rows, row{name: "7.9.x invalid close code " + itoa(int(code)), send: []frame{closeF(code, "")}, want: []want{closed(1002)}})
	}

	rec := newRecorder()
	s := startServer(t, base, rec.handler(true))
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, s)
			if tc.split > 0 {
				var out []byte
				for _, f := range tc.send {
					out = append(out, f.bytes()...)
				}
				for i := 0; i < len(out); i += tc.split {
					if _, err := c.Write(out[i:min(i+tc.split, len(out))]); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				c.send(t, tc.send...)
			}
			for i, w := range tc.want {
				h, p, err := c.next()
				if err != nil {
					t.Fatalf("frame %d: %v; want %v", i, err, w)
				}
				if w.latest != nil {
					// Pongs for some of the pings, in order, ending with the last.
					k := 0
					for {
						if h.OpCode != ws.OpPong {
							t.Fatalf("frame %d: opcode = %v; want a pong", i, h.OpCode)
						}
						for k < len(w.latest) && !bytes.Equal(w.latest[k], p) {
							k++
						}
						if k == len(w.latest) {
							t.Fatalf("frame %d: pong %q answers no ping still unanswered, in order, of %q", i, p, w.latest)
						}
						if k == len(w.latest)-1 {
							break
						}
						k++
						if h, p, err = c.next(); err != nil {
							t.Fatalf("frame %d: %v; want the pong of the last ping", i, err)
						}
					}
					continue
				}
				if h.OpCode != w.op {
					t.Fatalf("frame %d: opcode = %v; want %v (payload %q)", i, h.OpCode, w.op, p)
				}
				if w.op == ws.OpClose {
					var code uint16
					if len(p) >= 2 {
						code = binary.BigEndian.Uint16(p)
					}
					if code != w.code {
						t.Fatalf("close code = %d; want %d", code, w.code)
					}
					// Answer, then the server must end the TCP connection,
					// sending nothing more.
					c.send(t, frame{fin: true, op: ws.OpClose, payload: p[:2]})
					rest, err := io.ReadAll(c.br)
					if err != nil && !errors.Is(err, io.EOF) && !isReset(err) {
						t.Fatalf("after close: %v; want EOF", err)
					}
					if len(rest) > 0 {
						t.Fatalf("after its close frame the server sent %d more bytes: %x", len(rest), rest)
					}
					continue
				}
				if !bytes.Equal(p, w.payload) {
					t.Fatalf("frame %d: payload of %d bytes differs from the %d expected", i, len(p), len(w.payload))
				}
			}
		})
	}
	// Every connection the table opened is closed exactly once.
	s.Close()
	if o, c := rec.opens.Load(), rec.closes.Load(); o != c || o != int64(len(rows)) {
		t.Fatalf("opens = %d, closes = %d; want %d each", o, c, len(rows))
	}
	for id := range rec.conns {
		if n := len(rec.closeErrs(id)); n != 1 {
			t.Fatalf("conn %d: OnClose ran %d times; want 1", id, n)
		}
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
