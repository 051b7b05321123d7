package area

import (
	"errors"
	"fmt"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
)

// closeCodeShutdown is the area_closing reason when the host itself stops.
const closeCodeShutdown = uint16(wire.CodeAreaClosing)

func (h *Host) onOpen(c *gate.Conn) {
	p := &peer{h: h, conn: c, tokens: float64(h.cfg.IntentBurst), refilled: time.Now(), scratch: make([]byte, 0, 64)}
	c.SetValue(p)
	h.peers.Add(1)
	// A connection that never says hello holds a socket and a slot for
	// nothing: it gets HelloTimeout to be bound.
	p.helloBy = time.AfterFunc(h.cfg.HelloTimeout, func() {
		if p.bind.Load() == nil && p.spec.Load() == nil && p.lost.Load() == 0 && !p.pending.Load() {
			h.helloTimeouts.Add(1)
			c.Close(gate.ClosePolicyViolation, "no hello in time")
		}
	})
}

// onTooBig answers a message over the size limit (64 KiB) with
// error{TOO_LARGE} before the gate closes the connection (1009): the
// message itself is never read, so neither its seq nor its join id is
// known.
func (h *Host) onTooBig(c *gate.Conn, limit int64) {
	if p, _ := c.Value().(*peer); p != nil {
		p.sendError(wire.CodeTooLarge, 0, 0, fmt.Sprintf("message over %d bytes", limit))
	}
}

func (h *Host) onClose(c *gate.Conn, err error) {
	p, _ := c.Value().(*peer)
	if p == nil {
		return
	}
	h.peers.Add(-1)
	p.closed.Store(true)
	p.helloBy.Stop()
	if bd := p.bind.Swap(nil); bd != nil {
		bd.ha.a.PostControl(func(*ecs.Area) { bd.ha.dropped(p, bd.b) })
	}
	p.spectatorClosed()
}

// onMessage handles one client message on the connection's event loop. It
// never blocks: intents go to the Area's inbox, hello and resume to its
// control inbox; answers come back from the Area's goroutine.
func (h *Host) onMessage(c *gate.Conn, payload []byte) {
	p, _ := c.Value().(*peer)
	if p == nil {
		return
	}
	t, err := wire.Peek(payload)
	if err != nil {
		if _, ok := wire.IntentSeq(payload); ok && errors.Is(err, wire.ErrVersion) {
			p.onIntent(payload) // an intent in a version not spoken: answered by its seq
			return
		}
		joinID, _ := wire.JoinIDOf(payload) // a join's answer carries its join id
		p.malformedMsg(wire.CodeOf(err), 0, joinID, wire.Detail(err))
		return
	}
	switch t {
	case wire.TypeIntent:
		p.onIntent(payload)
	case wire.TypeHello, wire.TypeResume:
		p.onJoin(payload)
	case wire.TypeLeave:
		p.onLeave(payload)
	case wire.TypeWatch:
		p.onWatch(payload)
	default:
		p.sendError(wire.CodeUnknownType, 0, 0, "message type "+t.String()+" is not accepted from clients")
	}
}

