package area

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/internal/machine"
	"github.com/leyworks/ley/internal/procself"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// New validates cfg and returns a Host; Run starts it.
func New(cfg Config) (*Host, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Host{
		cfg:     cfg,
		log:     cfg.Logger.With("role", "areahost", "host", cfg.Name),
		boot:    randomUint64(),
		areas:   make(map[uint32]*hostArea),
		grants:  make(map[string]*hostArea),
		resumes: make(map[string]*hostArea),
		expired: make(map[string]time.Time),
	}
	// Each slot first reads what the clients sent since the last
	// (Config.Gate.PacedReads): their intents wait for the tick anyway.
	clock, err := ecs.NewClock(ecs.ClockConfig{TickRate: cfg.TickRate, FrozenPollRate: 4, BeforeSlot: h.harvest})
	if err != nil {
		return nil, err
	}
	h.clock = clock
	h.link = newLink(h)
	return h, nil
}

// harvest reads what the clients sent since the last slot (the Clock's
// BeforeSlot); nothing before the gate listens.
func (h *Host) harvest() {
	if g := h.gate; g != nil {
		g.Harvest()
	}
}

// WSURL is the URL clients connect to; valid once Run has started
// listening.
func (h *Host) WSURL() string { return h.wsURL }

// Run listens for clients, registers with the director, and serves until
// ctx is done; then it closes every Area (peers get area_closing, final
// snapshots are sent and awaited, bounded) and returns nil. It returns an
// error only when the listener cannot start or the director refuses the
// registration; every other control failure is logged and survived.
func (h *Host) Run(ctx context.Context) error {
	gcfg := h.cfg.Gate
	gcfg.Addr = h.cfg.Listen
	if gcfg.PacedReads == 0 {
		// Read at the start of each tick (harvest), and on their own
		// should the clock stall for two.
		gcfg.PacedReads = 2 * h.clock.Period()
	}
	gcfg.Logger = h.log
	gcfg.CheckOrigin = originChecker(h.cfg.AllowedOrigins)
	srv, err := gate.Listen(context.Background(), gcfg, gate.Handler{
		OnOpen:    h.onOpen,
		OnMessage: h.onMessage,
		OnTooBig:  h.onTooBig,
		OnClose:   h.onClose,
	})
	if err != nil {
		return err
	}
	h.gate = srv
	h.log.Info("gate listening", "addr", srv.Addr().String(), "writes", srv.WritePath())
	h.wsURL = h.cfg.PublicURL
	if h.wsURL == "" {
		h.wsURL = "ws://" + srv.Addr().String() + "/ws"
	}
	clockCtx, stopClock := context.WithCancel(context.Background())
	clockDone := make(chan struct{})
	go func() { _ = h.clock.Run(clockCtx); close(clockDone) }()

	linkCtx, stopLink := context.WithCancel(context.Background())
	registered := make(chan struct{})
	linkErr := make(chan error, 1)
	go func() { linkErr <- h.link.run(linkCtx, registered) }()
	if lc := h.cfg.Agones; lc != nil {
		go func() {
			select {
			case <-registered:
				if err := lc.Ready(linkCtx); err != nil && linkCtx.Err() == nil {
					h.log.Error("agones: ready", "err", err)
				}
			case <-linkCtx.Done():
			}
		}()
	}

	statsCtx, stopStats := context.WithCancel(context.Background())
	defer stopStats()
	if h.cfg.TickStatsEvery > 0 {
		go h.logStats(statsCtx, h.cfg.TickStatsEvery)
	}

	orphaned := make(chan struct{})
	go h.watchLink(statsCtx, orphaned)

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-linkErr:
		runErr = err // refused registration
	case <-orphaned:
		h.log.Error("no director took this host for the orphan timeout; stopping", "orphan_timeout", h.cfg.OrphanTimeout)
	}
	if runErr == nil {
		h.shutdown()
		// The Areas' closes are queued for the director: written before
		// the link is closed, or the director would learn of the last
		// ones only when the link ends (and, for a host on another
		// machine, hold those Areas until its lease ran out).
		if h.link.up.Load() && !h.link.flush(linkFlushWait) {
			h.log.Warn("shutdown: the last messages for the director were not written in time", "wait", linkFlushWait)
		}
	}
	stopLink()
	if runErr == nil {
		<-linkErr
	}
	_ = srv.Close()
	stopClock()
	<-clockDone
	h.clock.Close()
	return runErr
}

