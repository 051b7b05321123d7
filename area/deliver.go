package area

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
)

// arena returns a round's shared arena, recycled once no frame refers to
// it any more.
func (s *snapshots) arena() *gate.Shared {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		sh := s.free[n-1]
		s.free = s.free[:n-1]
		sh.Rearm()
		return sh
	}
	sh := gate.NewShared(s.recycle)
	sh.Bufs = [][]byte{make([]byte, 0, 4096)}
	return sh
}

// recycle takes a Shared back once no frame references it (any goroutine).
func (s *snapshots) recycle(sh *gate.Shared) {
	s.mu.Lock()
	s.free = append(s.free, sh)
	s.mu.Unlock()
}

// sendSnapshots runs this round: the records of what changed since the
// last round, then every bound peer's frame, the maps (static) of its
// cells that changed sent before it.
func (ha *hostArea) sendSnapshots() {
	is := ha.interest
	if ha.bound == 0 && !ha.spectated() {
		is.Round(nil) // no frame to build: only keep what clients would be told in step
		return
	}
	sh := ha.snaps.arena()
	arena := is.Round(sh.Bufs[0][:0])
	out := &ha.snaps.frame
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		var ack uint32
		if pl := ha.players.Get(b.entity); pl != nil {
			ack = pl.AckSeq
		}
		var f *gate.Frame
		if f, arena = ha.build(&p.view, b.entity, ack, arena); f == nil {
			continue
		}
		for _, hc := range out.Statics {
			ha.sendStatic(p, hc)
		}
		f.Attach(sh)
		f.Delivered, f.Round = &p.view.Written, out.Round
		ha.h.framesOut.Add(1)
		ha.h.bytesOut.Add(uint64(out.Len))
		p.conn.SendVolatile(f)
	}
	arena = ha.spectatorFrames(arena, sh)
	sh.Bufs[0] = arena
	sh.Release()
}

// release ends every session at the end of a close's grace: every intent
// still waiting is refused (code), every answer delivered, then each peer
// gets a last snapshot (reliable: its final ack_seq), rehello{code} and
// the close (1001). Nothing is applied after: the final snapshot persisted
// next holds everything every peer was told.
func (ha *hostArea) release(code wire.Code) {
	ha.a.RefuseAll(ecs.OutcomeClosing)
	ha.deliverAnswers(ha.a)
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		p.bind.Store(nil)
		p.lost.Store(uint32(code))
		p.send(ha.finalSnapshot(b))
		p.send(&wire.Rehello{Code: code, Detail: "the area closed"})
		p.conn.Close(gate.CloseGoingAway, "area closed")
		b.peer = nil
	}
	ha.bound = 0
}

// deliverAnswers sends the rejections in the Outbox to the sessions that
// sent those intents (applied ones are acknowledged by the snapshots'
// ack_seq), then empties it.
func (ha *hostArea) deliverAnswers(a *ecs.Area) {
	for i := range a.Outbox {
		ans := &a.Outbox[i]
		if ans.Outcome == ecs.OutcomeApplied {
			continue // acknowledged by the snapshot's ack_seq
		}
		b := ha.route(ans.Entity)
		if b == nil || b.peer == nil || b.session != ans.Tag {
			continue // its session is over; nobody is left to tell
		}
		ha.answerBuf = wire.AppendIntentResult(ha.answerBuf[:0], ans.Seq, tell.Code(ans.Outcome))
		b.peer.sent(len(ha.answerBuf))
		_ = b.peer.conn.Send(ha.answerBuf)
	}
	a.Outbox = a.Outbox[:0]
}
