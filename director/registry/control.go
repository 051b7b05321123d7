package registry

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/store"
)

func (w *waitingConns) init() { w.byAddr = map[netip.Addr]int{} }

// admit takes a slot for nc, or reports false (its address holds its
// share); a full table sheds its oldest connection (returned for the
// caller to count and close).
func (w *waitingConns) admit(nc net.Conn, max, perAddr int) (wc, shed *waitingConn, ok bool) {
	addr := addrOf(nc.RemoteAddr())
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byAddr[addr] >= perAddr {
		return nil, nil, false
	}
	if len(w.order) >= max {
		shed = w.order[0]
		w.removeLocked(shed)
		shed.shed = true
	}
	wc = &waitingConn{nc: nc, addr: addr}
	w.order = append(w.order, wc)
	w.byAddr[addr]++
	return wc, shed, true
}

// wasShed reports whether wc was shed for a newcomer.
func (w *waitingConns) wasShed(wc *waitingConn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return wc.shed
}

// len is how many connections wait to register.
func (w *waitingConns) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.order)
}

// done gives back wc's slot (it registered, or failed).
func (w *waitingConns) done(wc *waitingConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removeLocked(wc)
}

func (w *waitingConns) removeLocked(wc *waitingConn) {
	if wc.done {
		return
	}
	wc.done = true
	for i, x := range w.order {
		if x == wc {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
	if w.byAddr[wc.addr]--; w.byAddr[wc.addr] <= 0 {
		delete(w.byAddr, wc.addr)
	}
}

// addrOf is a connection's source address (the zero Addr for a unix
// socket), IPv6 grouped by its /64 as an address's share is.
func addrOf(a net.Addr) netip.Addr {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return netip.Addr{}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// Serve accepts area hosts on ln until ctx is done.
func (r *Registry) Serve(ctx context.Context, ln net.Listener) {
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
					r.log.Error("control listener failed", "err", err)
				}
				return
			}
			// Out of file descriptors or the like: wait and go on taking
			// hosts, rather than stop for good.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if held, ok := r.logs.Allow("control accept"); ok {
				r.log.Warn("control accept failed; retrying", "err", err, "backoff", backoff, "suppressed", held)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if wc, ok := r.admit(nc); ok {
			r.links.Go(func() { r.serveHost(ctx, nc, wc) })
		}
	}
}

// ServeConn serves one control connection already accepted (the transfer
// model test's in-memory pipes, which no listener accepts).
func (r *Registry) ServeConn(ctx context.Context, nc net.Conn) {
	r.links.Add(1) // before the connection can be seen waiting to register
	defer r.links.Done()
	if wc, ok := r.admit(nc); ok {
		r.serveHost(ctx, nc, wc)
	}
}

