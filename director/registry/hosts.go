package registry

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/internal/machine"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// maxGivenUp bounds Host.givenUp.
const maxGivenUp = 64

// gaveUpLocked records that the registry gave up on h's spawn of (area,
// epoch). r.mu held.
func (r *Registry) gaveUpLocked(h *Host, area uint32, epoch uint64) {
	if len(h.givenUp) == maxGivenUp {
		h.givenUp = slices.Delete(h.givenUp, 0, 1)
	}
	h.givenUp = append(h.givenUp, incarnation{area, epoch})
}

// givenUpLocked reports whether the registry gave up on an incarnation
// of area spawned on h: at epoch, or at any epoch when epoch is 0 (a
// presence names none); forget drops it (its area_closed came, or its
// spawn failed on the host). r.mu held.
func (r *Registry) givenUpLocked(h *Host, area uint32, epoch uint64, forget bool) bool {
	i := slices.IndexFunc(h.givenUp, func(inc incarnation) bool {
		return inc.area == area && (epoch == 0 || inc.epoch == epoch)
	})
	if i >= 0 && forget {
		h.givenUp = slices.Delete(h.givenUp, i, i+1)
	}
	return i >= 0
}

// givenUp is givenUpLocked, taking r.mu.
func (r *Registry) givenUp(h *Host, area uint32, epoch uint64, forget bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.givenUpLocked(h, area, epoch, forget)
}

// Gone is closed once the host is unregistered.
func (h *Host) Gone() <-chan struct{} { return h.gone }

// Send sends m to the host (safe for concurrent use).
func (h *Host) Send(m control.Message) error { return h.conn.Send(m) }

// HostStats is one registered host as its last heartbeat tells it.
type HostStats struct {
	ID      uint32
	Name    string
	PID     int
	WSURL   string
	Spawned bool
	// Addr is where its link comes from; TLS whether the link is
	// encrypted, Certificate the subject's common name of the certificate
	// it registered with ("" for none: a spawn token or the host key).
	Addr        string
	TLS         bool
	Certificate string
	Beat        control.Heartbeat
	BeatAge     time.Duration
}

// Hosts returns the registered hosts' figures.
func (r *Registry) Hosts() []HostStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]HostStats, 0, len(r.hosts))
	now := time.Now()
	for _, h := range r.hosts {
		hs := HostStats{ID: h.ID, Name: h.Name, PID: h.PID, WSURL: h.WSURL, Spawned: h.cred != (store.TokenHash{}),
			Addr: h.conn.RemoteAddr().String(), TLS: h.conn.Secure(), Beat: h.beat, BeatAge: now.Sub(h.lastBeat)}
		if c := h.conn.PeerCertificate(); c != nil {
			hs.Certificate = c.Subject.CommonName
		}
		out = append(out, hs)
	}
	return out
}

// ChildStarted expects the registration of a host this director spawned
// (the spawner's Started hook): its credential lets it register, now and
// with every later director, until it exits. Its record goes to the store
// when it registers.
func (r *Registry) ChildStarted(c *spawner.Child) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spawned[store.HashToken(c.Token)] = &child{registered: make(chan struct{})}
}

// ChildExited is the spawner's Exited hook: the host is unregistered as
// soon as its link's reader has handled what the host sent before its
// end (waiting at most exitDrainWait; its process is gone: its Areas are
// made live elsewhere on their next join) and its record forgotten. One
// that exited before it registered could not start: HostFailure says
// why, and joins are refused at once while that lasts.
func (r *Registry) ChildExited(c *spawner.Child, stopping bool) {
	cred := store.HashToken(c.Token)
	r.mu.Lock()
	ch := r.spawned[cred]
	delete(r.spawned, cred)
	var h *Host
	if ch != nil {
		h = ch.host
	}
	if h == nil && !stopping {
		f := &HostFailure{Reason: c.Reason(), At: time.Now(), Count: 1}
		if prev := r.hostFailure; prev != nil {
			f.Count = prev.Count + 1
		}
		r.hostFailure = f
		r.notify()
	}
	r.mu.Unlock()
	if h != nil {
		// Its process is gone, so its link ends once what it sent is
		// read: the link's reader handles that first and unregisters it
		// (its final snapshots written, its Areas' closes taken). A reader
		// still at it after exitDrainWait (a store that does not answer)
		// is cut short: what it holds is dropped.
		if h.linkDone != nil {
			t := time.NewTimer(exitDrainWait)
			select {
			case <-h.linkDone:
			case <-t.C:
			}
			t.Stop()
		}
		r.unregister(h, fmt.Errorf("its process exited: %s", c.Reason()), true)
		r.forgetLost(h) // unregistered before its exit was seen: its Areas are not out of touch, they are gone
	}
	if err := r.store.DeleteHost(context.Background(), cred); err != nil {
		r.log.Warn("forget an exited host's record; the next director forgets it after its lease", "pid", c.PID, "err", err)
	}
	if stopping {
		return
	}
	r.metrics.hostExits.Inc()
	if h == nil {
		r.log.Error("area host exited before it registered", "pid", c.PID, "reason", c.Reason())
	} else {
		r.log.Warn("area host exited", "pid", c.PID, "host", h.ID, "reason", c.Reason())
	}
}

