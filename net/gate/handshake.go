package gate

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/gobwas/ws"
)

// acceptLoop accepts TCP connections and starts one handshake goroutine per
// connection, at most Config.MaxHandshakes live at a time (beyond that a
// new connection sheds the oldest handshake, see startHandshake). Handshakes block on Go's netpoller with a
// deadline, never on an event loop, so slow clients cost a parked goroutine
// each until HandshakeTimeout and cannot delay other handshakes or traffic.
func (s *Server) acceptLoop() {
	defer s.hsWG.Done()
	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("gate: accept", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		ip := addrOf(nc.RemoteAddr())
		if !s.admit(ip) {
			s.refuse(nc, "too many connections from your address")
			continue
		}
		hs := s.startHandshake(nc)
		s.hsWG.Add(1)
		go s.handshake(nc, ip, hs)
	}
}

// refuseLingers bounds the refused connections whose answer is still
// being flushed: refusing must stay cheaper than accepting, so past it a
// refused socket is just closed.
const refuseLingers = 64

// refuseLinger is how long a refused connection may take to read its
// answer.
const refuseLinger = time.Second

// refuse answers a connection shed at accept with 503 Service Unavailable
// and Retry-After, so that a client tells "too many connections" from a
// broken network, then closes it. The answer is written without waiting
// (a new socket's send buffer is empty) and the client's request is read
// and dropped for a moment, so the close does not reset the connection
// before the answer arrives; at most refuseLingers at a time.
func (s *Server) refuse(nc net.Conn, why string) {
	select {
	case s.lingers <- struct{}{}:
	default:
		nc.Close()
		return
	}
	body := why + "\n"
	resp := "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	_ = nc.SetDeadline(time.Now().Add(refuseLinger))
	if _, err := nc.Write([]byte(resp)); err != nil {
		nc.Close()
		<-s.lingers
		return
	}
	go func() {
		defer func() { <-s.lingers }()
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		var buf [512]byte
		for {
			if _, err := nc.Read(buf[:]); err != nil {
				break
			}
		}
		nc.Close()
	}()
}

var originKey = []byte("Origin")

// handshake upgrades nc with gobwas/ws's zero-copy Upgrader under a deadline
// and a bound on the request size, then attaches it to a loop.
func (s *Server) handshake(nc net.Conn, ip netip.Addr, hs *handshaking) {
	// The address's slot this goroutine holds: a handshake slot, then,
	// from just before the 101 goes out, a connection slot, which is the
	// connection's to give back once it is attached.
	handshakeSlot, connSlot := true, false
	defer func() {
		if hs != nil {
			s.endHandshake(hs)
		}
		if handshakeSlot {
			s.handshakeDone(ip, false)
		}
		if connSlot {
			s.release(ip)
		}
		s.hsWG.Done()
	}()
	if s.closed.Load() {
		nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	u := ws.Upgrader{
		ReadBufferSize:  min(s.cfg.MaxHeaderBytes, 4096),
		WriteBufferSize: 512,
		// The handshake is over for the client once it reads the 101, and
		// it may open its next connection at once: the handshake slot
		// becomes a connection slot before the answer is written, so that
		// the next one never finds it still held (MaxHandshakesPerAddr).
		OnBeforeUpgrade: func() (ws.HandshakeHeader, error) {
			s.handshakeDone(ip, true)
			handshakeSlot, connSlot = false, true
			return nil, nil
		},
	}
	if check := s.cfg.CheckOrigin; check != nil {
		u.OnHeader = func(key, value []byte) error {
			if bytes.EqualFold(key, originKey) && !check(value) {
				return ws.RejectConnectionError(ws.RejectionStatus(403), ws.RejectionReason("origin not allowed"))
			}
			return nil
		}
	}
	rw := struct {
		io.Reader
		io.Writer
	}{&limitReader{r: nc, n: s.cfg.MaxHeaderBytes}, nc}
	if _, err := u.Upgrade(rw); err != nil {
		nc.Close()
		return
	}
	// Out of the table before the socket changes hands: a shed from now on
	// cannot pick it, and one that picked it already owns its close.
	shed := s.endHandshake(hs)
	hs = nil
	if shed || s.closed.Load() {
		nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Time{})
	connSlot = false // the connection's now: released when it closes
	s.attach(nc, ip)
}

// limitReader fails with ErrHeaderTooLarge after n bytes.
type limitReader struct {
	r io.Reader
	n int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, ErrHeaderTooLarge
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}
