package area

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/control/failpoint"
	"github.com/leyworks/ley/net/gate"
)

// Host runs a pool of Areas behind one WebSocket listener, driven by one
// ecs.Clock, and keeps a control link to the director.
//
// Concurrency: the gate's event loops run the session callbacks; the
// clock's workers tick the Areas; the link's goroutines talk to the
// director. They meet only through each Area's inbox (PostControl, Post),
// the peers' atomic bindings, and the indexes below under mu.
type Host struct {
	cfg   Config
	log   *slog.Logger
	clock *ecs.Clock
	gate  *gate.Server
	link  *link
	boot  uint64

	hostID    atomic.Uint32
	peers     atomic.Int64 // connected peers
	bytesOut  atomic.Uint64
	framesOut atomic.Uint64
	// areaFailures counts Areas that panicked and were failed alone;
	// helloTimeouts connections closed for not saying hello in time.
	areaFailures  atomic.Uint64
	helloTimeouts atomic.Uint64
	wsURL         string

	mu      sync.Mutex // guards areas, grants, resumes, closed
	areas   map[uint32]*hostArea
	grants  map[string]*hostArea // grant token -> Area holding it
	resumes map[string]*hostArea // resume token -> Area holding the body
	expired map[string]time.Time // grant tokens that expired unused, and when
	closed  bool
	allGone chan struct{} // closed when the last Area unloaded after shutdown began
}

// New validates cfg and returns a Host; Run starts it.
func New(cfg Config) (*Host, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	clock, err := ecs.NewClock(ecs.ClockConfig{TickRate: cfg.TickRate, FrozenPollRate: 4})
	if err != nil {
		return nil, err
	}
	h := &Host{
		cfg:     cfg,
		log:     cfg.Logger.With("role", "areahost", "host", cfg.Name),
		clock:   clock,
		boot:    randomUint64(),
		areas:   make(map[uint32]*hostArea),
		grants:  make(map[string]*hostArea),
		resumes: make(map[string]*hostArea),
		expired: make(map[string]time.Time),
	}
	h.link = newLink(h)
	return h, nil
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
	gcfg.Logger = h.log
	gcfg.CheckOrigin = originChecker(h.cfg.AllowedOrigins)
	srv, err := gate.Listen(context.Background(), gcfg, gate.Handler{
		OnOpen:    h.onOpen,
		OnMessage: h.onMessage,
		OnClose:   h.onClose,
	})
	if err != nil {
		return err
	}
	h.gate = srv
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

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-linkErr:
		runErr = err // refused registration
	}
	if runErr == nil {
		h.shutdown()
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
		ha := h.area(m.Area)
		if ha == nil {
			h.link.send(&control.GrantAck{Area: m.Area, Token: m.Token, Error: "area not on this host"})
			return
		}
		h.mu.Lock()
		h.grants[m.Token] = ha
		h.mu.Unlock()
		// Taken in at once (the join waits for its ack), not at the next tick.
		ha.a.PostNow(func(*ecs.Area) { ha.addGrant(m) })
		ha.a.Wake()
	case *control.PortalResult:
		if ha := h.area(m.Area); ha != nil {
			ha.a.PostNow(func(*ecs.Area) { ha.onPortalResult(m) })
			ha.a.Wake()
		}
	case *control.SnapshotAck:
		if ha := h.area(m.Area); ha != nil {
			ha.a.PostControl(func(*ecs.Area) { ha.onAck(m) })
		}
	case *control.Inspect:
		go h.inspect(m) // it waits for the Areas: not on the link's reader
	case *control.CloseArea:
		ha := h.area(m.Area)
		if ha == nil {
			h.link.send(&control.AreaClosed{Area: m.Area})
			return
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
		ha.a.PostControl(func(*ecs.Area) {
			if m.Epoch > ha.epoch {
				ha.epoch = m.Epoch
			}
		})
		return nil
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
	h.mu.Unlock()
	h.clock.Add(ha.a)
	h.log.Info("area live", "area", m.Area, "epoch", m.Epoch, "kind", m.Kind, "size", fmt.Sprintf("%dx%d", m.W, m.H), "hydrated", len(m.Blob) > 0)
	return nil
}

// unload forgets an Area that finished closing (its goroutine).
func (h *Host) unload(ha *hostArea) {
	h.clock.Remove(ha.a)
	h.mu.Lock()
	delete(h.areas, ha.id)
	for tok, x := range h.grants {
		if x == ha {
			delete(h.grants, tok)
		}
	}
	for tok, x := range h.resumes {
		if x == ha {
			delete(h.resumes, tok)
		}
	}
	if h.closed && len(h.areas) == 0 && h.allGone != nil {
		close(h.allGone)
		h.allGone = nil
	}
	h.mu.Unlock()
}

// areaRefs lists the live Areas for a (re)registration.
func (h *Host) areaRefs() []control.AreaRef {
	h.mu.Lock()
	defer h.mu.Unlock()
	refs := make([]control.AreaRef, 0, len(h.areas))
	for _, ha := range h.areas {
		refs = append(refs, control.AreaRef{Area: ha.id, Epoch: ha.epochSeen.Load(), Acked: ha.ackedSeen.Load()})
	}
	return refs
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

// heartbeat builds the periodic heartbeat (link writer goroutine).
func (h *Host) heartbeat() *control.Heartbeat {
	hb := &control.Heartbeat{UnixMS: time.Now().UnixMilli(), Peers: int(h.peers.Load()), RSSKiB: rssKiB(),
		BytesOut: h.bytesOut.Load(), FramesOut: h.framesOut.Load(), AreaFailures: h.areaFailures.Load()}
	h.mu.Lock()
	hb.Areas = len(h.areas)
	// The heartbeat tells the slowest active Area's ticks: find it by its
	// p99 (no sort), then ask it alone for the full figures.
	var slowest *ecs.Area
	worst := time.Duration(-1)
	for _, ha := range h.areas {
		n, _ := ha.a.Counts()
		hb.Entities += n
		if ha.a.Mode() != ecs.Active {
			continue
		}
		hb.Active++
		if p99 := ha.a.TickP99(); p99 > worst {
			slowest, worst = ha.a, p99
		}
	}
	h.mu.Unlock()
	if slowest != nil {
		st := slowest.Stats()
		hb.TickP50, hb.TickP95, hb.TickP99, hb.TickMax = st.P50.Microseconds(), st.P95.Microseconds(), st.P99.Microseconds(), st.Max.Microseconds()
	}
	if lc := h.cfg.Agones; lc != nil {
		lc.SetStatus(hb.Areas, hb.Peers)
	}
	return hb
}

// rssKiB reads this process's resident set from /proc (0 where there is none).
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()) / 1024
}

func randomUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// newToken returns a 128-bit random token as hex.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
		h.log.Info("host stats", "areas", len(areas), "active", active, "peers", h.peers.Load(),
			"bytes_out", h.bytesOut.Load(), "frames_out", h.framesOut.Load(), "rss_kib", rssKiB())
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
