package director

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// host is a registered area host. Its fields are guarded by Director.mu,
// except conn (safe for concurrent Send).
type host struct {
	id       uint32
	name     string
	wsURL    string
	pool     int
	pid      int
	boot     uint64
	conn     *control.Conn
	child    *child // nil for a host started elsewhere (host key)
	lastBeat time.Time
	beat     control.Heartbeat
	areas    map[store.AreaID]*live
	gone     chan struct{} // closed when the host is unregistered

	// Waiters for answers, by Area or grant token.
	ready  map[store.AreaID]chan *control.AreaReady
	grants map[string]*grantWait
	closed map[store.AreaID]chan *control.AreaClosed
	// inspections waits for answers to admin inspections, by query id.
	inspections map[uint64]chan *control.Inspection
}

// grantWait waits for the ack of a grant registered in area.
type grantWait struct {
	area store.AreaID
	ch   chan *control.GrantAck
}

// serveControl accepts area hosts until ctx is done. At most
// cfg.ControlMaxUnregistered connections wait to register at once: past
// that a new one is closed at once, before anything is read or allocated
// for it.
func (d *Director) serveControl(ctx context.Context, ln net.Listener) {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				if ctx.Err() == nil {
					d.log.Error("control listener failed", "err", err)
				}
				return
			}
			// Out of file descriptors or the like: wait and go on taking
			// hosts, rather than stop for good.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if held, ok := d.logs.allow("control accept"); ok {
				d.log.Warn("control accept failed; retrying", "err", err, "backoff", backoff, "suppressed", held)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if d.unregistered.Add(1) > int64(d.cfg.ControlMaxUnregistered) {
			d.unregistered.Add(-1)
			d.refuseControl(controlCap, nc.RemoteAddr(), fmt.Errorf("%d connections are already waiting to register", d.cfg.ControlMaxUnregistered))
			nc.Close()
			continue
		}
		go d.serveHost(ctx, nc)
	}
}

// serveHost readies one connection (TLS when it opens with a handshake,
// see control.Accept), registers its host and reads its messages until
// the link ends.
func (d *Director) serveHost(ctx context.Context, nc net.Conn) {
	_ = nc.SetReadDeadline(time.Now().Add(d.cfg.ControlRegisterTimeout))
	actx, cancel := context.WithTimeout(ctx, d.cfg.ControlRegisterTimeout)
	c, err := control.Accept(actx, nc, d.cfg.ControlTLS)
	cancel()
	if err != nil {
		d.unregistered.Add(-1)
		d.refuseControl(acceptRefusal(err), nc.RemoteAddr(), err)
		return
	}
	defer c.Close()
	h, reg := d.registration(c)
	d.unregistered.Add(-1)
	if h == nil {
		return
	}
	cert := ""
	if pc := c.PeerCertificate(); pc != nil {
		cert = pc.Subject.String()
	}
	d.log.Info("host registered", "host", h.id, "name", h.name, "ws_url", h.wsURL, "pid", h.pid, "spawned", h.child != nil, "areas", len(reg.Areas),
		"from", c.RemoteAddr().String(), "tls", c.Secure(), "certificate", cert)
	// The link outlives a shutdown of the director's loops: hosts send
	// their final snapshots while the director stops them, and those must
	// still be written and acked.
	storeCtx := context.WithoutCancel(ctx)
	d.adopt(storeCtx, h, reg.Areas)
	for {
		msg, err := c.Recv()
		if err != nil {
			d.unregister(h, err)
			return
		}
		d.handle(storeCtx, h, msg)
	}
}