// watchLink keeps the host's lease (see link) until ctx is done: once it
// runs out, every session ends and the host binds no one until the
// director answers again; and once no director has taken the host for
// OrphanTimeout (when set), it closes orphaned.
func (h *Host) watchLink(ctx context.Context, orphaned chan<- struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	l := h.link
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := l.now()
		if l.leaseMS.Load() > 0 {
			expired := now > l.leaseEnd.Load()
			switch {
			case expired && !l.outOfTouch.Load():
				l.outOfTouch.Store(true)
				h.log.Warn("the director has not answered for the host's lease: its sessions end, and it binds no one until the director answers",
					"lease", time.Duration(l.leaseMS.Load())*time.Millisecond, "link_up", l.up.Load())
				h.endSessions()
			case !expired && l.outOfTouch.Load():
				l.outOfTouch.Store(false)
				h.log.Info("back in touch with the director: the host binds players again")
			}
		}
		if o := h.cfg.OrphanTimeout; o > 0 && !l.up.Load() && time.Duration(now-l.downSince.Load()) > o {
			close(orphaned)
			return
		}
	}
}

// endSessions ends every bound session of every Area because the host is
// out of touch (see Host.watchLink): their bodies stay, away, for a
// resume or a join through the director.
func (h *Host) endSessions() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ha := range h.areas {
		ha.a.PostControl(func(*ecs.Area) { ha.outOfTouch() })
		ha.a.Wake()
	}
}

// linkFlushWait bounds how long a stopping host waits for its last
// messages to the director (a few thousand Areas' closes) to be written.
const linkFlushWait = 2 * time.Second

// shutdown closes every Area with the shutdown grace and waits for them to
// unload (bounded by the grace plus the final-ack timeout).
func (h *Host) shutdown() {
	h.mu.Lock()
	h.closed = true
	h.allGone = make(chan struct{})
	areas := make([]*hostArea, 0, len(h.areas))
	for _, ha := range h.areas {
		areas = append(areas, ha)
	}
	if len(areas) == 0 {
		close(h.allGone)
	}
	allGone := h.allGone
	h.mu.Unlock()
	h.log.Info("shutting down", "areas", len(areas))
	for _, ha := range areas {
		ha.a.PostControl(func(*ecs.Area) { ha.beginClose(closeCodeShutdown, h.cfg.ShutdownGrace) })
		ha.a.Wake()
	}
	select {
	case <-allGone:
	case <-time.After(h.cfg.ShutdownGrace + h.cfg.FinalAckTimeout + time.Second):
		h.log.Warn("shutdown: Areas still closing; leaving them")
	}
}

// dispatch handles one message from the director (link reader goroutine).
func (h *Host) dispatch(msg control.Message) {
	switch m := msg.(type) {
	case *control.SpawnArea:
		err := h.spawnArea(m)
		ready := &control.AreaReady{Area: m.Area, Epoch: m.Epoch}
		if err != nil {
			ready.Error = err.Error()
			h.log.Warn("spawn area refused", "area", m.Area, "err", err)
		}
		h.link.send(ready)
	case *control.Grant:
		if m.Portal {
			failpoint.Hit(failpoint.HostPortalGrant)
		}
		ha := h.indexGrant(m.Area, m.Token)
		if ha == nil {
			return
		}
		// Taken in at once (the join waits for its ack), not at the next tick.
		ha.a.PostNow(func(*ecs.Area) { ha.addGrant(m) })
		ha.a.Wake()
	case *control.Spectate:
		h.spectate(m)
	case *control.PortalResult:
		if ha := h.area(m.Area); ha != nil {
			ha.a.PostNow(func(*ecs.Area) { ha.onPortalResult(m) })
			ha.a.Wake()
		}
	case *control.SnapshotAck:
		if ha := h.area(m.Area); ha != nil {
			ha.a.PostControl(func(*ecs.Area) { ha.onAck(m) })
		}
	case *control.Evict:
		ha := h.area(m.Area)
		if ha == nil {
			h.link.send(&control.Evicted{Area: m.Area, Account: m.Account, Absent: true})
			return
		}
		// Taken in at once: a join elsewhere waits for the answer.
		ha.a.PostNow(func(*ecs.Area) { ha.evict(m) })
	case *control.HeartbeatAck:
		h.link.heartbeatAcked(m)
	case *control.Inspect:
		go h.inspect(m) // it waits for the Areas: not on the link's reader
	case *control.CloseArea:
		ha := h.area(m.Area)
		if ha == nil {
			h.link.send(&control.AreaClosed{Area: m.Area, Epoch: m.Epoch})
			return
		}
		if m.Epoch != 0 && ha.placed.Load().epoch != m.Epoch {
			return // another incarnation's close: this one is not asked to
		}
		ha.a.PostControl(func(*ecs.Area) { ha.beginClose(m.Reason, time.Duration(m.GraceMS)*time.Millisecond) })
		ha.a.Wake()
	default:
		h.log.Warn("unexpected control message", "type", msg.Type())
	}
}

