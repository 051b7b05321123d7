package area

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
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

	// Owned by the connection's event loop (OnMessage runs one at a time).
	tokens    float64
	refilled  time.Time
	flood     int
	malformed int
	unbound   int         // NOT_HELLO and REHELLO answers in a row
	helloBy   *time.Timer // closes the connection if no hello binds it in time
	intent    wire.Intent
	scratch   []byte

	// Owned by the goroutine of the Area the peer is bound to.
	version     uint16
	view        peerView
	hasPresence bool // the Area's presence list was sent to it
}

func (h *Host) onOpen(c *gate.Conn) {
	p := &peer{h: h, conn: c, tokens: float64(h.cfg.IntentBurst), refilled: time.Now(), scratch: make([]byte, 0, 64)}
	c.SetValue(p)
	h.peers.Add(1)
	// A connection that never says hello holds a socket and a slot for
	// nothing: it gets HelloTimeout to be bound.
	p.helloBy = time.AfterFunc(h.cfg.HelloTimeout, func() {
		if p.bind.Load() == nil && p.lost.Load() == 0 && !p.pending.Load() {
			h.helloTimeouts.Add(1)
			c.Close(gate.ClosePolicyViolation, "no hello in time")
		}
	})
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
		p.malformedMsg(wire.CodeOf(err), 0, 0, err.Error())
		return
	}
	switch t {
	case wire.TypeIntent:
		p.onIntent(payload)
	case wire.TypeHello, wire.TypeResume:
		p.onJoin(payload)
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
			p.malformedMsg(wire.CodeOf(derr), 0, 0, derr.Error())
			return
		}
		in.Seq = seq
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
		p.flood++
		if p.flood >= p.h.cfg.FloodClose {
			p.h.log.Warn("closing a flooding peer", "peer", p.conn.RemoteAddr(), "area", bd.ha.id)
			p.conn.Close(gate.ClosePolicyViolation, "intent flood")
			return
		}
		p.sendResult(in.Seq, wire.CodeRateLimited)
		return
	}
	p.flood = 0
	it := ecs.Intent{Seq: in.Seq, Dir: ecs.Dir(in.Dir), X: in.Target.X, Y: in.Target.Y, Tag: bd.session}
	switch in.Kind {
	case wire.IntentStep:
		it.Kind = ecs.IntentStep
	case wire.IntentMoveTo:
		it.Kind = ecs.IntentMoveTo
	case wire.IntentStop:
		it.Kind = ecs.IntentStop
	case wire.IntentAction:
		it.Kind = ecs.IntentAction
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

// onJoin routes a hello or resume to the Area holding its grant or body.
func (p *peer) onJoin(payload []byte) {
	msg, err := wire.DecodeClient(payload)
	if err != nil {
		p.malformedMsg(wire.CodeOf(err), 0, 0, err.Error())
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
			p.sendError(wire.CodeVersionUnsupported, 0, joinID, "this server speaks protocol version 1")
			p.conn.Close(gate.ClosePolicyViolation, "no common protocol version")
			return
		}
		version = v
	case *wire.Resume:
		token, joinID, index = m.Token, m.JoinID, p.h.resumes
	}
	if p.bind.Load() != nil {
		p.sendError(wire.CodeUnknownType, 0, joinID, "already bound; hello is accepted only after rehello")
		return
	}
	if !p.pending.CompareAndSwap(false, true) {
		p.sendError(wire.CodeUnknownType, 0, joinID, "a hello is already being answered")
		return
	}
	p.h.mu.Lock()
	ha := index[token]
	p.h.mu.Unlock()
	if ha == nil {
		p.pending.Store(false)
		switch msg.(type) {
		case *wire.Resume:
			p.sendError(wire.CodeBadToken, 0, joinID, "unknown or expired resume token")
		default:
			if p.h.expiredGrant(token) {
				p.sendError(wire.CodeGrantExpired, 0, joinID, "grant expired")
			} else {
				p.sendError(wire.CodeBadGrant, 0, joinID, "unknown or used grant")
			}
		}
		return
	}
	if !ha.joining(p, joinID) {
		p.pending.Store(false)
		p.sendError(wire.CodeInternal, 0, joinID, "the area failed; join it again")
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
