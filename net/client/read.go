package client

import (
	"fmt"
	"time"

	"github.com/leyworks/ley/net/wire"
)

// read is k's reader goroutine: it hands over bound, then reads until the
// connection ends or a crossing ends its session and is to be followed.
func (c *Client) read(k *conn, bound Event) {
	c.emitEvent(bound)
	for {
		b, err := k.ws.ReadMessage()
		now := time.Now()
		if err != nil {
			c.ended(k, err, now)
			return
		}
		if moved := c.frame(k, b, now); moved != nil {
			c.follow(k, moved)
			return
		}
	}
}

// frame acts on one message of k and hands it over: Frame, the answers it
// settled, its event. It returns the portal_moved to follow, if any. For
// snapshots and intent_results it allocates nothing.
func (c *Client) frame(k *conn, b []byte, now time.Time) (follow *wire.PortalMoved) {
	t, err := wire.Peek(b)
	if err != nil {
		c.protocol(k, err, now)
		return nil
	}
	f := Frame{Session: k.s.w.id, Conn: k.gen, Type: t, Bytes: b, At: now}
	ev := Event{Session: k.s.w.id, Conn: k.gen, At: now, Type: t}
	mono := int64(now.Sub(c.epoch))
	out := k.out[:0]
	var m wire.Message
	switch t {
	case wire.TypeSnapshot, wire.TypeIntentResult, wire.TypeStatic, wire.TypePresence, wire.TypeAreaInfo:
		// Read by their heads below, or not at all: the Handler decodes
		// what it draws.
	default:
		if m, err = wire.Decode(b); err != nil {
			c.protocol(k, err, now)
			return nil
		}
	}
	var snap wire.Snapshot
	var res wire.IntentResult
	switch t {
	case wire.TypeSnapshot:
		// k.snapped and the last tick and ack are written only by this
		// goroutine.
		var last *wire.Snapshot
		if k.snapped {
			last = &wire.Snapshot{Tick: k.lastTick, AckSeq: k.lastAck}
		}
		err = wire.DecodeSnapshotHead(b, last, &snap)
	case wire.TypeIntentResult:
		err = wire.DecodeIntentResult(b, &res)
	}
	if err != nil {
		c.protocol(k, err, now)
		return nil
	}

	c.mu.Lock()
	if k.done {
		c.mu.Unlock()
		return nil
	}
	s := k.s
	c.stats.Frames++
	c.stats.Bytes += int64(len(b))
	switch t {
	case wire.TypeSnapshot:
		c.stats.Snapshots++
		f.Tick, f.AckSeq, f.Flags = snap.Tick, snap.AckSeq, snap.Flags
		f.First = !k.snapped
		if k.snapped {
			f.Gap = now.Sub(k.lastSnap)
			if snap.Tick > k.lastTick {
				f.Ticks = snap.Tick - k.lastTick
			}
		}
		k.snapped, k.lastSnap, k.lastTick, k.lastAck = true, now, snap.Tick, snap.AckSeq
		s.tick = snap.Tick
		s.snapshots++
		outcome := Applied
		if f.First && k.resumed {
			outcome = Unseen // answers sent on the lost connection were lost with it
		}
		var bad bool
		if out, bad = s.w.ack(snap.AckSeq, outcome, mono, k.gen, out); bad {
			c.stats.Protocol++
			ev.Kind, ev.Err = EventProtocol, fmt.Errorf("client: snapshot acknowledges seq %d, after the last sent %d", snap.AckSeq, s.w.last)
		}
	case wire.TypeIntentResult:
		var r refusal
		out, r = s.w.refuse(res.Seq, res.Code, mono, k.gen, out)
		switch r {
		case refusalCopy:
			c.stats.Copies++
		case refusalDuplicate, refusalStray:
			ev.Kind, ev.Seq, ev.Code, ev.Duplicate = EventUnmatched, res.Seq, res.Code, r == refusalDuplicate
			if ev.Duplicate {
				c.stats.Duplicates++
			} else {
				c.stats.Strays++
			}
		}
	case wire.TypeError:
		e := m.(*wire.Error)
		r := refusalStray
		if e.Code == wire.CodeNotHello || e.Code == wire.CodeRehello {
			out, r = s.w.refuse(e.RefSeq, e.Code, mono, k.gen, out) // an intent after the session ended
		}
		if r != refusalSettled {
			ev.Kind, ev.Code, ev.Detail = EventError, e.Code, e.Detail
		}
	case wire.TypeRehello:
		out = c.endLocked(k, m.(*wire.Rehello).Code, out)
		ev.Kind, ev.Code = EventEnded, m.(*wire.Rehello).Code
	case wire.TypeTakenOver:
		out = c.endLocked(k, wire.CodeTakenOver, out)
		ev.Kind, ev.Code = EventEnded, wire.CodeTakenOver
	case wire.TypePortalMoved:
		pm := m.(*wire.PortalMoved)
		out = c.endLocked(k, wire.CodeOK, out) // what was not answered before its last snapshot is void
		ev.Kind, ev.Moved = EventMoved, pm
		if k == c.cur && c.cfg.FollowPortals {
			c.phase, k.done, follow = Moving, true, pm
		}
	case wire.TypeAreaClosing:
		ac := m.(*wire.AreaClosing)
		s.closing, s.closingCode = true, ac.Reason
		ev.Kind, ev.Code, ev.Grace = EventClosing, ac.Reason, time.Duration(ac.GraceMS)*time.Millisecond
	case wire.TypePortalBlocked:
		ev.Kind, ev.Code = EventRestored, m.(*wire.PortalBlocked).Reason
	case wire.TypePortalTransferRejected:
		ev.Kind, ev.Code = EventRestored, m.(*wire.PortalTransferRejected).Reason
	case wire.TypeHelloAck:
		c.stats.Protocol++
		ev.Kind, ev.Err = EventProtocol, fmt.Errorf("client: a hello_ack on a bound connection")
	}
	c.count(out)
	c.wakeLocked()
	c.deliverLocked()
	c.mu.Unlock()
	k.out = out

	c.cbMu.Lock()
	if c.h.Frame != nil {
		c.h.Frame(f)
	}
	if c.h.Answer != nil {
		for _, a := range out {
			c.h.Answer(a)
		}
	}
	if ev.Kind != 0 && c.h.Event != nil {
		c.h.Event(ev)
	}
	c.cbMu.Unlock()
	c.delivered()
	return follow
}