// watchHeartbeats drops the links of hosts that stopped beating: their
// Areas wait out the host's lease (it may still run, cut off) unless its
// process is known to be gone.
func (r *Registry) watchHeartbeats(now time.Time) {
	var late []*Host
	r.mu.Lock()
	for _, h := range r.hosts {
		if !h.answering && now.Sub(r.heardAt(h)) > r.cfg.HeartbeatTimeout {
			late = append(late, h)
		}
	}
	r.mu.Unlock()
	for _, h := range late {
		h.conn.Close() // its link's reader unregisters it
		r.unregister(h, fmt.Errorf("nothing heard for %v", r.cfg.HeartbeatTimeout), false)
	}
}

// exitDrainWait bounds how long ChildExited waits for the link's reader
// of a host whose process exited to handle what the host sent before its
// end (a few thousand final snapshots at the store's pace).
const exitDrainWait = 10 * time.Second

// exitWait bounds how long unregister waits for a host of this machine
// whose link ended to exit: a dying host's sockets close before its
// process does.
const exitWait = 300 * time.Millisecond

// unregister forgets a host whose link ended. Its Areas leave the live
// registry at once; unless the host is surely dead (dead: its process
// exited, as its parent saw, or it no longer runs on this machine), they
// are lost until its lease ran out: not made live elsewhere, their
// characters not moved, since the host may still be running them, cut
// off. Every waiter of the host is failed.
func (r *Registry) unregister(h *Host, why error, dead bool) {
	if !dead && h.Machine != "" && h.Machine == machine.BootID() {
		// The host ran on this machine: its process may be gone, or on its
		// way out (its sockets close before it becomes a zombie), so
		// wait a moment for its exit.
		dead = machine.Exited(h.PID, exitWait)
	}
	r.mu.Lock()
	if r.hosts[h.ID] != h {
		r.mu.Unlock()
		return
	}
	delete(r.hosts, h.ID)
	until := r.heardAt(h).Add(r.cfg.Lease + r.cfg.HeartbeatTimeout)
	for id, l := range h.areas {
		if r.areas[id] == l {
			delete(r.areas, id)
			if !dead && r.cfg.Lease > 0 && time.Now().Before(until) {
				r.lost[id] = until
			}
		}
	}
	close(h.gone)
	r.notify()
	n := len(h.areas)
	r.mu.Unlock()
	err := fmt.Errorf("host %d unregistered: %w", h.ID, why)
	h.ready.Close(err)
	h.grants.Close(err)
	h.inspections.Close(err)
	h.evictions.Close(err)
	h.conn.Close()
	r.log.Warn("host unregistered", "host", h.ID, "name", h.Name, "areas", n, "dead", dead, "why", why)
	if dead && h.cred != (store.TokenHash{}) && !h.spawned {
		// An adopted host that died: no director will see it again (the
		// spawner forgets its own children's records itself).
		if err := r.store.DeleteHost(context.Background(), h.cred); err != nil {
			r.log.Warn("forget a dead host's record; the next director forgets it after its adoption window", "host", h.ID, "err", err)
		}
	}
}

// expireLost forgets the lost Areas whose host's lease ran out: they may
// be made live elsewhere now.
func (r *Registry) expireLost(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, until := range r.lost {
		if !now.Before(until) {
			delete(r.lost, id)
			r.notify()
		}
	}
}

// EndIncarnation readies the end of area's incarnation by a move out of it
// while no host runs it for the registry (store.Transfer.FenceFrom): a
// host cut off with it may still hold what a character did there since
// its last stored snapshot, and must never store it. It reports false
// when area is live or starting (then its host answers for it). Until
// done is called, a host registering again with area is told to close it
// rather than have it adopted (its store read may predate the move);
// done(ended), with the incarnation the move ended (0: it did not
// happen), keeps refusing that incarnation.
func (r *Registry) EndIncarnation(area store.AreaID) (done func(ended store.Epoch), ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.areas[area] != nil {
		return nil, false
	}
	r.ending[area]++
	return func(ended store.Epoch) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.ending[area]--; r.ending[area] == 0 {
			delete(r.ending, area)
		}
		if ended > r.ended[area] {
			r.ended[area] = ended
		}
	}, true
}

