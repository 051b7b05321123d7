package director

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/leyworks/ley/store"
)

// A realm may run several directors against one store (Postgres): one
// leads, the others follow, waiting in store.Lead to take over. A follower
// serves no Area and writes nothing. It answers GET /healthz and
// GET /readyz itself (ready, as a follower, while it knows a leader to
// forward to), forwards every other API request to the leader's
// advertised HTTP address, and refuses a host's registration
// with the leader's control address ("not the leader, try ..."), which
// the host follows. When the leader's store session ends (its process
// died, or it stopped) a follower leads within a moment, in a new term
// that fences every write of the old leader; hosts started elsewhere
// reconnect to it and their Areas are adopted back.

// ErrDeposed is returned by Run when the director lost its leadership
// (another director leads now): its process should exit and be started
// again, as a follower.
var ErrDeposed = errors.New("director: deposed")

// followEvery is how often a follower reads who leads.
const followEvery = 500 * time.Millisecond

// forwardDialTimeout bounds connecting to the leader to forward a
// request (its answer may take as long as a join: see front).
const forwardDialTimeout = 2 * time.Second

// errNotLeader answers an API request a follower cannot forward: no
// leader is known, or it did not answer.
var errNotLeader = apiErr(http.StatusServiceUnavailable, "NOT_LEADER",
	"this director is not the realm's leader, and no leader answers right now; try again in a moment")

// advertise returns configured, or the bound address with an unspecified
// IP replaced by the machine's hostname.
func advertise(configured, bound string) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return net.JoinHostPort(host, port)
}

// self is how this director records itself when it leads.
func (d *Director) self() store.Leader {
	httpURL := d.cfg.AdvertiseHTTP
	if httpURL == "" {
		httpURL = "http://" + advertise("", d.httpAddr)
	}
	ctl := d.cfg.AdvertiseControl
	if ctl == "" {
		if strings.HasPrefix(d.controlAddr, "unix:") {
			ctl = d.controlAddr
		} else {
			ctl = advertise("", d.controlAddr)
		}
	}
	return store.Leader{HTTP: strings.TrimSuffix(httpURL, "/"), Control: ctl}
}

// lead waits until this director leads (or ctx is done), keeping the
// record of who leads meanwhile (see follow).
func (d *Director) lead(ctx context.Context) (*store.Leadership, error) {
	fctx, stop := context.WithCancel(ctx)
	followed := make(chan struct{})
	me := d.self()
	go func() { d.follow(fctx, me); close(followed) }()
	defer func() { stop(); <-followed }()
	d.log.Info("waiting for the leadership", "http", me.HTTP, "control", me.Control)
	l, err := d.store.Lead(ctx, me)
	if err != nil {
		return nil, fmt.Errorf("lead: %w", err)
	}
	return l, nil
}

// follow reads who leads every followEvery until ctx is done, for
// forwarding and for hosts' redirections. A failed read is logged (at
// most a line a second) and leaves the last one known. A record naming
// me (this director won the lock meanwhile) is not logged as followed.
func (d *Director) follow(ctx context.Context, me store.Leader) {
	t := time.NewTicker(followEvery)
	defer t.Stop()
	var last store.Term
	for {
		ld, err := d.store.Leader(ctx)
		switch {
		case err == nil:
			d.leader.Store(&ld)
			if ld.Term != last {
				last = ld.Term
				if ld.HTTP != me.HTTP || ld.Control != me.Control {
					d.log.Info("following", "leader", ld.HTTP, "control", ld.Control, "term", ld.Term, "since", ld.Since)
				}
			}
		case errors.Is(err, store.ErrNotFound) || ctx.Err() != nil:
		default:
			if held, ok := d.logs.Allow("follow"); ok {
				d.log.Warn("cannot read who leads", "err", err, "suppressed", held)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// settleWait bounds how long a request or a registration that arrives
// while the director neither leads nor knows who does waits for one or
// the other (a director that just started, on SQLite, leads within
// milliseconds; a follower learns the leader within followEvery).
const settleWait = 3 * time.Second

// settle waits, up to max or until ctx is done, until this director
// leads or knows another leader.
func (d *Director) settle(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for !d.leading.Load() && d.otherLeader() == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// otherLeader returns the leader this follower knows of, unless it is
// this director itself (a stale record of an earlier run) or unknown.
func (d *Director) otherLeader() *store.Leader {
	ld := d.leader.Load()
	if ld == nil {
		return nil
	}
	me := d.self()
	if ld.HTTP == me.HTTP || ld.Control == me.Control {
		return nil
	}
	return ld
}

// front is the HTTP API's handler: api while this director leads, the
// forwarding to the leader while it follows (GET /healthz and
// GET /readyz are always answered here).
func (d *Director) front(api http.Handler) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = d.cfg.JoinTimeout*3 + 5*time.Second
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			api.ServeHTTP(w, r)
			return
		}
		if !d.sameSite(r) { // checked here: a forwarded request's Host is the leader's
			writeError(w, errOrigin)
			return
		}
		d.settle(r.Context(), settleWait)
		if d.leading.Load() {
			api.ServeHTTP(w, r)
			return
		}
		d.forward(w, r, tr)
	})
}

// forward sends r to the leader and its answer back (a reverse proxy),
// marking it forwarded; it answers 503 NOT_LEADER (Retry-After: 1) when
// no other leader is known, when r was forwarded already, or when the
// leader does not answer.
func (d *Director) forward(w http.ResponseWriter, r *http.Request, tr http.RoundTripper) {
	ld := d.otherLeader()
	var target *url.URL
	if ld != nil {
		target, _ = url.Parse(ld.HTTP)
	}
	if target == nil || r.Header.Get(forwardedBy) != "" {
		writeNotLeader(w)
		return
	}
	me := d.self().HTTP
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedBy, me)
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if held, ok := d.logs.Allow("forward"); ok {
				d.log.Warn("the leader did not answer a forwarded request", "leader", target.String(), "path", r.URL.Path, "err", err, "suppressed", held)
			}
			writeNotLeader(w)
		},
	}
	rp.ServeHTTP(w, r)
}

// writeNotLeader answers 503 NOT_LEADER, with Retry-After: 1.
func writeNotLeader(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeError(w, errNotLeader)
}

// notLeader is a follower's answer to a host's registration: why, and
// the leader's control address when one other than this director is
// known.
func (d *Director) notLeader() (refusal, leader string) {
	if ld := d.otherLeader(); ld != nil && ld.Control != "" {
		return "not the leader, try " + ld.Control, ld.Control
	}
	return "not the leader, and no leader is known yet: try another director", ""
}
