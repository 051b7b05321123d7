package gate

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/gobwas/ws"
)

// acceptLoop accepts TCP connections and starts one handshake goroutine per
// connection, at most Config.MaxHandshakes at a time (beyond that a new
// connection is closed at once). Handshakes block on Go's netpoller with a
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
			nc.Close()
			continue
		}
		select {
		case s.hsSlots <- struct{}{}:
		default:
			s.handshakeDone(ip, false)
			s.refused.Add(1)
			nc.Close()
			continue
		}
		s.hsWG.Add(1)
		go s.handshake(nc, ip)
	}
}

var originKey = []byte("Origin")

// handshake upgrades nc with gobwas/ws's zero-copy Upgrader under a deadline
// and a bound on the request size, then attaches it to a loop.
func (s *Server) handshake(nc net.Conn, ip netip.Addr) {
	upgraded := false
	defer func() {
		s.handshakeDone(ip, upgraded)
		<-s.hsSlots
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
	if s.closed.Load() {
		nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Time{})
	upgraded = true // the connection slot is released when it closes
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