// registration reads a connection's register, within
// cfg.ControlRegisterTimeout and control.MaxRegisterFrameSize, and
// answers it. It returns the registered host, or nil when the connection
// was refused (counted and logged: see refuseControl).
func (d *Director) registration(c *control.Conn) (*host, *control.Register) {
	c.SetMaxFrame(control.MaxRegisterFrameSize)
	_ = c.SetReadDeadline(time.Now().Add(d.cfg.ControlRegisterTimeout))
	msg, err := c.Recv()
	if err != nil {
		d.refuseControl(recvRefusal(err), c.RemoteAddr(), err)
		return nil, nil
	}
	reg, ok := msg.(*control.Register)
	if !ok {
		d.refuseControl(controlNotReg, c.RemoteAddr(), fmt.Errorf("first message is %s", msg.Type()))
		return nil, nil
	}
	d.settle(context.Background(), min(settleWait, d.cfg.ControlRegisterTimeout/2))
	if !d.leading.Load() {
		// Only a host with credentials learns where the leader is.
		reason, refusal, leader := controlBadCreds, "a valid host key or host certificate is required", ""
		if c.PeerCertificate() != nil || d.hostKeyOK(reg) {
			reason = controlNotLeader
			refusal, leader = d.notLeader()
		}
		d.refuseControl(reason, c.RemoteAddr(), fmt.Errorf("host %q: %s", reg.Name, refusal))
		c.WriteTimeout = d.cfg.ControlRegisterTimeout
		_ = c.Send(&control.Registered{Error: refusal, NotLeader: reason == controlNotLeader, Leader: leader})
		return nil, nil
	}
	h, reason, refusal := d.register(reg, c)
	if h == nil {
		d.refuseControl(reason, c.RemoteAddr(), fmt.Errorf("host %q: %s", reg.Name, refusal))
		c.WriteTimeout = d.cfg.ControlRegisterTimeout // nobody else sends on c: it never registered
		_ = c.Send(&control.Registered{Error: refusal})
		return nil, nil
	}
	if err := c.Send(&control.Registered{HostID: h.id}); err != nil {
		d.unregister(h, err)
		return nil, nil
	}
	_ = c.SetReadDeadline(time.Time{})
	c.SetMaxFrame(control.MaxFrameSize)
	return h, reg
}

// register checks a host's credentials and records it; a refusal says
// why (reason, for the metric) and what to tell the host.
func (d *Director) register(reg *control.Register, c *control.Conn) (h *host, reason, refusal string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ch *child
	switch {
	case reg.SpawnToken != "":
		ch = d.spawnTokens[reg.SpawnToken]
		if ch == nil {
			return nil, controlBadCreds, "unknown spawn token"
		}
		delete(d.spawnTokens, reg.SpawnToken)
	case c.PeerCertificate() != nil:
		// Mutual TLS: the handshake verified a certificate of the realm's
		// CA (cfg.ControlTLS requires one of every TLS peer).
	case d.hostKeyOK(reg):
		if !c.Secure() && !c.Local() && !d.cfg.ControlInsecure {
			return nil, controlCleartext, "the host key came over an unencrypted link from another machine: connect over TLS (--control-tls-*), " +
				"or let such hosts in with the director's --control-insecure; rotate the host key if that link is not private"
		}
	default:
		return nil, controlBadCreds, "a valid spawn token, host key or host certificate is required"
	}
	if !strings.HasPrefix(reg.WSURL, "ws://") && !strings.HasPrefix(reg.WSURL, "wss://") {
		return nil, controlBadRequest, "ws_url must be a ws:// or wss:// URL"
	}
	if reg.PoolSize < 1 {
		return nil, controlBadRequest, "pool size must be positive"
	}
	d.nextHost++
	h = &host{
		id: d.nextHost, name: reg.Name, wsURL: reg.WSURL, pool: reg.PoolSize, pid: reg.PID, boot: reg.Boot,
		conn: c, child: ch, lastBeat: time.Now(), areas: map[store.AreaID]*live{}, gone: make(chan struct{}),
		ready: map[store.AreaID]chan *control.AreaReady{}, grants: map[string]*grantWait{},
		closed: map[store.AreaID]chan *control.AreaClosed{}, inspections: map[uint64]chan *control.Inspection{},
	}
	d.hosts[h.id] = h
	if ch != nil {
		ch.host = h
		close(ch.registered)
	}
	d.hostFailure = nil // hosts can start again
	d.notifyHosts()
	return h, "", ""
}

// hostKeyOK reports whether reg presents the realm's host key.
func (d *Director) hostKeyOK(reg *control.Register) bool {
	return reg.HostKey != "" && d.cfg.HostKey != "" && subtle.ConstantTimeCompare([]byte(reg.HostKey), []byte(d.cfg.HostKey)) == 1
}