// onIntent answers or posts one intent. Every intent whose seq can be read
// gets exactly one answer naming it: a refusal here (not bound, a stale
// seq, malformed, rate limited, the inbox full) or the engine's (an
// intent_result, or the snapshots' ack_seq reaching it). One whose seq
// cannot be read is answered error{code, ref_seq 0}: nothing of it was
// applied and no seq was taken.
func (p *peer) onIntent(payload []byte) {
	derr := wire.DecodeIntent(payload, &p.intent)
	in := &p.intent
	if derr != nil {
		seq, ok := wire.IntentSeq(payload)
		if !ok {
			p.malformedMsg(wire.CodeOf(derr), 0, 0, wire.Detail(derr))
			return
		}
		in.Seq = seq
	}
	if p.spec.Load() != nil {
		p.spectatorIntent(in.Seq)
		return
	}
	bd := p.bind.Load()
	if bd == nil {
		if lost := p.lost.Load(); lost != 0 {
			p.sendError(wire.CodeRehello, in.Seq, 0, "binding lost ("+wire.Code(lost).String()+"); send hello again")
		} else {
			p.sendError(wire.CodeNotHello, in.Seq, 0, "send hello first")
		}
		if p.unbound++; p.unbound >= p.h.cfg.UnboundClose {
			p.conn.Close(gate.ClosePolicyViolation, "intents without a session")
		}
		return
	}
	p.unbound = 0
	switch bd.b.accept(bd.session, in.Seq) {
	case seqStale:
		p.sendResult(in.Seq, wire.CodeStaleSeq)
		return
	case seqGone: // taken over an instant ago: this session is over
		p.sendResult(in.Seq, wire.CodeTakenOver)
		return
	}
	if derr != nil {
		p.malformed++
		p.sendResult(in.Seq, wire.CodeOf(derr))
		if p.malformed >= p.h.cfg.MalformedClose {
			p.conn.Close(gate.ClosePolicyViolation, "too many malformed messages")
		}
		return
	}
	if !p.take() {
		if p.refused() >= float64(p.h.cfg.FloodClose) {
			p.h.log.Warn("closing a flooding peer", "peer", p.conn.RemoteAddr(), "area", bd.ha.id)
			p.conn.Close(gate.ClosePolicyViolation, "intent flood")
			return
		}
		p.sendResult(in.Seq, wire.CodeRateLimited)
		return
	}
	it := tell.Intent(in, bd.session)
	if !bd.ha.a.Post(bd.entity, it) {
		p.sendResult(in.Seq, wire.CodeTooFast)
	}
}

// onLeave takes a leave to the Area whose body this connection drives
// (hostArea.leave answers it there); before a session it is refused
// NOT_HELLO and counted with the other messages sent unbound. Leaves take
// from the intents' token bucket, and one at a time goes to the Area.
func (p *peer) onLeave(payload []byte) {
	if _, err := wire.DecodeClient(payload); err != nil {
		p.malformedMsg(wire.CodeOf(err), 0, 0, wire.Detail(err))
		return
	}
	if p.spec.Load() != nil {
		p.spectatorLeave()
		return
	}
	bd := p.bind.Load()
	if bd == nil {
		p.sendError(wire.CodeNotHello, 0, 0, "no session to leave")
		if p.unbound++; p.unbound >= p.h.cfg.UnboundClose {
			p.conn.Close(gate.ClosePolicyViolation, "messages without a session")
		}
		return
	}
	if !p.take() { // a leave costs what an intent does: a stream of them is a flood
		if p.refused() >= float64(p.h.cfg.FloodClose) {
			p.conn.Close(gate.ClosePolicyViolation, "message flood")
			return
		}
		p.sendError(wire.CodeRateLimited, 0, 0, "too many messages; slow down")
		return
	}
	if !p.leaving.CompareAndSwap(false, true) {
		return // the one under way answers
	}
	bd.ha.a.PostNow(func(*ecs.Area) {
		defer p.leaving.Store(false)
		bd.ha.leave(p, bd.b)
	})
}