// endLocked ends k's session by the server's word (code; CodeOK for a
// crossing): its unanswered intents are void, and k's close is expected.
func (c *Client) endLocked(k *conn, code wire.Code, out []Answer) []Answer {
	k.ended = true
	s := k.s
	s.ended, s.endCode = true, code
	if k == c.cur && c.phase == Bound {
		c.phase = Ended
	}
	return s.w.drain(Void, k.gen, out)
}

// protocol reports a message of k that breaks the protocol.
func (c *Client) protocol(k *conn, err error, now time.Time) {
	c.mu.Lock()
	done := k.done
	if !done {
		c.stats.Protocol++
	}
	c.mu.Unlock()
	if !done {
		c.emitEvent(Event{Kind: EventProtocol, Session: k.s.w.id, Conn: k.gen, At: now, Err: fmt.Errorf("client: %w", err)})
	}
}

// ended handles the end of k's reads (err).
func (c *Client) ended(k *conn, err error, now time.Time) {
	c.mu.Lock()
	c.removeLocked(k)
	if k.done {
		c.mu.Unlock()
		return // the client closed or dropped it
	}
	k.done = true
	ev := Event{Kind: EventDisconnected, Session: k.s.w.id, Conn: k.gen, At: now, Err: err}
	var abandoned []Answer
	switch {
	case k == c.cur && !k.ended:
		c.phase, ev.Kind = Dropped, EventDropped
	case k.s != c.sess:
		abandoned = k.s.w.drain(Abandoned, 0, nil) // a replaced session's last hope
		c.count(abandoned)
	}
	c.wakeLocked()
	c.deliverLocked()
	c.mu.Unlock()
	c.emitAnswers(abandoned)
	c.emitEvent(ev)
	c.delivered()
}

func (c *Client) removeLocked(k *conn) {
	for i, o := range c.conns {
		if o == k {
			c.conns[i] = c.conns[len(c.conns)-1]
			c.conns = c.conns[:len(c.conns)-1]
			return
		}
	}
}

// follow takes the crossing m ended k's session with to the next Area: a
// fresh session there, with m's grant.
func (c *Client) follow(k *conn, m *wire.PortalMoved) {
	_ = k.ws.Close(1000, "crossed") // the server closes it too
	c.mu.Lock()
	c.removeLocked(k)
	from := k.s
	c.mu.Unlock()
	nk, ack, err := c.dialHello(c.ctx, m.WSURL, &wire.Hello{Grant: m.Grant, JoinID: m.JoinID, Versions: c.cfg.Versions}, m.JoinID)
	if err == nil {
		s := c.newSession(m.WSURL)
		if err = c.install(nk, s, ack, from, Event{Kind: EventBound, Followed: true}); err == nil {
			return
		}
	}
	err = fmt.Errorf("client: follow the crossing to Area %d: %w", m.Area, err)
	c.mu.Lock()
	current := c.sess == from && c.phase == Moving
	if current {
		c.phase, from.endErr = Ended, err
		c.wakeLocked()
	}
	c.mu.Unlock()
	if current {
		c.emitEvent(Event{Kind: EventEnded, Session: from.w.id, Conn: k.gen, At: time.Now(), Err: err})
	}
}