// adopt takes back the Areas a re-registering host still runs, when their
// epoch is the store's current one; older incarnations (zombies from
// before a restart or a re-homing) are told to close.
func (d *Director) adopt(ctx context.Context, h *host, refs []control.AreaRef) {
	for _, ref := range refs {
		a, err := d.store.Area(ctx, store.AreaID(ref.Area))
		stale := err != nil || uint64(a.Epoch) != ref.Epoch
		var portals []control.Portal
		if !stale {
			portals = d.spawnPortals(ctx, a) // what it was spawned with, as far as the store tells now
		}
		d.mu.Lock()
		if _, taken := d.areas[store.AreaID(ref.Area)]; taken {
			stale = true
		}
		if !stale {
			// The seq bound counts from when the stored seq was written (the
			// host's later ones came after it), or from the Area's creation
			// when none was.
			since := a.LastPlayed
			if since.IsZero() {
				since = a.Created
			}
			l := &live{id: store.AreaID(ref.Area), host: h, epoch: store.Epoch(ref.Epoch), kind: a.Kind, template: a.Template, portals: portals,
				ready: make(chan struct{}), zeroSince: time.Now(),
				width: a.W, height: a.H, seqFrom: a.Seq, seqSince: since, tickRate: d.hostTickRate(h)}
			close(l.ready)
			d.areas[l.id] = l
			h.areas[l.id] = l
		}
		d.mu.Unlock()
		if stale {
			d.log.Warn("closing a stale incarnation on a re-registered host", "host", h.id, "area", ref.Area, "epoch", ref.Epoch)
			_ = h.conn.Send(&control.CloseArea{Area: ref.Area, Reason: codeAreaClosing, GraceMS: 0})
		} else {
			d.log.Info("adopted a live area", "host", h.id, "area", ref.Area, "epoch", ref.Epoch)
		}
	}
}

// unregister forgets a host whose link ended: its Areas are unregistered
// at once (a join to them re-homes them), and every waiter is failed.
func (d *Director) unregister(h *host, why error) {
	d.mu.Lock()
	if d.hosts[h.id] != h {
		d.mu.Unlock()
		return
	}
	delete(d.hosts, h.id)
	for id, l := range h.areas {
		if d.areas[id] == l {
			delete(d.areas, id)
		}
	}
	close(h.gone)
	d.notifyHosts()
	areas := len(h.areas) // h.areas is d.mu's: a crossing or join may still be placing an Area on h
	d.mu.Unlock()
	h.conn.Close()
	if errors.Is(why, net.ErrClosed) {
		why = errors.New("link closed")
	}
	d.log.Warn("host unregistered", "host", h.id, "name", h.name, "areas", areas, "why", why)
}

// handle processes one message from a registered host. A message about
// an Area is taken only from the host the Area was placed on, for its
// current incarnation; an answer only to what this host was asked. The
// rest is refused, counted and logged (see guard.go).
func (d *Director) handle(ctx context.Context, h *host, msg control.Message) {
	switch m := msg.(type) {
	case *control.Heartbeat:
		d.mu.Lock()
		h.lastBeat, h.beat = time.Now(), *m
		d.mu.Unlock()
	case *control.AreaReady:
		id := store.AreaID(m.Area)
		d.mu.Lock()
		ch, l := h.ready[id], h.areas[id]
		reason := refuseUnsolicited
		if ch != nil && l != nil {
			if reason = ""; uint64(l.epoch) != m.Epoch {
				reason = refuseStaleEpoch
			}
		}
		if reason == "" {
			delete(h.ready, id)
		}
		d.mu.Unlock()
		if reason != "" {
			d.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch)
			return
		}
		ch <- m
	case *control.GrantAck:
		d.mu.Lock()
		w := h.grants[m.Token]
		ok := w != nil && w.area == store.AreaID(m.Area)
		if ok {
			delete(h.grants, m.Token)
		}
		d.mu.Unlock()
		if !ok {
			d.refuseHost(h, m.Type(), refuseUnsolicited, m.Area)
			return
		}
		w.ch <- m
	case *control.Snapshot:
		d.persist(ctx, h, m)
	case *control.Presence:
		d.presence(h, m)
	case *control.PortalOut:
		d.portalOut(ctx, h, m)
	case *control.Inspection:
		d.inspection(h, m)
	case *control.AreaClosed:
		id := store.AreaID(m.Area)
		d.mu.Lock()
		// An epoch of 0 is a close from a host that does not send one:
		// the Area is still this host's.
		l, reason := d.ownedLocked(h, m.Area, m.Epoch, m.Epoch != 0)
		if l != nil {
			delete(h.areas, id)
			delete(d.areas, id)
		}
		ch := h.closed[id]
		delete(h.closed, id)
		d.mu.Unlock()
		if reason != "" {
			d.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "failed", m.Failed)
			return
		}
		if ch != nil {
			ch <- m
		}
		if m.Failed {
			d.counters.failures.Inc()
			d.log.Error("area failed on its host; the next join makes it live again from its last snapshot", "area", m.Area, "host", h.id, "epoch", m.Epoch, "last_acked_seq", m.Seq, "reason", m.Reason)
			return
		}
		d.log.Info("area closed", "area", m.Area, "host", h.id, "final_seq", m.Seq, "acked", m.Acked)
	default:
		d.refuseHost(h, msg.Type(), refuseUnexpected, 0)
	}
}

