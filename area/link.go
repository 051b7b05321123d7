package area

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/internal/machine"
	"github.com/leyworks/ley/net/control"
)

// ErrRegistration is returned by Host.Run when the director refuses the
// host's registration: the only control error the host does not survive.
var ErrRegistration = errors.New("area: registration refused")

// outboxLen bounds the control messages waiting for the link's writer. A
// full outbox drops (and counts) the message: snapshots stay unacked and
// are resent, presence is resent periodically, so nothing durable is lost
// and a tick never blocks on the director's socket.
const outboxLen = 4096

// link is the host's control connection to the director: it registers,
// heartbeats, reconnects with backoff, and feeds received messages to the
// host. send may be called from any goroutine and never blocks.
//
// It also keeps the host's lease (control.Registered.LeaseMS): the time
// the director last answered a heartbeat, counted on this host's
// monotonic clock from when the heartbeat left. Past the lease the host
// is out of touch: the director may have made its Areas live elsewhere,
// so its sessions end and it binds no one until the director answers
// again (see Host.watchLink).
type link struct {
	h       *Host
	out     chan control.Message
	dropped atomic.Uint64
	up      atomic.Bool

	mu   sync.Mutex // guards conn
	conn *control.Conn

	born       time.Time    // the monotonic origin of the times below
	leaseMS    atomic.Int64 // the lease the director gave (0: none)
	leaseEnd   atomic.Int64 // ns since born: the lease runs to here
	outOfTouch atomic.Bool  // the lease ran out and no answer came since
	downSince  atomic.Int64 // ns since born when the link last went down
	beatsMu    sync.Mutex   // guards beats, nextBeat
	beats      [16]sentBeat // the last heartbeats sent, for their acks
	nextBeat   int
}

// sentBeat is a heartbeat sent: its UnixMS and when, on the monotonic
// clock (ns since born).
type sentBeat struct {
	unixMS int64
	at     int64
}

func newLink(h *Host) *link {
	return &link{h: h, out: make(chan control.Message, outboxLen), born: time.Now()}
}

// now is the link's monotonic clock: ns since born.
func (l *link) now() int64 { return int64(time.Since(l.born)) }

// sentHeartbeat records a heartbeat about to be sent (the writer).
func (l *link) sentHeartbeat(hb *control.Heartbeat) {
	l.beatsMu.Lock()
	l.beats[l.nextBeat%len(l.beats)] = sentBeat{unixMS: hb.UnixMS, at: l.now()}
	l.nextBeat++
	l.beatsMu.Unlock()
}

// heartbeatAcked runs the lease on from when the acked heartbeat left:
// the director heard the host then. An ack of no heartbeat recorded (too
// old, or never sent) changes nothing.
func (l *link) heartbeatAcked(m *control.HeartbeatAck) {
	l.beatsMu.Lock()
	at := int64(-1)
	for _, b := range l.beats {
		if b.unixMS == m.SentMS && b.at > at {
			at = b.at
		}
	}
	l.beatsMu.Unlock()
	if at >= 0 {
		l.extendLease(at)
	}
}

// extendLease runs the lease to LeaseMS after heard (ns since born), if
// that is later than it runs now.
func (l *link) extendLease(heard int64) {
	end := heard + l.leaseMS.Load()*int64(time.Millisecond)
	for {
		cur := l.leaseEnd.Load()
		if end <= cur || l.leaseEnd.CompareAndSwap(cur, end) {
			return
		}
	}
}

// inTouch reports whether the host may bind a player: it has no lease, or
// its lease runs.
func (l *link) inTouch() bool { return !l.outOfTouch.Load() }

// maxBatch bounds the messages the link writes with one system call.
const maxBatch = 64

// send queues msg for the director; it drops it when the outbox is full or
// the link is down (the callers' protocols resend what matters).
func (l *link) send(msg control.Message) {
	if !l.up.Load() {
		l.dropped.Add(1)
		return
	}
	select {
	case l.out <- msg:
	default:
		l.dropped.Add(1)
	}
}

// notLeaderError is a director's refusal because it does not lead the
// realm: the host goes to leader (when known) or to its next director.
type notLeaderError struct {
	why, leader string
}

func (e *notLeaderError) Error() string { return "not the leader: " + e.why }

// directors returns the control addresses of cfg.Director (a
// comma-separated list).
func directors(list string) []string {
	var addrs []string
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// checkCleartext refuses (wrapping ErrRegistration) to send the host key
// over a plain link to a director that is not on this machine, unless the
// operator allowed it (ControlInsecure).
func (l *link) checkCleartext(addr string) error {
	cfg := &l.h.cfg
	if cfg.ControlTLS != nil || cfg.SpawnToken != "" || cfg.ControlInsecure || control.IsLocalAddr(addr) {
		return nil
	}
	return fmt.Errorf("%w: the host key would cross the network to %s unencrypted: give the host its --control-tls-* files, or allow a plain link with --control-insecure",
		ErrRegistration, addr)
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
	if err := c.Send(reg); err != nil {
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
		for {
			var msg control.Message
			select {
			case <-done:
				return
			case <-hb.C:
				beat := l.h.heartbeat()
				l.sentHeartbeat(beat)
				msg = beat
			case msg = <-l.out:
			}
			// Whatever else is queued goes in the same write: Areas ticking
			// in one slot report together (presence, snapshots).
			batch = append(batch[:0], msg)
		more:
			for len(batch) < maxBatch {
				select {
				case m := <-l.out:
					batch = append(batch, m)
				default:
					break more
				}
			}
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
