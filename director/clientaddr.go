package director

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/leyworks/ley/director/auth"
)

// clientAddr is the address of the request's client: its peer's, or,
// when the peer is a trusted proxy (Config.TrustedProxies: another
// director of the realm forwarding to this one, a load balancer), the
// rightmost address of its X-Forwarded-For that is not itself a trusted
// proxy (a client cannot choose it: each trusted hop appends what it saw).
// The zero Addr when the peer's address cannot be read.
func (d *Director) clientAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	addr := ap.Addr().Unmap()
	if !d.trusted(addr) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: nothing left of it can be believed
		}
		addr = hop.Unmap()
		if !d.trusted(addr) {
			return addr
		}
	}
	return addr
}

// trustedPeer reports whether r's peer is a trusted proxy.
func (d *Director) trustedPeer(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && d.trusted(ap.Addr().Unmap())
}

// trusted reports whether a is a trusted proxy's address.
func (d *Director) trusted(a netip.Addr) bool {
	for _, p := range d.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientKey is the rate limiter's key for the request's client address
// (an IPv6 client by its /64).
func (d *Director) clientKey(r *http.Request) string {
	a := d.clientAddr(r)
	if !a.IsValid() {
		return "addr:" + r.RemoteAddr
	}
	return auth.IPKey(a)
}