// persist writes an Area's snapshot and acks it. One checkSnapshot
// refuses (another host's Area, a stale incarnation, a seq past the bound,
// a character off the grid, a blob no host could load) is answered with
// an error and never reaches the store, so the sender (a zombie, or a
// broken host) stops sending it; a store failure is not acked (the host
// resends).
func (d *Director) persist(ctx context.Context, h *host, m *control.Snapshot) {
	if reason, why := d.checkSnapshot(h, m); reason != "" {
		d.counters.snapshots.WithLabelValues("refused").Inc()
		d.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch, "seq", m.Seq, "err", why)
		_ = h.conn.Send(&control.SnapshotAck{Area: m.Area, Seq: m.Seq, Error: "refused: " + reason})
		return
	}
	chars := make([]store.CharacterState, len(m.Characters))
	for i, c := range m.Characters {
		chars[i] = store.CharacterState{Account: store.AccountID(c.Account), X: c.X, Y: c.Y, State: c.State}
	}
	res, err := d.store.WriteSnapshot(ctx, store.Snapshot{
		Area: store.AreaID(m.Area), Epoch: store.Epoch(m.Epoch), Seq: store.Seq(m.Seq),
		Blob: m.Blob, Characters: chars, At: time.Now(),
	})
	switch {
	case errors.Is(err, store.ErrFenced):
		d.counters.snapshots.WithLabelValues("fenced").Inc()
		d.log.Warn("refused a snapshot from a stale incarnation", "area", m.Area, "epoch", m.Epoch, "host", h.id)
		_ = h.conn.Send(&control.SnapshotAck{Area: m.Area, Seq: m.Seq, Error: "fenced: a newer incarnation of this area exists"})
	case err != nil:
		d.counters.snapshots.WithLabelValues("error").Inc()
		d.log.Error("persist snapshot", "area", m.Area, "seq", m.Seq, "err", err)
	default:
		if res.Applied {
			d.counters.snapshots.WithLabelValues("applied").Inc()
			d.mu.Lock()
			if l := h.areas[store.AreaID(m.Area)]; l != nil {
				l.lastSnap = time.Now()
			}
			d.mu.Unlock()
		} else {
			d.counters.snapshots.WithLabelValues("stale").Inc()
		}
		_ = h.conn.Send(&control.SnapshotAck{Area: m.Area, Seq: m.Seq})
	}
}

// presence records an Area's connected peers and bound accounts, from
// the Area's host only.
func (d *Director) presence(h *host, m *control.Presence) {
	d.mu.Lock()
	l, reason := d.ownedLocked(h, m.Area, 0, false)
	if l == nil {
		d.mu.Unlock()
		d.refuseHost(h, m.Type(), reason, m.Area)
		return
	}
	defer d.mu.Unlock()
	if m.Peers > 0 {
		l.zeroSince = time.Time{}
	} else if l.zeroSince.IsZero() {
		l.zeroSince = time.Now()
	}
	l.peers = m.Peers
	l.accounts = make([]store.AccountID, len(m.Accounts))
	for i, a := range m.Accounts {
		l.accounts[i] = store.AccountID(a)
		delete(l.grants, store.AccountID(a)) // arrived: counted by presence now
	}
}

// watchHeartbeats drops hosts that stopped beating.
func (d *Director) watchHeartbeats(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var late []*host
		d.mu.Lock()
		for _, h := range d.hosts {
			if time.Since(h.lastBeat) > d.cfg.HeartbeatTimeout {
				late = append(late, h)
			}
		}
		d.mu.Unlock()
		for _, h := range late {
			d.unregister(h, errors.New("missed heartbeats"))
		}
	}
}
