package gate

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"sync"
	"time"

	"github.com/gobwas/ws"
)

// ClientConn is the client side of a gate connection, for tools and tests
// (tools/capacity, benchmarks). It is a plain goroutine-driven connection,
// not on the reactor.
//
// ReadMessage must be called from one goroutine at a time; WriteMessage and
// Close are safe for concurrent use with it and with each other.
type ClientConn struct {
	nc      net.Conn
	br      *bufio.Reader
	wmu     sync.Mutex
	out     []byte // the frame being written, reused; guarded by wmu
	maxSize int64
	buf     []byte
	msg     []byte
}

// Dial opens a WebSocket connection to url (ws://host:port/path) with
// gobwas/ws's dialer. ctx bounds the dial and the handshake. Inbound
// messages are limited to 64 MiB (see SetMaxMessageSize).
func Dial(ctx context.Context, url string) (*ClientConn, error) {
	return DialWith(ctx, url, DialOptions{})
}

// DialFrom is Dial from local address local (nil: any). A load driver on
// one machine spreads its connections over loopback addresses with it, so
// that the server's per-address caps see many clients, as they would be.
func DialFrom(ctx context.Context, url string, local net.Addr) (*ClientConn, error) {
	return DialWith(ctx, url, DialOptions{LocalAddr: local})
}

// DialTLS is Dial of a wss:// url whose server certificate cfg verifies
// (nil: the system's roots, for the URL's host).
func DialTLS(ctx context.Context, url string, cfg *tls.Config) (*ClientConn, error) {
	return DialWith(ctx, url, DialOptions{TLS: cfg})
}

// DialOptions are the choices of [DialWith]; the zero value is [Dial]'s.
type DialOptions struct {
	// LocalAddr is the connection's source address (nil: any). A
	// loopback LocalAddr applies only to a URL whose host is a loopback IP
	// or "localhost": the kernel refuses a loopback source for any other
	// destination (EINVAL), so a driver that spreads its players over
	// 127.0.0.0/8 still reaches hosts on other machines, from the
	// system's source address.
	LocalAddr net.Addr
	// TLS verifies the server of a wss:// URL (nil: the system's roots,
	// for the URL's host). A ws:// URL ignores it.
	TLS *tls.Config
}

// DialWith is Dial with the options o.
func DialWith(ctx context.Context, url string, o DialOptions) (*ClientConn, error) {
	d := ws.Dialer{TLSConfig: o.TLS}
	if local := sourceFor(url, o.LocalAddr); local != nil {
		nd := &net.Dialer{LocalAddr: local}
		d.NetDial = nd.DialContext
	}
	nc, br, _, err := d.Dial(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("gate: dial %s: %w", url, err)
	}
	if br == nil {
		br = bufio.NewReaderSize(nc, 4096)
	}
	return &ClientConn{nc: nc, br: br, maxSize: 64 << 20}, nil
}

// sourceFor is the source address DialWith binds for rawURL: local, but
// nil for a loopback local and a host that is not loopback.
func sourceFor(rawURL string, local net.Addr) net.Addr {
	ta, ok := local.(*net.TCPAddr)
	if !ok || ta == nil || !ta.IP.IsLoopback() {
		return local
	}
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return local // the dial reports the URL's error
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h == "localhost" || (ip != nil && ip.IsLoopback()) {
		return local
	}
	return nil
}

// SetMaxMessageSize bounds inbound messages; call before reading.
func (c *ClientConn) SetMaxMessageSize(n int64) { c.maxSize = n }

// NetConn returns the underlying connection (for deadlines).
func (c *ClientConn) NetConn() net.Conn { return c.nc }

// WriteMessage sends p as one masked binary message. It does not keep p,
// and it allocates only when p is larger than every message before it.
func (c *ClientConn) WriteMessage(p []byte) error {
	return c.writeFrame(ws.OpBinary, p)
}

func (c *ClientConn) writeFrame(op ws.OpCode, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	mask := ws.NewMask()
	out := append(c.out[:0], 0x80|byte(op))
	switch n := len(p); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = binary.BigEndian.AppendUint16(append(out, 0x80|126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 0x80|127), uint64(n))
	}
	out = append(out, mask[:]...)
	h := len(out)
	out = append(out, p...)
	ws.Cipher(out[h:], mask, 0)
	c.out = out
	_, err := c.nc.Write(out)
	return err
}

// ReadMessage returns the next binary message, answering pings on the way.
// The returned slice is valid until the next ReadMessage. A close frame from
// the server is answered and returned as *CloseError.
func (c *ClientConn) ReadMessage() ([]byte, error) {
	c.msg = c.msg[:0]
	for {
		h, err := ws.ReadHeader(c.br)
		if err != nil {
			return nil, err
		}
		if h.Length > c.maxSize || int64(len(c.msg))+h.Length > c.maxSize {
			return nil, fmt.Errorf("%w: %d bytes", ErrTooBig, h.Length)
		}
		p, err := c.readPayload(int(h.Length))
		if err != nil {
			return nil, err
		}
		switch h.OpCode {
		case ws.OpPing:
			if err := c.writeFrame(ws.OpPong, p); err != nil {
				return nil, err
			}
		case ws.OpPong:
		case ws.OpClose:
			ce := &CloseError{Code: CloseNoStatus}
			if len(p) >= 2 {
				ce.Code = binary.BigEndian.Uint16(p)
				ce.Reason = string(p[2:])
			}
			_ = c.writeFrame(ws.OpClose, p[:min(len(p), 2)])
			return nil, ce
		default:
			c.msg = append(c.msg, p...)
			if h.Fin {
				return c.msg, nil
			}
		}
	}
}

// readPayload reads n bytes, growing its buffer as bytes arrive.
func (c *ClientConn) readPayload(n int) ([]byte, error) {
	c.buf = c.buf[:0]
	for len(c.buf) < n {
		chunk := min(n-len(c.buf), 32<<10)
		if cap(c.buf)-len(c.buf) < chunk {
			nb := make([]byte, len(c.buf), len(c.buf)+max(chunk, len(c.buf)))
			copy(nb, c.buf)
			c.buf = nb
		}
		m, err := io.ReadFull(c.br, c.buf[len(c.buf):len(c.buf)+chunk])
		c.buf = c.buf[:len(c.buf)+m]
		if err != nil {
			return nil, err
		}
	}
	return c.buf, nil
}

// Close sends a close frame with code and closes the connection without
// waiting for the server's answer (bounded by a 1 s write deadline).
func (c *ClientConn) Close(code uint16, reason string) error {
	body := binary.BigEndian.AppendUint16(nil, code)
	body = append(body, reason...)
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	err := c.writeFrame(ws.OpClose, body)
	return errors.Join(err, c.nc.Close())
}
