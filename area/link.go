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
type link struct {
	h       *Host
	out     chan control.Message
	dropped atomic.Uint64
	up      atomic.Bool

	mu   sync.Mutex // guards conn
	conn *control.Conn
}

func newLink(h *Host) *link {
	return &link{h: h, out: make(chan control.Message, outboxLen)}
}

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
		Areas:      l.h.areaRefs(),
		Boot:       l.h.boot,
	}
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
	l.mu.Lock()
	l.conn = c
	l.mu.Unlock()
	// Drop what was queued for an earlier connection: it is stale, and
	// reconnect resends the durable part (unacked snapshots) below.
	for len(l.out) > 0 {
		<-l.out
	}
	l.up.Store(true)
	defer l.up.Store(false)
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
				msg = l.h.heartbeat()
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