// WaitLinks waits, at most d, for every control connection the registry
// serves to end (DropLinks ends the registered ones), with what its
// handler had queued written: the director closes its store only after.
// It reports whether they all ended.
func (r *Registry) WaitLinks(d time.Duration) bool {
	done := make(chan struct{})
	go func() { r.links.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// admit gives nc a slot among the connections waiting to register, or
// closes it (its address holds its share); a connection shed for it is
// counted, then closed (whoever sees it close sees it counted).
func (r *Registry) admit(nc net.Conn) (*waitingConn, bool) {
	wc, shed, ok := r.waiting.admit(nc, r.cfg.MaxUnregistered, r.cfg.MaxUnregisteredPerAddr)
	if !ok {
		r.refuseControl(ControlCap, nc.RemoteAddr(), fmt.Errorf("its address holds %d connections waiting to register", r.cfg.MaxUnregisteredPerAddr))
		nc.Close()
		return nil, false
	}
	if shed != nil {
		r.refuseControl(ControlShed, shed.nc.RemoteAddr(), fmt.Errorf("the oldest of %d connections waiting to register, shed for a new one", r.cfg.MaxUnregistered))
		shed.nc.Close()
	}
	return wc, true
}

// Unregistered reports how many control connections wait to register.
func (r *Registry) Unregistered() int { return r.waiting.len() }

// serveHost readies one connection (TLS when it opens with a handshake,
// see control.Accept), registers its host and reads its messages until
// the link ends.
func (r *Registry) serveHost(ctx context.Context, nc net.Conn, wc *waitingConn) {
	_ = nc.SetReadDeadline(time.Now().Add(r.cfg.RegisterTimeout))
	actx, cancel := context.WithTimeout(ctx, r.cfg.RegisterTimeout)
	c, err := control.Accept(actx, nc, r.cfg.ControlTLS)
	cancel()
	if err != nil {
		r.waiting.done(wc)
		if !r.waiting.wasShed(wc) {
			r.refuseControl(acceptRefusal(err), nc.RemoteAddr(), err)
		}
		return
	}
	defer c.Close()
	h, reg := r.registration(ctx, c, wc)
	r.waiting.done(wc)
	if h == nil {
		return
	}
	cert := ""
	if pc := c.PeerCertificate(); pc != nil {
		cert = pc.Subject.String()
	}
	r.log.Info("host registered", "host", h.ID, "name", h.Name, "ws_url", h.WSURL, "pid", h.PID, "spawned", h.cred != (store.TokenHash{}),
		"areas", len(reg.Areas), "from", c.RemoteAddr().String(), "tls", c.Secure(), "certificate", cert)
	// The link outlives a shutdown of the director's loops: hosts send
	// their final snapshots while the director stops them, and those must
	// still be written and acked.
	storeCtx := context.WithoutCancel(ctx)
	go r.sender(h)
	r.readLink(storeCtx, h, c.Recv)
}

// readLink reads h's messages with recv until its link ends, hands them
// to the link's handler (take, handleLink), and once the link ended
// handles what was read before unregistering h: a final snapshot is
// written before its host is gone. It closes h.linkDone when it returns.
func (r *Registry) readLink(storeCtx context.Context, h *Host, recv func() (control.Message, error)) {
	if h.linkDone != nil {
		defer close(h.linkDone)
	}
	work := make(chan control.Message, linkBacklogFor(h.Pool))
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		r.handleLink(storeCtx, h, work)
	}()
	for {
		msg, err := recv()
		if err != nil {
			// What was read before the link ended is handled first, as it
			// came: a final snapshot is written before its host is gone.
			close(work)
			<-handled
			if errors.Is(err, net.ErrClosed) {
				err = errors.New("link closed")
			}
			r.unregister(h, err, false)
			return
		}
		r.heard(h)
		r.take(h, work, msg)
	}
}

// linkBacklog, linkBacklogPerSlot and linkBacklogBytes bound what a
// host's link reader holds for its handler (handleLink): messages (4,096,
// or 4 per Area slot of the host's pool when that is more: a host that
// stops sends each Area's presence, final snapshot and area_closed at
// once), and the bytes of the snapshots among them (a few seconds of the
// largest host's snapshots at the store's pace).
const (
	linkBacklog        = 4096
	linkBacklogPerSlot = 4
	linkBacklogBytes   = 32 << 20
)

// linkBacklogFor is the messages a host with pool Area slots may have
// waiting for its link's handler.
func linkBacklogFor(pool int) int { return max(linkBacklog, linkBacklogPerSlot*pool) }

// take is the link reader's part of a host's message. A heartbeat is
// answered at once, whatever the handler is doing: the host's lease
// (Config.Lease) says the director hears it, and a store that writes
// slowly (a locked row, a loaded disk) must not end every session of the
// host (the reader used to wait for each snapshot's write, and a backlog
// of them held the heartbeats back past the lease). The rest goes to the
// handler in the order it came. What the host sends again finds no room
// dropped: a snapshot left unacked, counted (result "backlog"; its host
// sends it, or a newer one, again, as for one past its budget), and a
// presence, counted as refused (RefuseBacklog; the next comes within
// area.Config.PresenceEvery). An Area's final snapshot, and any other
// message (answers the director asked for, an Area's close), waits for
// room: the reader then reads nothing more, and a host that keeps a full
// backlog of those is heard no more.
func (r *Registry) take(h *Host, work chan<- control.Message, msg control.Message) {
	switch m := msg.(type) {
	case *control.Heartbeat:
		r.heartbeat(h, m)
	case *control.Presence:
		select {
		case work <- m:
		default:
			r.refuseHost(h, m.Type(), RefuseBacklog, m.Area)
		}
	case *control.Snapshot:
		size := snapshotBytes(m)
		if m.Final { // an Area's last words: never dropped
			h.backlog.Add(size)
			work <- m
			return
		}
		if h.backlog.Add(size) > linkBacklogBytes {
			h.backlog.Add(-size)
			r.backlogged(h, m)
			return
		}
		select {
		case work <- m:
		default:
			h.backlog.Add(-size)
			r.backlogged(h, m)
		}
	default:
		work <- msg
	}
}

// backlogged counts and logs a snapshot left unacked because h's backlog
// was full (see take).
func (r *Registry) backlogged(h *Host, m *control.Snapshot) {
	r.metrics.snapshots.WithLabelValues("backlog").Inc()
	if held, ok := r.logs.Allow("snapshot backlog"); ok {
		r.log.Warn("a host's snapshots wait for the store past the link's backlog; left unacked (the host sends them again)",
			"host", h.ID, "name", h.Name, "area", m.Area, "backlog_bytes", h.backlog.Load(), "suppressed", held)
	}
}

// handleLink handles h's messages from its link reader (take), in the
// order they came, until work is closed, but for snapshots: those
// already read one behind another are written together, in one
// transaction (persistGroup), and the presence reports among them (the
// host sends one with each snapshot; they change only what the registry
// holds in memory, nothing a snapshot's write reads or writes) are taken
// as they are read, ahead of that write. What is still queued once h is
// unregistered (gone) is dropped unhandled: its Areas are no longer its,
// and it sends what it must again to the director it registers with next.
func (r *Registry) handleLink(ctx context.Context, h *Host, work <-chan control.Message) {
	var group []*control.Snapshot
	var next control.Message // read behind a group of snapshots, handled after it
	for {
		msg := next
		next = nil
		if msg == nil {
			var ok bool
			if msg, ok = <-work; !ok {
				return
			}
		}
		m, ok := msg.(*control.Snapshot)
		if !ok {
			r.handleFrom(ctx, h, msg)
			continue
		}
		group = append(group[:0], m)
		size := snapshotBytes(m)
	more:
		for len(group) < groupCommitMax && size < groupCommitBytes {
			select {
			case msg, ok := <-work:
				if !ok {
					break more // closed: the next receive ends the loop
				}
				switch m := msg.(type) {
				case *control.Snapshot:
					group = append(group, m)
					size += snapshotBytes(m)
				case *control.Presence:
					r.handleFrom(ctx, h, m)
				default:
					next = msg // waits for the group's acks, as it came after them
					break more
				}
			default:
				break more
			}
		}
		select {
		case <-h.gone:
		default:
			r.persistGroup(ctx, h, group)
		}
		h.backlog.Add(-size)
		clear(group) // the blobs are not kept for the next group
	}
}

// handleFrom handles msg unless h is gone.
func (r *Registry) handleFrom(ctx context.Context, h *Host, msg control.Message) {
	select {
	case <-h.gone:
	default:
		r.handle(ctx, h, msg)
	}
}

// heartbeat takes h's heartbeat (its figures) and acks it: the host's
// lease runs on from when it sent it.
func (r *Registry) heartbeat(h *Host, m *control.Heartbeat) {
	r.mu.Lock()
	h.lastBeat, h.beat = time.Now(), *m
	r.mu.Unlock()
	r.SendSoon(h, &control.HeartbeatAck{SentMS: m.UnixMS})
}

// registration reads a connection's register, within RegisterTimeout and
// control.MaxRegisterFrameSize, and answers it, adopting the Areas the
// host still runs. It returns the registered host, or nil when the
// connection was refused (counted and logged: see refuseControl).
func (r *Registry) registration(ctx context.Context, c *control.Conn, wc *waitingConn) (*Host, *control.Register) {
	c.SetMaxFrame(control.MaxRegisterFrameSize)
	_ = c.SetReadDeadline(time.Now().Add(r.cfg.RegisterTimeout))
	msg, err := c.Recv()
	if err != nil {
		if !r.waiting.wasShed(wc) {
			r.refuseControl(recvRefusal(err), c.RemoteAddr(), err)
		}
		return nil, nil
	}
	reg, ok := msg.(*control.Register)
	if !ok {
		r.refuseControl(ControlNotReg, c.RemoteAddr(), fmt.Errorf("first message is %s", msg.Type()))
		return nil, nil
	}
	// The answer goes first: once registered, the host is in the registry
	// and others may have messages for it (a spawn, a grant), which wait
	// until it has its answer.
	send, release := c.Reserve(r.cfg.RegisterTimeout)
	defer release()
	if r.cfg.Leading != nil {
		if leading, refusal, leader := r.cfg.Leading(); !leading {
			// Only a host with credentials learns where the leader is. A
			// spawn token this director cannot check yet (it learns the
			// realm's recorded hosts once it leads) is told to try again,
			// with no address: a host its predecessor spawned comes back.
			reason := ControlBadCreds
			switch {
			case c.PeerCertificate() != nil || r.hostKeyOK(reg) || r.knownToken(reg.SpawnToken):
				reason = ControlNotLeader
			case reg.SpawnToken != "":
				reason, leader = ControlNotLeader, ""
			default:
				refusal, leader = "a valid spawn token, host key or host certificate is required", ""
			}
			r.refuseControl(reason, c.RemoteAddr(), fmt.Errorf("host %q: %s", reg.Name, refusal))
			_ = send(&control.Registered{Error: refusal, NotLeader: reason == ControlNotLeader, Leader: leader})
			return nil, nil
		}
	}
	if reg.SpawnToken != "" {
		// Leading: a spawn token of a predecessor's host is known once the
		// recorded hosts are read (Recall), which follows the leadership.
		select {
		case <-r.recalled:
		case <-time.After(r.cfg.RegisterTimeout / 2):
		}
	}
	if reg.AreasFollow > 0 && !r.areaList(c, reg) {
		return nil, nil
	}
	// Taken before the adoption, never waited for (see lockBodies).
	unlockBodies, busy := r.lockBodies(reg.Areas)
	defer unlockBodies()
	h, reason, refusal := r.register(ctx, reg, c)
	if h == nil {
		r.refuseControl(reason, c.RemoteAddr(), fmt.Errorf("host %q: %s", reg.Name, refusal))
		_ = send(&control.Registered{Error: refusal})
		return nil, nil
	}
	// What the host keeps and what it must let go of travels with the
	// answer, so that it is done before the host takes any resume.
	ans := &control.Registered{HostID: h.ID, LeaseMS: r.cfg.Lease.Milliseconds()}
	if err := r.adopt(ctx, h, reg.Areas, busy, ans); err != nil {
		// The store is out: no answer, the host registers again shortly
		// (its players play on meanwhile, within its lease).
		r.refuseControl(ControlUnavailable, c.RemoteAddr(), fmt.Errorf("host %q: its areas cannot be checked: %w", reg.Name, err))
		r.unregister(h, err, false)
		return nil, nil
	}
	if err := send(ans); err != nil {
		r.unregister(h, err, false)
		return nil, nil
	}
	r.mu.Lock()
	h.answering = false
	r.mu.Unlock()
	r.heard(h) // its heartbeats are waited for from its answer on
	_ = c.SetReadDeadline(time.Time{})
	c.SetMaxFrame(control.MaxFrameSize)
	return h, reg
}

// areaList reads the AreaList that follows reg (its AreasFollow Areas)
// into reg.Areas, past control.MaxRegisterFrameSize, once reg's
// credentials check out; one without them is left to register to refuse,
// the list unread. It reports false when the connection was refused.
func (r *Registry) areaList(c *control.Conn, reg *control.Register) bool {
	if len(reg.Areas) > 0 || reg.AreasFollow > control.MaxPoolSize {
		r.refuseControl(ControlBadRequest, c.RemoteAddr(), fmt.Errorf("host %q: %d areas inline and %d to follow", reg.Name, len(reg.Areas), reg.AreasFollow))
		return false
	}
	if !r.knownToken(reg.SpawnToken) && c.PeerCertificate() == nil && !r.hostKeyOK(reg) {
		return true
	}
	c.SetMaxFrame(control.MaxFrameSize)
	msg, err := c.Recv()
	if err != nil {
		r.refuseControl(recvRefusal(err), c.RemoteAddr(), fmt.Errorf("host %q: its area list: %w", reg.Name, err))
		return false
	}
	list, ok := msg.(*control.AreaList)
	if !ok || len(list.Areas) != reg.AreasFollow {
		r.refuseControl(ControlBadRequest, c.RemoteAddr(), fmt.Errorf("host %q: %s after a register with %d areas to follow", reg.Name, msg.Type(), reg.AreasFollow))
		return false
	}
	reg.Areas = list.Areas
	return true
}

// knownToken reports whether token is a spawn credential of this
// director or a recorded host's.
func (r *Registry) knownToken(token string) bool {
	if token == "" {
		return false
	}
	cred := store.HashToken(token)
	r.mu.Lock()
	defer r.mu.Unlock()
	_, spawned := r.spawned[cred]
	_, recorded := r.recorded[cred]
	return spawned || recorded
}

// register checks a host's credentials and records it; a refusal says
// why (reason, for the metric) and what to tell the host. A spawned host
// (a spawn token: this director's, or a recorded host of an earlier one
// coming back) has its record stored, for the directors after this one.
func (r *Registry) register(ctx context.Context, reg *control.Register, c *control.Conn) (h *Host, reason, refusal string) {
	if !strings.HasPrefix(reg.WSURL, "ws://") && !strings.HasPrefix(reg.WSURL, "wss://") {
		return nil, ControlBadRequest, "ws_url must be a ws:// or wss:// URL"
	}
	if reg.PoolSize < 1 || reg.PoolSize > control.MaxPoolSize {
		return nil, ControlBadRequest, fmt.Sprintf("pool size must be 1 to %d", control.MaxPoolSize)
	}
	var cred store.TokenHash
	var ch *child
	r.mu.Lock()
	switch {
	case reg.SpawnToken != "":
		cred = store.HashToken(reg.SpawnToken)
		ch = r.spawned[cred]
		_, recorded := r.recorded[cred]
		if ch == nil && !recorded {
			r.mu.Unlock()
			return nil, ControlBadCreds, "unknown spawn token"
		}
		delete(r.recorded, cred) // back: adopted
		for _, other := range r.hosts {
			if other.cred == cred { // the same host again (its old link not yet seen closed)
				r.mu.Unlock()
				r.unregister(other, errors.New("registered again on a new link"), false)
				r.mu.Lock()
			}
		}
	case c.PeerCertificate() != nil:
		// Mutual TLS: the handshake verified a certificate of the realm's
		// CA (ControlTLS requires one of every TLS peer).
	case r.hostKeyOK(reg):
		if !c.Secure() && !c.Local() && !r.cfg.ControlInsecure {
			r.mu.Unlock()
			return nil, ControlCleartext, "the host key came over an unencrypted link from another machine: connect over TLS (--control-tls-*), " +
				"or let such hosts in with the director's --control-insecure; rotate the host key if that link is not private"
		}
	default:
		r.mu.Unlock()
		return nil, ControlBadCreds, "a valid spawn token, host key or host certificate is required"
	}
	r.nextHost++
	h = &Host{
		ID: r.nextHost, Name: reg.Name, WSURL: reg.WSURL, Pool: reg.PoolSize, PID: reg.PID, Machine: reg.Machine,
		conn: c, cred: cred, spawned: ch != nil, gone: make(chan struct{}), linkDone: make(chan struct{}), soon: make(chan control.Message, 256),
		lastBeat: time.Now(), areas: map[store.AreaID]*Live{}, answering: true,
	}
	r.heard(h)
	r.hosts[h.ID] = h
	if ch != nil && ch.host == nil {
		ch.host = h
		close(ch.registered)
	}
	if ch != nil {
		r.hostFailure = nil // hosts can start again
	}
	r.notify()
	r.mu.Unlock()
	if cred != (store.TokenHash{}) {
		now := time.Now()
		if err := r.store.PutHost(ctx, store.HostRecord{Credential: cred, Name: reg.Name, PID: reg.PID, Machine: reg.Machine, WSURL: reg.WSURL,
			Started: now, Seen: now}); err != nil {
			r.log.Warn("record a spawned host; a director after this one would not adopt it", "host", h.ID, "err", err)
		}
	}
	return h, "", ""
}

// hostKeyOK reports whether reg presents the realm's host key.
func (r *Registry) hostKeyOK(reg *control.Register) bool {
	return reg.HostKey != "" && r.cfg.HostKey != "" && subtle.ConstantTimeCompare([]byte(reg.HostKey), []byte(r.cfg.HostKey)) == 1
}

// adopt takes back the Areas a re-registering host still runs, when the
// host shows the placement credential of the Area's current incarnation
// (the store keeps its hash with the epoch: a host with the host key but
// no credential cannot claim Areas it was never given), and puts what the
// host must do in its registration's answer: close the Areas not adopted
// (older incarnations, zombies from before a restart or a re-homing,
// claims it cannot back), and let go of the bodies of adopted Areas whose
// characters the store has elsewhere now.
//
// Its caller holds the account locks of the bodies the host reports (see
// lockBodies) while it reads the store and adopts; busy are the bodies
// whose locks a join or a crossing held: they are let go.
func (r *Registry) adopt(ctx context.Context, h *Host, refs []control.AreaRef, busy map[uint64]bool, ans *control.Registered) error {
	// The store is read first, for every Area: an outage refuses the
	// registration (the host registers again) rather than have the host
	// close Areas, or let go of bodies, that the registry could not check.
	type claim struct {
		ref       control.AreaRef
		a         store.Area
		why       string
		strangers []control.Evict
		here      []store.AccountID // its characters, as the store has them
	}
	claims := make([]claim, 0, len(refs))
	for _, ref := range refs {
		cl := claim{ref: ref}
		a, err := r.store.Area(ctx, store.AreaID(ref.Area))
		switch {
		case errors.Is(err, store.ErrUnavailable):
			return err
		case err != nil:
			cl.why = "unknown area: " + err.Error()
		case uint64(a.Epoch) != ref.Epoch:
			cl.why = fmt.Sprintf("stale incarnation (epoch %d, the store's %d)", ref.Epoch, a.Epoch)
		case ref.Placement == "" || store.HashToken(ref.Placement) != a.Placement:
			cl.why = "no valid placement credential"
			r.metrics.hostRefusals.WithLabelValues(control.TypeRegister.String(), RefuseBadPlacement).Inc()
		}
		if cl.why == "" {
			strangers, here, err := r.strangers(ctx, ref)
			if err != nil {
				return err
			}
			cl.here = here
			if !adoptEvictOff() {
				cl.strangers = strangers
				for _, acct := range ref.Accounts {
					if busy[acct] && !slices.ContainsFunc(strangers, func(e control.Evict) bool { return e.Account == acct }) {
						r.log.Info("adopt: letting go of a body whose account a join or a crossing holds", "area", ref.Area, "account", acct)
						cl.strangers = append(cl.strangers, control.Evict{Area: ref.Area, Epoch: ref.Epoch, Account: acct, Elsewhere: true})
					}
				}
			}
		}
		cl.a = a
		claims = append(claims, cl)
	}
	for _, cl := range claims {
		ref, a, why := cl.ref, cl.a, cl.why
		var plan Plan
		if why == "" && r.cfg.Plan != nil {
			plan = r.cfg.Plan(ctx, a) // what it was spawned with, as far as the store tells now
		}
		r.mu.Lock()
		if why == "" {
			if _, taken := r.areas[a.ID]; taken {
				why = "live on another host"
			}
		}
		if why == "" {
			if e, ended := r.ended[a.ID]; r.ending[a.ID] > 0 || (ended && a.Epoch <= e) {
				why = "its incarnation was ended: a character moved out of it by the door while its host was away"
			}
		}
		if why == "" {
			// The seq bound counts from when the stored seq was written (the
			// host's later ones came after it), or from the Area's creation
			// when none was.
			since := a.LastPlayed
			if since.IsZero() {
				since = a.Created
			}
			w, ht := a.W, a.H
			if plan.W > 0 {
				w, ht = plan.W, plan.H
			}
			l := &Live{ID: a.ID, Kind: a.Kind, Template: a.Template, Host: h, Epoch: a.Epoch, portals: plan.Portals, maxNPCs: plan.maxNPCs(),
				ready: make(chan struct{}), zeroSince: time.Now(), width: w, height: ht,
				seqFrom: a.Seq, seqSince: since, tickRate: r.tickRate(h), storedSeq: a.Seq}
			close(l.ready)
			window := time.Now().Add(r.grantWindow())
			for _, acct := range cl.here {
				l.know(acct, window) // its character lives here, as the store says: its body may be here
			}
			if adoptEvictOff() { // the fence removed: every body reported is believed
				for _, acct := range ref.Accounts {
					l.know(store.AccountID(acct), window)
				}
			}
			r.areas[l.ID] = l
			h.areas[l.ID] = l
			delete(r.lost, l.ID)
		}
		r.mu.Unlock()
		if why != "" {
			r.log.Warn("a re-registered host's area is not adopted; the host closes it", "host", h.ID, "area", ref.Area, "epoch", ref.Epoch, "why", why)
			ans.Close = append(ans.Close, ref.Area)
			continue
		}
		r.log.Info("adopted a live area", "host", h.ID, "area", ref.Area, "epoch", ref.Epoch)
		ans.Evict = append(ans.Evict, cl.strangers...)
	}
	return nil
}

// runs reports whether the registry has area live on h at epoch.
func (r *Registry) runs(h *Host, area uint32, epoch uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.areas[store.AreaID(area)]
	return l != nil && l.Host == h && uint64(l.Epoch) == epoch
}

// lockBodies takes the account locks of the bodies a registering host
// reports in its Areas, never waiting, and returns their release and the
// bodies whose locks it found held. The adoption runs under them: a join
// that moves one of those characters elsewhere is then wholly after it
// (its eviction finds the adopted Area). One under way (holding the lock)
// may move the character after the adoption read it here and after its
// own eviction looked: such a body is let go rather than waited for (a
// registration that waits for a join can stall the join that waits for
// it). Letting go loses nothing: the character's state is its row's, and
// its player joins again.
func (r *Registry) lockBodies(refs []control.AreaRef) (unlock func(), busy map[uint64]bool) {
	if adoptLockOff() {
		return func() {}, nil
	}
	var unlocks []func()
	taken := map[uint64]bool{}
	for _, ref := range refs {
		for _, a := range ref.Accounts {
			if taken[a] || busy[a] {
				continue
			}
			if u, ok := r.accounts.TryLock(store.AccountID(a)); ok {
				unlocks = append(unlocks, u)
				taken[a] = true
			} else {
				if busy == nil {
					busy = map[uint64]bool{}
				}
				busy[a] = true
			}
		}
	}
	return func() {
		for _, u := range slices.Backward(unlocks) {
			u()
		}
	}, busy
}

// strangers are the bodies of an adopted Area whose characters the store
// does not have in it: while the host was away, the director let them
// into other Areas (a join elsewhere could not evict them from a host it
// could not reach). here are the accounts whose characters the store has
// in the Area (they may have bodies there, or grants of an earlier
// director on their way).
func (r *Registry) strangers(ctx context.Context, ref control.AreaRef) (out []control.Evict, here []store.AccountID, err error) {
	chars, err := r.store.CharactersIn(ctx, store.AreaID(ref.Area))
	if errors.Is(err, store.ErrUnavailable) {
		return nil, nil, err
	} else if err != nil {
		// Without the store the registry cannot tell: it lets go of them
		// all, which loses nothing (their state is their row's) and binds
		// no one twice; their players join again.
		r.log.Warn("adopt: the characters of an adopted area are unknown; its bodies are let go", "area", ref.Area, "err", err)
	}
	in := map[uint64]bool{}
	for _, c := range chars {
		in[uint64(c.Account)] = true
		here = append(here, c.Account)
	}
	for _, acct := range ref.Accounts {
		if !in[acct] {
			r.log.Info("adopt: evicting a body whose character lives elsewhere now", "area", ref.Area, "account", acct)
			out = append(out, control.Evict{Area: ref.Area, Epoch: ref.Epoch, Account: acct, Elsewhere: !crossingEvictOff()})
		}
	}
	return out, here, nil
}

// handle processes one message from a registered host (heartbeats never
// come here: the link reader answers them, see take; nor do snapshots:
// handleLink writes them in groups, see persistGroup). A message about
// an Area is taken only from the host the Area was placed on, for its
// current incarnation; an answer only to what this host was asked. The
// rest is refused, counted and logged (see guard.go).
func (r *Registry) handle(ctx context.Context, h *Host, msg control.Message) {
	switch m := msg.(type) {
	case *control.AreaReady:
		reason := RefuseUnsolicited // this host was asked for no such Area
		if h.ready.Pending(store.AreaID(m.Area)) {
			var l *Live
			if l, reason = r.owned(h, m.Area, m.Epoch, true); reason == "" && !h.ready.Answer(l.ID, m) {
				reason = RefuseUnsolicited
			}
		}
		if reason != "" {
			r.refuseHost(h, m.Type(), reason, m.Area, "epoch", m.Epoch)
			if m.Error != "" {
				r.givenUp(h, m.Area, m.Epoch, true) // it failed there: no last words to expect
			}
			if m.Error == "" && !r.runs(h, m.Area, m.Epoch) {
				// The host made an incarnation live that the registry gave
				// up on (its answer came too late): closed, or it would hold
				// a place on the host that no one counts. Never the one the
				// registry has live there (an area_ready said twice).
				r.SendSoon(h, &control.CloseArea{Area: m.Area, Epoch: m.Epoch, Reason: uint16(wire.CodeAreaClosing)})
			}
		}
	case *control.GrantAck:
		if !h.grants.Answer(m.Token, m) {
			r.refuseHost(h, m.Type(), RefuseUnsolicited, m.Area)
		}
	case *control.Presence:
		r.presence(h, m)
	case *control.PortalOut:
		if r.cfg.OnPortalOut != nil {
			r.cfg.OnPortalOut(ctx, h, m)
		}
	case *control.Inspection:
		r.inspection(h, m)
	case *control.Evicted:
		if !h.evictions.Answer(evictKey{area: store.AreaID(m.Area), account: store.AccountID(m.Account)}, m) {
			r.refuseHost(h, m.Type(), RefuseUnsolicited, m.Area, "account", m.Account)
		}
	case *control.AreaClosed:
		r.areaClosed(ctx, h, m)
	default:
		r.refuseHost(h, msg.Type(), RefuseUnexpected, 0)
	}
}
