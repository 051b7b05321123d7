package area

import (
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

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

// sent counts a reliable message in the host's output figures.
func (p *peer) sent(n int) {
	p.h.framesOut.Add(1)
	p.h.bytesOut.Add(uint64(n))
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

func (p *peer) malformedMsg(code wire.Code, seq uint32, joinID uint64, detail string) {
	p.malformed++
	p.sendError(code, seq, joinID, detail)
	if p.malformed >= p.h.cfg.MalformedClose {
		p.conn.Close(gate.ClosePolicyViolation, "too many malformed messages")
	}
}

// unbind removes the peer's binding because of code (TAKEN_OVER,
// AREA_CLOSING, REHELLO...): it is told rehello so it is never left answered
// NOT_HELLO for ever. Area goroutine.
func (p *peer) unbind(code wire.Code, detail string) {
	p.bind.Store(nil)
	p.lost.Store(uint32(code))
	p.send(&wire.Rehello{Code: code, Detail: detail})
}

// sendStatic sends p the map of hash cell hc: the floor of its squares as
// runs, and its static objects (the engine's static map).
func (ha *hostArea) sendStatic(p *peer, hc int32) {
	ha.eng.Map.Static(hc, &ha.static)
	p.send(&ha.static)
}

// setAway marks b's body away (its player's connection dropped) or back,
// telling the indexes so that clients are shown it.
func (ha *hostArea) setAway(b *body, away bool) {
	if pl := ha.players.Get(b.entity); pl != nil && pl.Away != away {
		pl.Away = away
		ha.a.Touch(b.entity)
	}
}

// route returns the body of player entity e, or nil.
func (ha *hostArea) route(e ecs.Entity) *body {
	id := e.ID()
	if int(id) >= len(ha.routes) || ha.routes[id].entity != e {
		return nil
	}
	return ha.routes[id].b
}

// floodDrain is the share of IntentRate at which the flood meter drains:
// below 1, so that a client refused steadily (every other intent at twice
// the rate) fills it, while one slightly over the rate, or in a burst now
// and then, never does.
const floodDrain = 0.5