func (h *Host) area(id uint32) *hostArea {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.areas[id]
}

// spawnArea makes an Area live on this host (idempotent for a live Area).
func (h *Host) spawnArea(m *control.SpawnArea) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return fmt.Errorf("host is shutting down")
	}
	if ha := h.areas[m.Area]; ha != nil {
		h.mu.Unlock()
		switch cur := ha.placed.Load().epoch; {
		case m.Epoch == cur:
			return nil // a resent spawn of the incarnation it runs
		case m.Epoch < cur:
			return fmt.Errorf("area %d: epoch %d is older than the incarnation it runs (%d)", m.Area, m.Epoch, cur)
		}
		// Another incarnation of the Area is still here (one whose
		// area_ready came too late, or one the director did not adopt):
		// the new one is made from the store's state, never from this
		// world, whose bodies the store may have elsewhere by now. The old
		// one is dropped first, unpersisted.
		done := make(chan struct{})
		ha.a.PostNow(func(*ecs.Area) {
			ha.supersede()
			close(done)
		})
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("area %d: its earlier incarnation did not let go in time", m.Area)
		}
		return h.spawnArea(m)
	}
	if len(h.areas) >= h.cfg.PoolSize {
		h.mu.Unlock()
		return fmt.Errorf("pool full (%d Areas)", h.cfg.PoolSize)
	}
	h.mu.Unlock()
	ha, err := newHostArea(h, m)
	if err != nil {
		return err
	}
	h.mu.Lock()
	if other := h.areas[m.Area]; other != nil { // a concurrent spawn won
		h.mu.Unlock()
		return nil
	}
	h.areas[m.Area] = ha
	// Under h.mu, before anyone can reach the Area: nothing spawns in it
	// while it joins.
	ha.a.JoinCensus(&h.census)
	h.areaBytes.Add(ha.bytes)
	h.mu.Unlock()
	h.clock.Add(ha.a)
	h.log.Info("area live", "area", m.Area, "epoch", m.Epoch, "kind", m.Kind, "size", fmt.Sprintf("%dx%d", m.W, m.H), "hydrated", len(m.Blob) > 0)
	return nil
}

// areaRefs lists the live Areas for a (re)registration.
func (h *Host) areaRefs() []control.AreaRef {
	h.mu.Lock()
	defer h.mu.Unlock()
	refs := make([]control.AreaRef, 0, len(h.areas))
	for _, ha := range h.areas {
		pl := ha.placed.Load()
		ref := control.AreaRef{Area: ha.id, Epoch: pl.epoch, Placement: pl.credential, Acked: ha.ackedSeen.Load()}
		if b := ha.bodiesSeen.Load(); b != nil {
			ref.Accounts = *b
		}
		refs = append(refs, ref)
	}
	return refs
}

// adopted carries out what a registration's answer says before the link
// is up: the Areas the director did not adopt close at once, and the
// bodies it let into other Areas while this host was away leave. It
// waits for the Areas to have done it (bounded), so that no resume binds
// a character the director has elsewhere.
func (h *Host) adopted(ack *control.Registered) {
	done := make(chan struct{}, len(ack.Evict))
	waiting := 0
	for _, id := range ack.Close {
		if ha := h.area(id); ha != nil {
			ha.a.PostControl(func(*ecs.Area) { ha.beginClose(uint16(wire.CodeAreaClosing), 0) })
			ha.a.Wake()
		}
	}
	for i := range ack.Evict {
		m := &ack.Evict[i]
		ha := h.area(m.Area)
		if ha == nil {
			continue
		}
		waiting++
		ha.a.PostNow(func(*ecs.Area) {
			ha.evict(m)
			done <- struct{}{}
		})
	}
	timeout := time.After(5 * time.Second)
	for range waiting {
		select {
		case <-done:
		case <-timeout:
			h.log.Warn("registration: Areas did not let go of their evicted bodies in time", "evictions", len(ack.Evict))
			return
		}
	}
}

// relinked runs after every successful registration: each Area resends its
// unacked snapshot and its presence.
func (h *Host) relinked() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ha := range h.areas {
		ha.a.PostControl(func(*ecs.Area) { ha.resend(time.Now()) })
	}
}

