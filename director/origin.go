package director

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Cross-site requests. The API's sessions travel as bearer tokens, which
// a page of another site cannot make a browser send; but sign-up and
// login need none, and a page elsewhere could post them as a form (a
// login CSRF: the victim plays, and buys, in the attacker's account). Two
// guards, each enough on its own: a body must be declared JSON (a form or
// text/plain is refused: a cross-site page cannot send application/json
// without the browser asking first, which this API never allows), and a
// request that changes something and carries an Origin must come from this
// director's own site or one of Config.WebOrigins.

// sameSite reports whether r may change something as far as its Origin
// says: none (a program, not a page), this director's own (its Host, or
// the Host a trusted proxy says it was asked for), or a configured web
// origin.
func (d *Director) sameSite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true // these change nothing
	}
	origin := r.Header.Get("Origin")
	if origin == "" || r.Header.Get(forwardedBy) != "" {
		// No page, or another director of the realm that checked the
		// Origin itself (a page cannot add that header to a request of
		// another site's without the browser asking first, which this API
		// never allows).
		return true
	}
	if slices.Contains(d.webOrigins(), origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed page, a file) among them
	}
	return strings.EqualFold(u.Host, d.requestHost(r))
}

// requestHost is the host (and port) the client asked for: r.Host, or
// when r comes through a trusted proxy (another director of the realm, a
// load balancer), the first X-Forwarded-Host.
func (d *Director) requestHost(r *http.Request) string {
	if fh := r.Header.Get("X-Forwarded-Host"); fh != "" && d.trustedPeer(r) {
		host, _, _ := strings.Cut(fh, ",")
		return strings.TrimSpace(host)
	}
	return r.Host
}

// forwardedBy marks an API request a follower forwarded to the leader: a
// director that receives one while it follows answers 503 rather than
// forward it again (two followers each naming the other as leader, from
// a stale record, would bounce it for ever).
const forwardedBy = "Ley-Forwarded-By"

// webOrigins are the origins of the pages whose players' connections the
// realm's hosts accept (Config.WebOrigins, or this director's own).
func (d *Director) webOrigins() []string {
	if len(d.cfg.WebOrigins) > 0 {
		return d.cfg.WebOrigins
	}
	var out []string
	add := func(o string) {
		if o != "" && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	if u, err := url.Parse(d.cfg.AdvertiseHTTP); err == nil && u.Host != "" {
		add(u.Scheme + "://" + u.Host)
	}
	host, port, err := net.SplitHostPort(d.httpAddr)
	if err != nil {
		return out
	}
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())):
		// A browser on this machine names it either way.
		add("http://127.0.0.1:" + port)
		add("http://localhost:" + port)
		add("http://[::1]:" + port)
	default:
		add("http://" + net.JoinHostPort(host, port))
	}
	return out
}
