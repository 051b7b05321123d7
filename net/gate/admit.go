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

// addrOf is the key a connection's client address is counted under for
// the per-address caps (see addrKey), or the zero Addr when it has none
// (a unix socket, a test pipe): those share one entry.
func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return addrKey(ip)
		}
	}
	return netip.Addr{}
}

// addrKey is what one client counts as for the per-address caps: an IPv4
// address as itself (an IPv4-mapped IPv6 address as its IPv4), an IPv6
// address as its /64 prefix, zone dropped. One IPv6 subscriber is given a
// whole /64 (RFC 6177) and picks any address of it at will: keyed on the
// exact address, one host could take every handshake slot.
func addrKey(ip netip.Addr) netip.Addr {
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip
	}
	return netip.PrefixFrom(ip, 64).Masked().Addr()
}

// admit takes a per-address handshake slot for ip (an addrKey), or
// reports false when ip holds
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
// held its share of handshakes or connections.
func (s *Server) Refused() uint64 { return s.refused.Load() }

// handshaking is one handshake in progress, in the Server's table.
type handshaking struct {
	nc         net.Conn
	prev, next *handshaking
	shed       bool // closed to make room; its goroutine is on its way out
}

// startHandshake enters nc in the handshake table. When the table holds
// Config.MaxHandshakes live handshakes already, the oldest is shed (its
// socket closed: its handshake fails at once and gives its slots back),
// so that a newcomer always gets in: idle handshakes held open to the
// timeout (slowloris) delay players, never lock them out. The per-address
// caps, checked before, keep one address from doing the shedding alone.
func (s *Server) startHandshake(nc net.Conn) *handshaking {
	hs := &handshaking{nc: nc}
	s.hsMu.Lock()
	var victim net.Conn
	if s.hsLive >= s.cfg.MaxHandshakes {
		old := s.hsHead
		for old != nil && old.shed {
			old = old.next
		}
		if old != nil {
			old.shed = true
			s.hsLive--
			victim = old.nc
		}
	}
	s.hsLive++
	hs.prev = s.hsTail
	if s.hsTail != nil {
		s.hsTail.next = hs
	} else {
		s.hsHead = hs
	}
	s.hsTail = hs
	s.hsMu.Unlock()
	if victim != nil {
		s.shed.Add(1)
		victim.Close()
	}
	return hs
}

// endHandshake takes hs out of the handshake table and reports whether
// it was shed (its socket is closed, or about to be, by the shedder).
func (s *Server) endHandshake(hs *handshaking) (shed bool) {
	s.hsMu.Lock()
	defer s.hsMu.Unlock()
	if !hs.shed {
		s.hsLive--
	}
	if hs.prev != nil {
		hs.prev.next = hs.next
	} else {
		s.hsHead = hs.next
	}
	if hs.next != nil {
		hs.next.prev = hs.prev
	} else {
		s.hsTail = hs.prev
	}
	hs.prev, hs.next, hs.nc = nil, nil, nil
	return hs.shed
}

// Shed counts the handshakes in progress closed to make room for a
// newer one because the handshake table was full (Config.MaxHandshakes).
func (s *Server) Shed() uint64 { return s.shed.Load() }