// heartbeat builds the periodic heartbeat (link writer goroutine); active
// is the writer's scratch list.
func (h *Host) heartbeat(active *[]*ecs.Area) *control.Heartbeat {
	hb := &control.Heartbeat{UnixMS: time.Now().UnixMilli(), Peers: int(h.peers.Load()), RSSKiB: procself.RSSBytes() / 1024,
		BytesOut: h.bytesOut.Load(), FramesOut: h.framesOut.Load(), AreaFailures: h.areaFailures.Load()}
	h.mu.Lock()
	hb.Areas = len(h.areas)
	h.mu.Unlock()
	// Totals kept as Areas come, go and spawn: a host of thousands of
	// frozen Areas visits none of them here.
	hb.Entities, hb.AreaBytes, hb.Parked = h.census.Entities(), h.areaBytes.Load(), int(h.parked.Load())
	// The heartbeat tells the slowest active Area's ticks: find it by its
	// p99 (no sort) among those the clock ticks, then ask it alone for the
	// full figures.
	var slowest *ecs.Area
	worst := time.Duration(-1)
	*active = h.clock.Active((*active)[:0])
	for _, a := range *active {
		if a.Mode() != ecs.Active {
			continue // froze since the clock's last slot
		}
		hb.Active++
		if p99 := a.TickP99(); p99 > worst {
			slowest, worst = a, p99
		}
	}
	clear(*active) // keeps no Area alive until the next beat
	if slowest != nil {
		st := slowest.Stats()
		hb.TickP50, hb.TickP95, hb.TickP99, hb.TickMax = st.P50.Microseconds(), st.P95.Microseconds(), st.P99.Microseconds(), st.Max.Microseconds()
	}
	if lc := h.cfg.Agones; lc != nil {
		lc.SetStatus(hb.Areas, hb.Peers)
	}
	return hb
}

func randomUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// logStats logs every active Area's tick stats and the host's output every
// period until ctx is done.
func (h *Host) logStats(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		areas := make([]*hostArea, 0, len(h.areas))
		for _, ha := range h.areas {
			areas = append(areas, ha)
		}
		h.mu.Unlock()
		active := 0
		for _, ha := range areas {
			st := ha.a.Stats()
			if st.Mode != ecs.Active {
				continue
			}
			active++
			var sys strings.Builder
			for i, s := range st.Systems {
				if i > 0 {
					sys.WriteByte(' ')
				}
				fmt.Fprintf(&sys, "%s=%v", s.Name, s.Mean)
			}
			h.log.Info("tick stats", "area", st.Area, "tick", st.Tick, "p50", st.P50, "p95", st.P95, "p99", st.P99, "max", st.Max,
				"late", st.Late, "entities", st.Entities, "players", st.Players, "systems", sys.String())
		}
		submits, writes := h.gate.RingStats()
		h.log.Info("host stats", "areas", len(areas), "active", active, "peers", h.peers.Load(),
			"bytes_out", h.bytesOut.Load(), "frames_out", h.framesOut.Load(), "rss_kib", procself.RSSBytes()/1024,
			"ring_submits", submits, "ring_writes", writes)
	}
}

