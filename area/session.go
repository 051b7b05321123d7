package area

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/interest"
)

// closeCodeShutdown is the area_closing reason when the host itself stops.
const closeCodeShutdown = uint16(wire.CodeAreaClosing)

// binding ties a connection to a body in an Area. It is immutable: a new
// binding replaces it whole, so the event loop reads it with one atomic load.
type binding struct {
	ha      *hostArea
	b       *body
	entity  ecs.Entity
	session uint32 // the session's mark, carried by its intents (ecs.Intent.Tag)
}

// peer is one client connection.
type peer struct {
	h    *Host
	conn *gate.Conn

	bind   atomic.Pointer[binding]
	lost   atomic.Uint32 // wire code of why a binding was lost; 0 if never bound or bound now
	closed atomic.Bool
	// pending is set while a hello or resume is being answered, so a
	// second one is refused rather than raced.
	pending atomic.Bool
	// leaving is set while a leave waits for its Area, so a stream of
	// them posts one piece of work there, not one each.
	leaving atomic.Bool
	// spec is set while the peer is a spectator (spectate.go).
	spec atomic.Pointer[spectator]

	// Owned by the connection's event loop (OnMessage runs one at a time).
	tokens    float64
	refilled  time.Time
	flood     float64   // the flood meter (see refused)
	floodAt   time.Time // when it was last drained
	malformed int
	unbound   int         // NOT_HELLO and REHELLO answers, and joins refused, in a row without a session
	helloBy   *time.Timer // closes the connection if no hello binds it in time
	intent    wire.Intent
	scratch   []byte

	// Owned by the goroutine of the Area the peer is bound to.
	version     uint16
	view        interest.View
	hasPresence bool // the Area's presence list was sent to it
}

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
	it := ecs.Intent{Seq: in.Seq, Dir: ecs.Dir(in.Dir), X: in.Target.X, Y: in.Target.Y, Tag: bd.session,
		From: in.Item.From, To: in.Item.To, Count: in.Item.Count}
	switch in.Kind {
	case wire.IntentStep:
		it.Kind = ecs.IntentStep
	case wire.IntentMoveTo:
		it.Kind = ecs.IntentMoveTo
	case wire.IntentStop:
		it.Kind = ecs.IntentStop
	case wire.IntentAction:
		it.Kind = ecs.IntentAction
	case wire.IntentPlace:
		it.Kind = ecs.IntentPlace
	case wire.IntentTake:
		it.Kind = ecs.IntentTake
	case wire.IntentMoveItem:
		it.Kind = ecs.IntentMoveItem
	default: // the engine answers an unknown kind (MALFORMED), in order
	}
	if !bd.ha.a.Post(bd.entity, it) {
		p.sendResult(in.Seq, wire.CodeTooFast)
	}
}

// take spends one token of the intent bucket, refilling it first.
func (p *peer) take() bool {
	now := time.Now()
	cfg := &p.h.cfg
	p.tokens = min(float64(cfg.IntentBurst), p.tokens+now.Sub(p.refilled).Seconds()*cfg.IntentRate)
	p.refilled = now
	if p.tokens < 1 {
		return false
	}
	p.tokens--
	return true
}

// floodDrain is the share of IntentRate at which the flood meter drains:
// below 1, so that a client refused steadily (every other intent at twice
// the rate) fills it, while one slightly over the rate, or in a burst now
// and then, never does.
const floodDrain = 0.5

// refused counts one intent refused RATE_LIMITED on the connection's
// flood meter and returns its level: every refusal adds 1, and the meter
// drains at floodDrain x IntentRate per second, whatever got through
// meanwhile. An accepted intent does not reset it: a client sending ten
// times the rate has some intents accepted every second, and is closed
// all the same. Called right after take (its clock reading).
func (p *peer) refused() float64 {
	now := p.refilled
	if !p.floodAt.IsZero() {
		p.flood = max(0, p.flood-now.Sub(p.floodAt).Seconds()*floodDrain*p.h.cfg.IntentRate)
	}
	p.floodAt = now
	p.flood++
	return p.flood
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

func (p *peer) malformedMsg(code wire.Code, seq uint32, joinID uint64, detail string) {
	p.malformed++
	p.sendError(code, seq, joinID, detail)
	if p.malformed >= p.h.cfg.MalformedClose {
		p.conn.Close(gate.ClosePolicyViolation, "too many malformed messages")
	}
}

// sendError sends error{code, seq, join_id, detail}; any goroutine.
func (p *peer) sendError(code wire.Code, seq uint32, joinID uint64, detail string) {
	p.send(&wire.Error{Code: code, RefSeq: seq, JoinID: joinID, Detail: detail})
}

// sendResult sends intent_result{seq, code} from the event loop, without
// allocating (Send copies the bytes).
func (p *peer) sendResult(seq uint32, code wire.Code) {
	p.scratch = wire.AppendIntentResult(p.scratch[:0], seq, code)
	p.sent(len(p.scratch))
	_ = p.conn.Send(p.scratch)
}

// send encodes and queues a reliable control-rate message.
func (p *peer) send(m wire.Message) {
	b, err := wire.Encode(m)
	if err != nil {
		p.h.log.Error("encode for client", "type", m.Type(), "err", err)
		return
	}
	p.sent(len(b))
	_ = p.conn.Send(b)
}

// sent counts a reliable message in the host's output figures.
func (p *peer) sent(n int) {
	p.h.framesOut.Add(1)
	p.h.bytesOut.Add(uint64(n))
}

// unbind removes the peer's binding because of code (TAKEN_OVER,
// AREA_CLOSING, REHELLO...): it is told rehello so it is never left answered
// NOT_HELLO for ever. Area goroutine.
func (p *peer) unbind(code wire.Code, detail string) {
	p.bind.Store(nil)
	p.lost.Store(uint32(code))
	p.send(&wire.Rehello{Code: code, Detail: detail})
}
