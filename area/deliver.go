package area

import (
	"sync"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/systems/interest"
)

// snapshots delivers an Area's snapshot rounds (systems/interest builds
// them) to its bound sessions: one shared arena per round, each peer's
// frame written with writev from it, latest-wins. Owned by the Area's
// goroutine, but for its pool of arenas, which the gate's event loops
// give back to.
type snapshots struct {
	frame interest.Frame

	mu   sync.Mutex // guards free: a Shared's OnFree runs on event loops
	free []*gate.Shared
}

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
		f := gate.NewFrame()
		out.Parts, out.Buf = f.Parts[:0], f.Buf[:0]
		arena = is.Build(&p.view, b.entity, ack, arena, out)
		f.Parts, f.Buf = out.Parts, out.Buf
		if len(f.Parts) == 0 {
			f.Release()
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

// setAway marks b's body away (its player's connection dropped) or back,
// telling the indexes so that clients are shown it.
func (ha *hostArea) setAway(b *body, away bool) {
	if pl := ha.players.Get(b.entity); pl != nil && pl.Away != away {
		pl.Away = away
		ha.a.Touch(b.entity)
	}
}
