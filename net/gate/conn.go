package gate

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gobwas/ws"
)

const (
	stateOpen    uint32 = iota // Send accepted
	stateClosing               // close frame queued; Send refused
	stateClosed                // socket closed, queues released
)

// maxIov bounds the slices handed to one writev (IOV_MAX is 1024 on Linux).
const maxIov = 512

// Conn is one upgraded WebSocket connection.
//
// Send, SendVolatile, Close, SetValue, Value, ID and RemoteAddr are safe for
// concurrent use from any goroutine and never block on the network.
//
// Locking: c.mu guards state, the reliable queue (rq, rqOff, rqBytes), the
// pending volatile frame (vol), the flush flags and value. Every other field
// is owned by the connection's owner goroutine (its event loop on Linux) and
// is touched without a lock. c.mu is a leaf lock: nothing else is acquired,
// and no callback runs, while it is held.
type Conn struct {
	id     uint64
	srv    *Server
	sh     *shard
	remote net.Addr

	state atomic.Uint32 // written under mu, read anywhere

	mu          sync.Mutex
	rq          [][]byte // reliable frames (header+payload), pooled buffers
	rqOff       int      // bytes of rq[0] already written
	rqBytes     int      // unwritten reliable bytes, for the limit
	pongAt      int      // index in rq of a pong not yet started, or -1
	vol         *Frame   // latest volatile frame not yet started
	flushQueued bool     // a flush task is queued on the owner
	blocked     bool     // socket full; waiting for EventWrite
	inBatch     bool     // in its loop's batch of writes (io_uring); loop goroutine only
	value       any
	closeErr    error
	timer       *time.Timer

	// Owner-goroutine fields.
	cur        *Frame // volatile frame being written
	curOff     int    // bytes of cur (header included) written
	curLen     int    // header + payload length of cur
	curHdr     [ws.MaxHeaderSize]byte
	curHdrN    int
	pend       []byte // unparsed inbound bytes (a partial frame); nil when idle
	need       int    // bytes the partial frame in pend needs in total
	msg        []byte // fragmented message being reassembled
	fragmented bool
	discard    bool // stop parsing input (after a protocol error or peer close)
	peerClosed bool // peer's close frame received
	flushedFin bool // our close frame fully written
	dead       bool
	hup        bool       // the peer hung up: read to the end of the stream
	ip         netip.Addr // the client address, for the per-address caps
	pingTokens float64    // control-frame bucket (Config.PingRate, PingBurst)
	pingAt     time.Time  // when the bucket was last refilled

	sys connSys
}

// ID reports the connection's server-unique id (never 0).
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr reports the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetValue attaches the owner's session value to c.
func (c *Conn) SetValue(v any) {
	c.mu.Lock()
	c.value = v
	c.mu.Unlock()
}

// Value returns the value set by SetValue, or nil.
func (c *Conn) Value() any {
	c.mu.Lock()
	v := c.value
	c.mu.Unlock()
	return v
}

