package gate

import (
	"net"
	"net/netip"
)

// addrUse is what one client address holds: handshakes in progress and
// open connections.
type addrUse struct {
	handshakes, conns int
}

// addrOf is the client address of a connection, or the zero Addr when it
// has none (a unix socket, a test pipe): those share one entry.
func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// admit takes a handshake slot for ip, or reports false when ip holds
// Config.MaxHandshakesPerAddr handshakes already or Config.MaxConnsPerAddr
// handshakes and connections together: the accept path sheds the address
// that crowds it, not the others.
func (s *Server) admit(ip netip.Addr) bool {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	u := s.addrs[ip]
	if u == nil {
		u = &addrUse{}
		s.addrs[ip] = u
	}
	if u.handshakes >= s.cfg.MaxHandshakesPerAddr || u.handshakes+u.conns >= s.cfg.MaxConnsPerAddr {
		s.refused.Add(1)
		if u.handshakes == 0 && u.conns == 0 {
			delete(s.addrs, ip)
		}
		return false
	}
	u.handshakes++
	return true
}

// handshakeDone gives back ip's handshake slot; upgraded, the connection
// keeps a connection slot until release.
func (s *Server) handshakeDone(ip netip.Addr, upgraded bool) {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	u := s.addrs[ip]
	if u == nil {
		return
	}
	u.handshakes--
	if upgraded {
		u.conns++
	}
	if u.handshakes == 0 && u.conns == 0 {
		delete(s.addrs, ip)
	}
}

// release gives back ip's connection slot (the connection closed).
func (s *Server) release(ip netip.Addr) {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	u := s.addrs[ip]
	if u == nil {
		return
	}
	u.conns--
	if u.handshakes == 0 && u.conns == 0 {
		delete(s.addrs, ip)
	}
}

// Refused counts the connections shed at accept because their address
// held its share of handshakes or connections (or all handshake slots
// were taken).
func (s *Server) Refused() uint64 { return s.refused.Load() }
