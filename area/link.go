package area

import (
	"errors"
	"fmt"
	"strings"
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

func newLink(h *Host) *link {
	return &link{h: h, out: make(chan control.Message, outboxLen), flushes: make(chan chan struct{}), born: time.Now()}
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

// flush waits, at most d, until what was queued for the director before
// the call is written to the link, and reports whether it was: a
// stopping host's last messages (its Areas' closes) must not go down
// with the link it closes next. A link that is down flushes nothing.
func (l *link) flush(d time.Duration) bool {
	if !l.up.Load() {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	done := make(chan struct{})
	select {
	case l.flushes <- done:
	case <-t.C:
		return false
	}
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// fill appends to batch what is queued in the outbox, up to maxBatch
// messages, without waiting: one write carries them together.
func (l *link) fill(batch []control.Message) []control.Message {
	for len(batch) < maxBatch {
		select {
		case m := <-l.out:
			batch = append(batch, m)
		default:
			return batch
		}
	}
	return batch
}

// writeQueued writes what is queued in the outbox, maxBatch messages a
// call, until it is empty (the writer's, on a flush).
func (l *link) writeQueued(c *control.Conn, batch []control.Message) error {
	for {
		batch = l.fill(batch[:0])
		if len(batch) == 0 {
			return nil
		}
		err := c.SendAll(batch)
		clear(batch)
		if err != nil {
			return err
		}
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