// Send queues payload as one reliable binary message. It copies payload into
// a pooled buffer (the caller keeps payload), never blocks, and keeps order
// with other Sends. If the queued bytes would exceed
// Config.ReliableQueueLimit, the connection is closed with 1008, OnClose gets
// ErrSlowConsumer, and Send returns ErrSlowConsumer. On a closing or closed
// connection it returns ErrClosed.
func (c *Conn) Send(payload []byte) error {
	size := frameHeaderLen(len(payload)) + len(payload)
	c.mu.Lock()
	if c.state.Load() != stateOpen {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.rqBytes+size > c.srv.cfg.ReliableQueueLimit {
		old := c.closeLocked(ClosePolicyViolation, "slow consumer", ErrSlowConsumer)
		c.mu.Unlock()
		if old != nil {
			old.Release()
		}
		c.abort()
		return ErrSlowConsumer
	}
	b := getBuf(size)
	b = appendFrameHeader(b, ws.OpBinary, len(payload))
	b = append(b, payload...)
	c.rq = append(c.rq, b)
	c.rqBytes += size
	kick := c.wantKickLocked()
	c.mu.Unlock()
	if kick {
		c.kick()
	}
	return nil
}

// SendVolatile hands f to c as the latest volatile message (a snapshot):
// written after the reliable queue drains, and replaced (released unwritten)
// if a newer one arrives before its write started, so no backlog ever builds.
// Ownership of f passes to the gate, which releases it exactly once; on a
// closing or closed connection f is released at once. Never blocks; 0
// allocations in steady state.
func (c *Conn) SendVolatile(f *Frame) {
	c.mu.Lock()
	if c.state.Load() != stateOpen {
		c.mu.Unlock()
		f.Release()
		return
	}
	old := c.vol
	c.vol = f
	kick := c.wantKickLocked()
	c.mu.Unlock()
	if old != nil {
		old.Release()
	}
	if kick {
		c.kick()
	}
}

// Close starts the close handshake with code and reason (truncated to fit a
// control frame): queued reliable messages are written first, the pending
// volatile frame is dropped, and the socket is closed when the peer answers
// or after Config.CloseTimeout. OnClose then runs with a nil error. Close on
// a closing or closed connection does nothing. Never blocks.
func (c *Conn) Close(code uint16, reason string) {
	c.mu.Lock()
	if c.state.Load() != stateOpen {
		c.mu.Unlock()
		return
	}
	old := c.closeLocked(code, reason, nil)
	c.startTimerLocked()
	kick := c.wantKickLocked()
	c.mu.Unlock()
	if old != nil {
		old.Release()
	}
	if kick {
		c.kick()
	}
}

// wantKickLocked reports whether the caller must queue a flush. c.mu held.
func (c *Conn) wantKickLocked() bool {
	if c.flushQueued || c.blocked {
		return false
	}
	c.flushQueued = true
	return true
}

// closeLocked moves c to closing and queues a close frame; it returns the
// dropped volatile frame for the caller to release after unlocking. c.mu held.
func (c *Conn) closeLocked(code uint16, reason string, err error) *Frame {
	c.state.Store(stateClosing)
	c.closeErr = err
	if len(reason) > 123 {
		reason = reason[:123]
	}
	body := 0
	if code != CloseNoStatus {
		body = 2 + len(reason)
	}
	b := getBuf(2 + body)
	b = appendFrameHeader(b, ws.OpClose, body)
	if body > 0 {
		b = binary.BigEndian.AppendUint16(b, code)
		b = append(b, reason...)
	}
	c.rq = append(c.rq, b)
	c.rqBytes += len(b)
	old := c.vol
	c.vol = nil
	return old
}

// startTimerLocked arms the close-handshake deadline. c.mu held.
func (c *Conn) startTimerLocked() {
	if c.timer == nil {
		c.timer = time.AfterFunc(c.srv.cfg.CloseTimeout, c.closeTimeout)
	}
}

// fail closes c after a protocol violation detected by the owner: no more
// input is parsed, the close frame is flushed, then the socket lingers until
// EOF or CloseTimeout. Owner goroutine only.
func (c *Conn) fail(code uint16, err error) {
	c.discard = true
	c.mu.Lock()
	var old *Frame
	if c.state.Load() == stateOpen {
		old = c.closeLocked(code, "", err)
		c.startTimerLocked()
	}
	c.mu.Unlock()
	if old != nil {
		old.Release()
	}
	c.flush()
}

// frameHeaderLen is the size of an unmasked server frame header for n bytes.
func frameHeaderLen(n int) int {
	switch {
	case n < 126:
		return 2
	case n <= 0xffff:
		return 4
	}
	return 10
}

// appendFrameHeader appends a final, unmasked frame header.
func appendFrameHeader(b []byte, op ws.OpCode, n int) []byte {
	b = append(b, 0x80|byte(op))
	switch {
	case n < 126:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
}

// parseHeader parses a frame header at the start of b without allocating.
// ok is false if b holds only part of a header.
func parseHeader(b []byte) (h ws.Header, n int, ok bool, err error) {
	if len(b) < 2 {
		return h, 0, false, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.Rsv = (b[0] & 0x70) >> 4
	h.OpCode = ws.OpCode(b[0] & 0x0f)
	h.Masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7f; l {
	case 126:
		n += 2
	case 127:
		n += 8
	default:
		h.Length = int64(l)
	}
	if h.Masked {
		n += 4
	}
	if len(b) < n {
		return h, 0, false, nil
	}
	switch b[1] & 0x7f {
	case 126:
		h.Length = int64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return h, 0, false, fmt.Errorf("%w: payload length has its most significant bit set", ErrProtocol)
		}
		h.Length = int64(u)
	}
	if h.Masked {
		copy(h.Mask[:], b[n-4:n])
	}
	return h, n, true, nil
}

// check validates h against RFC 6455 and the limits, returning the close
// code to send with the error. Owner goroutine only.
func (c *Conn) check(h ws.Header) (uint16, error) {
	cfg := &c.srv.cfg
	switch {
	case h.Rsv != 0:
		return CloseProtocolError, fmt.Errorf("%w: reserved bits set", ErrProtocol)
	case h.OpCode.IsReserved():
		return CloseProtocolError, fmt.Errorf("%w: reserved opcode %#x", ErrProtocol, byte(h.OpCode))
	case h.OpCode.IsControl() && (h.Length > ws.MaxControlFramePayloadSize || !h.Fin):
		return CloseProtocolError, fmt.Errorf("%w: control frame too long or fragmented", ErrProtocol)
	case !h.Masked:
		return CloseProtocolError, fmt.Errorf("%w: unmasked client frame", ErrProtocol)
	case h.OpCode == ws.OpContinuation && !c.fragmented:
		return CloseProtocolError, fmt.Errorf("%w: unexpected continuation frame", ErrProtocol)
	case (h.OpCode == ws.OpBinary || h.OpCode == ws.OpText) && c.fragmented:
		return CloseProtocolError, fmt.Errorf("%w: data frame inside a fragmented message", ErrProtocol)
	case h.OpCode == ws.OpText:
		return CloseUnsupportedData, ErrUnsupportedData
	case h.Length > cfg.MaxFrameSize:
		return CloseTooBig, fmt.Errorf("%w: frame of %d bytes", ErrTooBig, h.Length)
	case h.OpCode == ws.OpBinary && h.Length > cfg.MaxMessageSize,
		h.OpCode == ws.OpContinuation && int64(len(c.msg))+h.Length > cfg.MaxMessageSize:
		return CloseTooBig, fmt.Errorf("%w: message over %d bytes", ErrTooBig, cfg.MaxMessageSize)
	}
	return 0, nil
}

// consume parses and handles the complete frames at the start of b
// (unmasking them in place) and returns how many bytes it used. It sets
// c.need to the total size of the incomplete frame that remains, if any.
// Owner goroutine only.
func (c *Conn) consume(b []byte) int {
	off := 0
	c.need = 0
	for !c.discard && !c.dead {
		h, hn, ok, err := parseHeader(b[off:])
		if err != nil {
			c.fail(CloseProtocolError, err)
			return len(b)
		}
		if !ok {
			c.need = ws.MaxHeaderSize
			break
		}
		if code, err := c.check(h); err != nil {
			if code == CloseTooBig && c.srv.h.OnTooBig != nil {
				// The application's last word (queued before the close
				// frame): the oversized message itself is never read.
				c.srv.h.OnTooBig(c, c.srv.cfg.MaxMessageSize)
			}
			c.fail(code, err)
			return len(b)
		}
		total := hn + int(h.Length)
		if len(b)-off < total {
			c.need = total
			break
		}
		p := b[off+hn : off+total]
		ws.Cipher(p, h.Mask, 0)
		off += total
		c.handleFrame(h, p)
	}
	if c.discard {
		return len(b)
	}
	return off
}

// handleFrame acts on one complete, valid, unmasked frame. Owner only.
func (c *Conn) handleFrame(h ws.Header, p []byte) {
	switch h.OpCode {
	case ws.OpBinary:
		if h.Fin {
			c.deliver(p)
			return
		}
		c.fragmented = true
		c.msg = growBuf(c.msg, len(p))
		c.msg = append(c.msg, p...)
	case ws.OpContinuation:
		c.msg = growBuf(c.msg, len(c.msg)+len(p))
		c.msg = append(c.msg, p...)
		if h.Fin {
			c.fragmented = false
			c.deliver(c.msg)
			putBuf(c.msg)
			c.msg = nil
		}
	case ws.OpPing:
		if c.controlFlood() {
			return
		}
		c.pong(p)
	case ws.OpPong:
		c.controlFlood()
	case ws.OpClose:
		c.peerClose(p)
	}
}

func (c *Conn) deliver(p []byte) {
	if c.state.Load() == stateOpen && c.srv.h.OnMessage != nil {
		c.srv.h.OnMessage(c, p)
	}
}

// controlFlood spends one token of the control-frame bucket; a peer past
// it is closed 1008 and controlFlood reports true. Owner only.
func (c *Conn) controlFlood() bool {
	now := time.Now()
	cfg := &c.srv.cfg
	c.pingTokens = min(float64(cfg.PingBurst), c.pingTokens+now.Sub(c.pingAt).Seconds()*cfg.PingRate)
	c.pingAt = now
	if c.pingTokens >= 1 {
		c.pingTokens--
		return false
	}
	c.fail(ClosePolicyViolation, fmt.Errorf("%w: control frames over %v a second", ErrFlood, cfg.PingRate))
	return true
}

// pong answers a ping. A pong still waiting in the queue is replaced by
// this one (RFC 6455 5.5.3 allows answering only the latest ping), so that
// pings never queue more than one pong; it counts against the reliable
// queue's limit like any frame. Owner only.
func (c *Conn) pong(p []byte) {
	c.mu.Lock()
	if c.state.Load() != stateOpen {
		c.mu.Unlock()
		return
	}
	if i := c.pongAt; i >= 0 && !(i == 0 && c.rqOff > 0) {
		b := c.rq[i]
		c.rqBytes -= len(b)
		b = appendFrameHeader(b[:0], ws.OpPong, len(p))
		b = append(b, p...)
		c.rq[i] = b
		c.rqBytes += len(b)
		c.mu.Unlock()
		return
	}
	b := getBuf(2 + len(p))
	b = appendFrameHeader(b, ws.OpPong, len(p))
	b = append(b, p...)
	if c.rqBytes+len(b) > c.srv.cfg.ReliableQueueLimit {
		putBuf(b)
		old := c.closeLocked(ClosePolicyViolation, "slow consumer", ErrSlowConsumer)
		c.mu.Unlock()
		if old != nil {
			old.Release()
		}
		c.abort()
		return
	}
	c.pongAt = len(c.rq)
	c.rq = append(c.rq, b)
	c.rqBytes += len(b)
	kick := c.wantKickLocked()
	c.mu.Unlock()
	if kick {
		c.kick()
	}
}

// validCloseCode reports whether a peer may send code (RFC 6455 7.4, IANA
// registry): 1000-1003, 1007-1014, 3000-4999.
func validCloseCode(code uint16) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// peerClose handles the peer's close frame: echo its code (or answer a
// close we started), then close the socket once the echo is written.
func (c *Conn) peerClose(p []byte) {
	code := CloseNoStatus
	var reason []byte
	switch {
	case len(p) == 1:
		c.fail(CloseProtocolError, fmt.Errorf("%w: 1-byte close payload", ErrProtocol))
		return
	case len(p) >= 2:
		code = binary.BigEndian.Uint16(p)
		reason = p[2:]
		if !validCloseCode(code) {
			c.fail(CloseProtocolError, fmt.Errorf("%w: invalid close code %d", ErrProtocol, code))
			return
		}
		if !utf8.Valid(reason) {
			c.fail(CloseInvalidPayload, ErrInvalidPayload)
			return
		}
	}
	c.peerClosed = true
	c.discard = true
	c.mu.Lock()
	var old *Frame
	if c.state.Load() == stateOpen {
		echo := code
		if code == CloseNoStatus {
			echo = CloseNormal
		}
		old = c.closeLocked(echo, "", &CloseError{Code: code, Reason: string(reason)})
		c.startTimerLocked()
	}
	c.mu.Unlock()
	if old != nil {
		old.Release()
	}
	if c.flushedFin {
		c.destroy(c.closeErrValue())
		return
	}
	c.flush()
}

func (c *Conn) closeErrValue() error {
	c.mu.Lock()
	err := c.closeErr
	c.mu.Unlock()
	return err
}

// buildIov appends the bytes to write next to iov, in order: the volatile
// frame in progress, the reliable queue, then the pending volatile frame
// (promoted to cur). It reports whether cur comes first and how many queue
// entries were included. Owner goroutine, c.mu held.
func (c *Conn) buildIovLocked(iov [][]byte) ([][]byte, bool, int) {
	curFirst := c.cur != nil
	if curFirst {
		iov = c.appendCur(iov)
	}
	k := 0
	for k < len(c.rq) && len(iov) < maxIov {
		e := c.rq[k]
		if k == 0 {
			e = e[c.rqOff:]
		}
		iov = append(iov, e)
		k++
	}
	if !curFirst && k == len(c.rq) && c.vol != nil && len(iov) < maxIov {
		f := c.vol
		c.vol = nil
		c.cur = f
		c.curOff = 0
		n := f.Len()
		c.curHdrN = len(appendFrameHeader(c.curHdr[:0], ws.OpBinary, n))
		c.curLen = c.curHdrN + n
		iov = c.appendCur(iov)
	}
	return iov, curFirst, k
}

// appendCur appends the unwritten rest of cur.
func (c *Conn) appendCur(iov [][]byte) [][]byte {
	skip := c.curOff
	if skip < c.curHdrN {
		iov = append(iov, c.curHdr[skip:c.curHdrN])
		skip = 0
	} else {
		skip -= c.curHdrN
	}
	for _, p := range c.cur.Parts {
		if len(iov) >= maxIov {
			break
		}
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		iov = append(iov, p[skip:])
		skip = 0
	}
	return iov
}

// advanceLocked accounts for n written bytes of an iov built by
// buildIovLocked; it returns cur if it completed, for release after unlock.
// Owner goroutine, c.mu held.
func (c *Conn) advanceLocked(n int, curFirst bool, k int) *Frame {
	var done *Frame
	if curFirst {
		n, done = c.advanceCur(n)
	}
	i := 0
	for i < k && n > 0 {
		rem := len(c.rq[i]) - c.rqOff
		if n < rem {
			c.rqOff += n
			n = 0
			break
		}
		n -= rem
		c.rqBytes -= len(c.rq[i])
		putBuf(c.rq[i])
		c.rq[i] = nil
		c.rqOff = 0
		i++
	}
	if i > 0 {
		m := copy(c.rq, c.rq[i:])
		clear(c.rq[m:])
		c.rq = c.rq[:m]
		if c.pongAt >= 0 {
			if c.pongAt -= i; c.pongAt < 0 {
				c.pongAt = -1
			}
		}
	}
	if !curFirst && c.cur != nil && n > 0 {
		_, done = c.advanceCur(n)
	}
	return done
}

func (c *Conn) advanceCur(n int) (int, *Frame) {
	rem := c.curLen - c.curOff
	if n < rem {
		c.curOff += n
		return 0, nil
	}
	f := c.cur
	c.cur = nil
	c.curOff, c.curLen, c.curHdrN = 0, 0, 0
	if f.Delivered != nil {
		f.Delivered.Store(f.Round)
	}
	return n - rem, f
}

// releaseAll drops every queued buffer and frame; called once by destroy.
// Owner goroutine.
func (c *Conn) releaseAll() (vol *Frame) {
	c.mu.Lock()
	c.state.Store(stateClosed)
	for i, b := range c.rq {
		putBuf(b)
		c.rq[i] = nil
	}
	c.rq, c.rqOff, c.rqBytes, c.pongAt = nil, 0, 0, -1
	vol = c.vol
	c.vol = nil
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.pend != nil {
		putBuf(c.pend)
		c.pend = nil
	}
	if c.msg != nil {
		putBuf(c.msg)
		c.msg = nil
	}
	return vol
}

// growPend makes room in pend for more bytes of the frame being read, at
// most doubling what actually arrived (never trusting a declared length
// beyond that) and never past the frame's announced total size.
func (c *Conn) growPend() {
	want := max(2*cap(c.pend), class0)
	if c.need > 0 && want > c.need {
		want = c.need
	}
	if want <= len(c.pend) {
		want = len(c.pend) + class0
	}
	c.pend = growBuf(c.pend, want)
}

// keepRest stores the unparsed tail of an inbound read. fromPend says
// whether data lives in c.pend (else in the loop's shared read buffer).
func (c *Conn) keepRest(rest []byte, fromPend bool) {
	if fromPend {
		k := copy(c.pend, rest)
		c.pend = c.pend[:k]
		if k == 0 {
			putBuf(c.pend)
			c.pend = nil
		}
		return
	}
	if len(rest) == 0 {
		return
	}
	c.pend = getBuf(max(len(rest), min(c.need, class1)))
	c.pend = append(c.pend, rest...)
}
