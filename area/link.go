package area

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// run keeps the link up until ctx is done. It returns an error wrapping
// ErrRegistration when the director refuses the host; every other failure
// is logged and retried with backoff.
func (l *link) run(ctx context.Context, registered chan<- struct{}) error {
	backoff := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := l.session(ctx, func() {
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
		l.h.log.Warn("control link lost; reconnecting", "director", l.h.cfg.Director, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

// session dials, registers and serves one connection until it fails.
func (l *link) session(ctx context.Context, onRegistered func()) error {
	c, err := control.Dial(l.h.cfg.Director, 5*time.Second)
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
	l.h.log.Info("registered with the director", "director", l.h.cfg.Director, "host_id", ack.HostID, "ws_url", l.h.WSURL())
	onRegistered()
	l.h.relinked()

	errc := make(chan error, 2)
	done := make(chan struct{})
	defer close(done)
	go func() { // writer: the only goroutine writing to c
		hb := time.NewTicker(l.h.cfg.HeartbeatEvery)
		defer hb.Stop()
		for {
			var msg control.Message
			select {
			case <-done:
				return
			case <-hb.C:
				msg = l.h.heartbeat()
			case msg = <-l.out:
			}
			if err := c.Send(msg); err != nil {
				errc <- err
				return
			}
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