// originChecker accepts the origins of allowed (case-insensitive, with no
// trailing slash), or any origin if allowed holds "*".
func originChecker(allowed []string) func([]byte) bool {
	set := make(map[string]bool, len(allowed))
	for _, o := range allowed {
		if o == "*" {
			return func([]byte) bool { return true }
		}
		set[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return func(origin []byte) bool { return set[strings.ToLower(string(origin))] }
}

// run keeps the link up until ctx is done, with one of the directors of
// cfg.Director: after a failure it tries the next one, and a director
// that does not lead sends it to the leader (at once, once in a row).
// The wait between attempts doubles (up to 5 s) while no director
// answers, and stays short while one answers that it does not lead. It
// returns an error wrapping ErrRegistration when a director refuses the
// host (or the host key would travel in clear text); every other failure
// is logged and retried with backoff.
func (l *link) run(ctx context.Context, registered chan<- struct{}) error {
	addrs := directors(l.h.cfg.Director)
	if len(addrs) == 0 {
		return fmt.Errorf("%w: no director address", ErrRegistration)
	}
	for _, a := range addrs {
		if err := l.checkCleartext(a); err != nil {
			return err
		}
	}
	backoff := 100 * time.Millisecond
	first := true
	next, redirect := 0, ""
	for ctx.Err() == nil {
		addr := redirect
		if addr == "" {
			addr = addrs[next%len(addrs)]
			next++
		}
		followed := redirect != ""
		redirect = ""
		err := l.session(ctx, addr, func() {
			backoff = 100 * time.Millisecond
			if first {
				first = false
				close(registered)
			}
		})
		if errors.Is(err, ErrRegistration) {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		var nl *notLeaderError
		if errors.As(err, &nl) {
			// A director answered: the realm is between leaders (or
			// this one follows), not down. Keep retrying briskly.
			backoff = 100 * time.Millisecond
		}
		if nl != nil && nl.leader != "" && nl.leader != addr && !followed {
			if cerr := l.checkCleartext(nl.leader); cerr != nil {
				l.h.log.Warn("the director does not lead, and the leader it names is not on this machine: not sending the host key there in clear text",
					"director", addr, "leader", nl.leader)
			} else {
				l.h.log.Info("the director does not lead; trying the leader", "director", addr, "leader", nl.leader)
				redirect = nl.leader
				continue
			}
		}
		l.h.log.Warn("control link lost; reconnecting", "director", addr, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

// session dials addr, registers and serves one connection until it fails.
func (l *link) session(ctx context.Context, addr string, onRegistered func()) error {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	c, err := control.DialContext(dctx, addr, l.h.cfg.ControlTLS)
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	reg := &control.Register{
		SpawnToken: l.h.cfg.SpawnToken,
		HostKey:    l.h.cfg.HostKey,
		Name:       l.h.cfg.Name,
		WSURL:      l.h.WSURL(),
		PoolSize:   l.h.cfg.PoolSize,
		PID:        os.Getpid(),
		Machine:    machine.BootID(),
		Areas:      l.h.areaRefs(),
		Boot:       l.h.boot,
	}
	sent := l.now()
	if err := c.SendRegister(reg); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg, err := c.Recv()
	if err != nil {
		return fmt.Errorf("await registration: %w", err)
	}
	ack, ok := msg.(*control.Registered)
	if !ok {
		return fmt.Errorf("await registration: got %s", msg.Type())
	}
	if ack.NotLeader {
		return &notLeaderError{why: ack.Error, leader: ack.Leader}
	}
	if ack.Error != "" {
		return fmt.Errorf("%w: %s", ErrRegistration, ack.Error)
	}
	_ = c.SetReadDeadline(time.Time{})
	l.h.hostID.Store(ack.HostID)
	// The director heard the register: the lease it gives runs from then.
	l.leaseMS.Store(max(ack.LeaseMS, 0))
	l.extendLease(sent)
	l.mu.Lock()
	l.conn = c
	l.mu.Unlock()
	// Drop what was queued for an earlier connection: it is stale, and
	// reconnect resends the durable part (unacked snapshots) below.
	for len(l.out) > 0 {
		<-l.out
	}
	// What the director does not adopt, and the bodies it let go into
	// other Areas meanwhile, go before this host takes a resume again.
	l.h.adopted(ack)
	l.up.Store(true)
	defer func() {
		l.downSince.Store(l.now())
		l.up.Store(false)
	}()
	l.h.log.Info("registered with the director", "director", addr, "tls", c.Secure(), "host_id", ack.HostID, "ws_url", l.h.WSURL())
	onRegistered()
	l.h.relinked()

	errc := make(chan error, 2)
	done := make(chan struct{})
	defer close(done)
	go func() { // writer: the only goroutine writing to c
		hb := time.NewTicker(l.h.cfg.HeartbeatEvery)
		defer hb.Stop()
		batch := make([]control.Message, 0, maxBatch)
		var active []*ecs.Area // the heartbeat's scratch
		for {
			var msg control.Message
			select {
			case <-done:
				return
			case <-hb.C:
				beat := l.h.heartbeat(&active)
				l.sentHeartbeat(beat)
				msg = beat
			case msg = <-l.out:
			case flushed := <-l.flushes:
				if err := l.writeQueued(c, batch); err != nil {
					errc <- err
					return
				}
				close(flushed)
				continue
			}
			// Whatever else is queued goes in the same write: Areas ticking
			// in one slot report together (presence, snapshots).
			batch = l.fill(append(batch[:0], msg))
			if err := c.SendAll(batch); err != nil {
				errc <- err
				return
			}
			clear(batch)
		}
	}()
	go func() {
		for {
			msg, err := c.Recv()
			if err != nil {
				errc <- err
				return
			}
			l.h.dispatch(msg)
		}
	}()
	return <-errc
}