// Lost reports whether area was live on a host cut off from the director
// whose lease has not run out (until when): it must not be made live
// elsewhere, nor its characters moved, before.
func (r *Registry) Lost(area store.AreaID) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	until, ok := r.lost[area]
	return until, ok
}

// forgetRecorded forgets, once the adoption window is over, the recorded
// hosts of an earlier director that did not come back.
func (r *Registry) forgetRecorded(ctx context.Context, now time.Time) {
	r.mu.Lock()
	if r.adoptUntil.IsZero() || now.Before(r.adoptUntil) {
		r.mu.Unlock()
		return
	}
	r.adoptUntil = time.Time{}
	var gone []store.HostRecord
	for cred, rec := range r.recorded {
		gone = append(gone, rec)
		delete(r.recorded, cred)
	}
	r.notify()
	r.mu.Unlock()
	for _, rec := range gone {
		r.log.Warn("a host of an earlier director did not come back; its Areas are made live elsewhere", "name", rec.Name, "pid", rec.PID)
		if err := r.store.DeleteHost(ctx, rec.Credential); err != nil {
			r.log.Warn("forget a host record", "name", rec.Name, "err", err)
		}
	}
}

// adopting reports whether the hosts of an earlier director may still come
// back (the adoption window after a start). r.mu held.
func (r *Registry) adoptingLocked(now time.Time) bool {
	return !r.adoptUntil.IsZero() && now.Before(r.adoptUntil)
}

// StopAdopted stops the hosts of this machine an earlier director spawned
// and this one adopted (the spawner stops only its own children): each is
// interrupted (it closes its Areas, sending their final snapshots, and
// exits), and those whose link has not ended after grace are killed. A
// realm that stops (ley run's Ctrl-C) stops them too.
func (r *Registry) StopAdopted(grace time.Duration) {
	boot := machine.BootID()
	r.mu.Lock()
	var adopted []*Host
	for _, h := range r.hosts {
		if h.cred != (store.TokenHash{}) && !h.spawned && boot != "" && h.Machine == boot {
			adopted = append(adopted, h)
		}
	}
	r.mu.Unlock()
	for _, h := range adopted {
		r.log.Info("stopping an adopted host", "host", h.ID, "pid", h.PID)
		_ = syscall.Kill(h.PID, syscall.SIGINT)
	}
	deadline := time.After(grace)
	for _, h := range adopted {
		select {
		case <-h.gone:
		case <-deadline:
		}
		if machine.Alive(h.PID) {
			select {
			case <-h.gone:
			default:
				r.log.Warn("an adopted host did not stop in time; killed", "host", h.ID, "pid", h.PID)
				_ = syscall.Kill(h.PID, syscall.SIGKILL)
			}
		}
	}
}

// Adopted counts the hosts an earlier director spawned that this one
// adopted, and, while they may still come back (the adoption window), the
// recorded ones that have not: the spawner counts them towards its
// minimum of hosts.
func (r *Registry) Adopted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.hosts {
		if h.cred != (store.TokenHash{}) && !h.spawned {
			n++
		}
	}
	if r.adoptingLocked(time.Now()) {
		n += len(r.recorded)
	}
	return n
}

// heard records that a message of h was read now.
func (r *Registry) heard(h *Host) { h.heard.Store(int64(time.Since(r.started))) }

// heardAt is when a message of h was last read.
func (r *Registry) heardAt(h *Host) time.Time { return r.started.Add(time.Duration(h.heard.Load())) }

// sender writes h's queued answers (sendSoon) until it is gone.
func (r *Registry) sender(h *Host) {
	for {
		select {
		case <-h.gone:
			return
		case m := <-h.soon:
			if err := h.conn.Send(m); err != nil {
				return // the link failed: its reader unregisters the host
			}
		}
	}
}

// SendSoon queues m for h without waiting, for a caller on h's link
// reader or handler: an answer the host may miss (it asks again: heartbeats beat on,
// an unacked snapshot or a portal_out is resent), so a full queue (a host
// that has stopped reading) drops it, counted.
func (r *Registry) SendSoon(h *Host, m control.Message) {
	select {
	case <-h.gone: // nobody reads it: an ack of a gone host's last snapshot
		return
	default:
	}
	select {
	case h.soon <- m:
	default:
		r.metrics.dropped.Inc()
	}
}

// forgetLost ends the lease wait of the Areas of h, a host now known dead:
// they may be made live elsewhere at once.
func (r *Registry) forgetLost(h *Host) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range h.areas {
		delete(r.lost, id)
	}
	r.notify()
}

// take takes n bytes from b (rate a second, burst at most) and reports
// whether it had them.
func (b *bucket) take(n, rate, burst float64, now time.Time) bool {
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}