// onJoin routes a hello or resume to the Area holding its grant or body.
func (p *peer) onJoin(payload []byte) {
	msg, err := wire.DecodeClient(payload)
	if err != nil {
		joinID, _ := wire.JoinIDOf(payload) // echoed, so the client knows which attempt failed
		p.malformedMsg(wire.CodeOf(err), 0, joinID, wire.Detail(err))
		return
	}
	var token string
	var joinID uint64
	var index map[string]*hostArea
	version := wire.Version
	switch m := msg.(type) {
	case *wire.Hello:
		token, joinID, index = m.Grant, m.JoinID, p.h.grants
		v, ok := wire.Negotiate(m.Versions)
		if !ok {
			p.sendError(wire.CodeVersionUnsupported, 0, joinID, wire.VersionsDetail())
			p.conn.Close(gate.ClosePolicyViolation, "no common protocol version")
			return
		}
		version = v
		if !p.h.link.inTouch() {
			// Past its lease the director may have let the character into
			// another Area: this grant may no longer be the one that counts.
			p.refuseJoin(wire.CodeUnavailable, joinID, "this host is out of touch with the realm; join again through the director")
			return
		}
	case *wire.Resume:
		token, joinID, index = m.Token, m.JoinID, p.h.resumes
		if !p.h.link.up.Load() || !p.h.link.inTouch() {
			// Cut off from the director, this host cannot know whether the
			// character joined another Area meanwhile: a resume here could
			// bind it twice. The client joins through the director instead,
			// which finds (and takes over) the body if it is still this
			// Area's.
			p.refuseJoin(wire.CodeBadToken, joinID, "this host cannot take a resume while it is out of touch with the realm; join again")
			return
		}
	}
	if p.bind.Load() != nil || p.spec.Load() != nil {
		p.refuseJoin(wire.CodeUnknownType, joinID, "already bound; hello is accepted only after rehello")
		return
	}
	if !p.pending.CompareAndSwap(false, true) {
		p.refuseJoin(wire.CodeUnknownType, joinID, "a hello is already being answered")
		return
	}
	p.h.mu.Lock()
	ha := index[token]
	p.h.mu.Unlock()
	if ha == nil {
		p.pending.Store(false)
		switch msg.(type) {
		case *wire.Resume:
			p.refuseJoin(wire.CodeBadToken, joinID, "unknown or expired resume token")
		default:
			if p.h.expiredGrant(token) {
				p.refuseJoin(wire.CodeGrantExpired, joinID, "grant expired")
			} else {
				p.refuseJoin(wire.CodeBadGrant, joinID, "unknown or used grant")
			}
		}
		return
	}
	if !ha.joining(p, joinID) {
		p.pending.Store(false)
		p.refuseJoin(wire.CodeInternal, joinID, "the area failed; join it again")
		return
	}
	// Taken in at once, on this event loop, when the Area is not running
	// (else at its next tick): a join does not wait for a tick boundary.
	ha.a.PostNow(func(*ecs.Area) {
		defer p.pending.Store(false)
		ha.joined(p)
		switch m := msg.(type) {
		case *wire.Hello:
			ha.hello(p, m, version)
		case *wire.Resume:
			ha.resume(p, m)
		}
	})
}

// refuseJoin answers a hello or resume refused before it reached an
// Area, and counts it with the other messages answered without a session
// (Config.UnboundClose): a connection that keeps guessing grants or
// tokens is closed (1008) like one that keeps sending intents unbound.
// Event loop.
func (p *peer) refuseJoin(code wire.Code, joinID uint64, detail string) {
	p.sendError(code, 0, joinID, detail)
	if p.unbound++; p.unbound >= p.h.cfg.UnboundClose {
		p.conn.Close(gate.ClosePolicyViolation, "too many refused joins without a session")
	}
}

// hello binds p to its grant's body, spawning it or taking it over.
func (ha *hostArea) hello(p *peer, m *wire.Hello, version uint16) {
	if ha.spectatorHello(p, m, version) {
		return
	}
	g := ha.grants[m.Grant]
	switch {
	case g == nil:
		p.sendError(wire.CodeBadGrant, 0, m.JoinID, "unknown or used grant")
		return
	case g.joinID != m.JoinID:
		p.sendError(wire.CodeBadGrant, 0, m.JoinID, "grant belongs to another join")
		return
	}
	delete(ha.grants, m.Grant)
	ha.h.dropIndex(ha.h.grants, m.Grant)
	if time.Now().After(g.expires) {
		ha.h.expire(m.Grant)
		p.sendError(wire.CodeGrantExpired, 0, m.JoinID, "grant expired")
		return
	}
	if ha.closing != nil {
		p.sendError(wire.CodeAreaClosing, 0, m.JoinID, "area is closing")
		return
	}
	b := ha.bodies[g.char.Account]
	if b == nil {
		e, err := ha.spawnPlayer(g.char)
		if err != nil {
			code, detail := wire.CodeInternal, "no room for your body"
			if err == ecs.ErrAreaFull {
				code, detail = wire.CodeAreaFull, "the area holds its maximum of players"
			}
			ha.h.log.Warn("spawn player", "area", ha.id, "account", g.char.Account, "err", err)
			p.sendError(code, 0, m.JoinID, detail)
			return
		}
		b = &body{account: g.char.Account, name: g.name, entity: e, since: time.Now()}
		ha.bodies[b.account] = b
		ha.order = append(ha.order, b)
	} else if pl := ha.players.Get(b.entity); pl != nil {
		pl.Builder = g.char.Builder // the director's word as of this join (a role the owner changed)
	}
	b.version = version
	ha.bind(p, b, m.JoinID, true)
}
