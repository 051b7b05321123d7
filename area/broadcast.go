package area

import (
	"sync"
	"sync/atomic"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/spatial"
)

// view is what one peer was last sent: the version of each hash cell it
// holds, and which cells its last frame carried until that frame is known
// written. Owned by the goroutine of the Area the peer is bound to.
type view struct {
	seen     []uint32 // per hash cell: version+1 the peer holds; 0 = nothing
	mark     []uint64 // per hash cell: the last round it was within interest
	inflight []int32  // cells the last frame carried
	cleared  []int32  // cells the last frame cleared
	pending  []int32  // clears whose frame never arrived, to send again
	round    uint64   // the round of the last frame
	written  atomic.Uint64
	cells    []int32 // this round's cells within radius
	prev     []int32 // last round's
}

// unknown marks a cell whose content on the client is not known (the frame
// that carried it may not have arrived): resent if in view, cleared if not.
// Versions never reach it in practice (4e9 changes of one cell).
const unknown = ^uint32(0)

// reset forgets everything the peer was sent (a new binding).
func (v *view) reset() {
	clear(v.seen)
	clear(v.mark)
	v.inflight = v.inflight[:0]
	v.cleared = v.cleared[:0]
	v.pending = v.pending[:0]
	v.cells = v.cells[:0]
	v.round = 0
}

// broadcaster builds each round's snapshot frames for an Area: every hash
// cell a peer needs is encoded once into the round's shared arena, and each
// peer's frame is its own header plus slices of that arena, written by the
// gate with writev. A peer gets the chunks of the cells within its interest
// radius whose content changed since it last received them, and an empty
// chunk for each cell that left its interest (so its view never lies).
//
// A frame that was replaced before being written (a slow reader) lost its
// chunks: the peer's next frame carries those cells again.
type broadcaster struct {
	ha     *hostArea
	hash   *spatial.Hash
	radius int32
	rnd    uint64 // the current round

	cellRound []uint64 // per hash cell: round its chunk was encoded in
	cellOff   []int32  // its offset and length in the round's arena
	cellLen   []int32
	emptyRnd  []uint64 // same for the cell's empty chunk
	emptyOff  []int32
	emptyLen  []int32
	ents      []wire.EntityState

	pos    ecs.Map[ecs.Position]
	player ecs.Map[ecs.Player]
	body   ecs.Map[ecs.Body]

	mu   sync.Mutex // guards free: OnFree runs on event loops
	free []*gate.Shared

	// deliver hands a peer its frame; the gate's SendVolatile unless a
	// benchmark stands in for the sockets.
	deliver func(p *peer, f *gate.Frame)
}

func (bc *broadcaster) init(ha *hostArea, h *spatial.Hash) error {
	bc.ha, bc.hash = ha, h
	bc.radius = int32(ha.h.cfg.InterestRadius)
	if bc.radius == 0 {
		bc.radius = -1 // everything
	}
	n := h.Cells()
	bc.cellRound = make([]uint64, n)
	bc.cellOff = make([]int32, n)
	bc.cellLen = make([]int32, n)
	bc.emptyRnd = make([]uint64, n)
	bc.emptyOff = make([]int32, n)
	bc.emptyLen = make([]int32, n)
	bc.pos = ecs.NewMap[ecs.Position](&ha.a.World)
	bc.player = ecs.NewMap[ecs.Player](&ha.a.World)
	bc.body = ecs.NewMap[ecs.Body](&ha.a.World)
	bc.deliver = func(p *peer, f *gate.Frame) {
		ha.h.framesOut.Add(1)
		ha.h.bytesOut.Add(uint64(f.Len()))
		p.conn.SendVolatile(f)
	}
	return nil
}

// newView sizes a peer's view for this Area.
func (bc *broadcaster) newView(v *view) {
	n := bc.hash.Cells()
	if len(v.seen) != n {
		v.seen = make([]uint32, n)
		v.mark = make([]uint64, n)
	}
	v.reset()
}

func (bc *broadcaster) getShared() *gate.Shared {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if n := len(bc.free); n > 0 {
		s := bc.free[n-1]
		bc.free = bc.free[:n-1]
		s.Rearm()
		return s
	}
	s := gate.NewShared(bc.recycle)
	s.Bufs = [][]byte{make([]byte, 0, 4096)}
	return s
}

// recycle takes a Shared back once no frame references it (any goroutine).
func (bc *broadcaster) recycle(s *gate.Shared) {
	bc.mu.Lock()
	bc.free = append(bc.free, s)
	bc.mu.Unlock()
}

// send sends this round's snapshot to every bound peer.
func (bc *broadcaster) send() {
	ha := bc.ha
	if ha.bound == 0 {
		return
	}
	bc.rnd++
	sh := bc.getShared()
	arena := sh.Bufs[0][:0]
	// Frames point into the arena; if it grows mid-round, the chunks already
	// handed out keep the old array alive and valid. It settles at the
	// size a round needs, after which rounds allocate nothing.
	for _, b := range ha.order {
		p := b.peer
		if p == nil {
			continue
		}
		arena = bc.frame(p, b, sh, arena)
	}
	sh.Bufs[0] = arena
	sh.Release()
}

// frame builds and sends p's frame for this round.
func (bc *broadcaster) frame(p *peer, b *body, sh *gate.Shared, arena []byte) []byte {
	v := &p.view
	if len(v.seen) != bc.hash.Cells() {
		bc.newView(v)
	}
	if v.round != 0 && v.written.Load() != v.round {
		for _, hc := range v.inflight { // the last frame may never arrive: what the client holds is unknown
			v.seen[hc] = unknown
		}
		v.pending = append(v.pending, v.cleared...)
	}
	v.cleared = v.cleared[:0]
	pos := bc.pos.Get(b.entity)
	if pos == nil {
		return arena
	}
	v.prev, v.cells = v.cells, v.prev
	v.cells = bc.hash.CellsWithin(pos.X, pos.Y, bc.radius, v.cells[:0])
	f := gate.NewFrame()
	f.Parts = append(f.Parts, nil) // the header, filled last
	v.inflight = v.inflight[:0]
	n := 0
	for _, hc := range v.cells {
		v.mark[hc] = bc.rnd
		ver := bc.hash.Version(hc) + 1
		if v.seen[hc] == ver {
			continue
		}
		var chunk []byte
		chunk, arena = bc.chunk(hc, arena)
		f.Parts = append(f.Parts, chunk)
		v.seen[hc] = ver
		v.inflight = append(v.inflight, hc)
		n++
	}
	// Cells that left the interest: clear them on the client, once; again
	// if the frame that cleared them never arrived (pending).
	for _, hc := range v.pending {
		if v.mark[hc] != bc.rnd {
			v.seen[hc] = unknown // so one of the loops below clears it
		}
	}
	for _, list := range [...][]int32{v.prev, v.pending} {
		for _, hc := range list {
			if v.mark[hc] == bc.rnd || v.seen[hc] == 0 {
				continue // in view, or already clear
			}
			var chunk []byte
			chunk, arena = bc.empty(hc, arena)
			f.Parts = append(f.Parts, chunk)
			v.seen[hc] = 0
			v.cleared = append(v.cleared, hc)
			n++
		}
	}
	v.pending = v.pending[:0]
	hdr := wire.SnapshotHeader{Tick: bc.ha.a.Tick, You: wire.You{ID: b.entity.ID(), X: pos.X, Y: pos.Y}}
	if pl := bc.player.Get(b.entity); pl != nil {
		hdr.AckSeq = pl.AckSeq
	}
	f.Buf = wire.AppendSnapshotHeader(f.Buf[:0], &hdr, n)
	f.Parts[0] = f.Buf
	f.Attach(sh)
	f.Delivered, f.Round = &v.written, bc.rnd
	v.round = bc.rnd
	bc.deliver(p, f)
	return arena
}

// chunk returns hash cell hc's chunk for this round, encoding it into the
// arena the first time a peer needs it.
func (bc *broadcaster) chunk(hc int32, arena []byte) ([]byte, []byte) {
	if bc.cellRound[hc] == bc.rnd {
		return arena[bc.cellOff[hc] : bc.cellOff[hc]+bc.cellLen[hc] : bc.cellOff[hc]+bc.cellLen[hc]], arena
	}
	bc.ents = bc.ents[:0]
	g := bc.ha.a.Grid
	for id := bc.hash.First(hc); id >= 0; id = bc.hash.Next(id) {
		e := bc.hash.Entity(id)
		x, y := g.XY(bc.hash.Square(id))
		st := wire.EntityState{ID: e.ID(), Kind: wire.KindCreature, X: x, Y: y}
		if bc.player.Has(e) {
			st.Kind = wire.KindPlayer
		}
		if bd := bc.body.Get(e); bd != nil {
			st.Facing = wire.Dir(bd.Facing)
		}
		bc.ents = append(bc.ents, st)
	}
	off := len(arena)
	arena = wire.AppendCellChunk(arena, uint32(hc), bc.ents)
	bc.cellRound[hc], bc.cellOff[hc], bc.cellLen[hc] = bc.rnd, int32(off), int32(len(arena)-off)
	return arena[off:len(arena):len(arena)], arena
}

// empty returns the chunk that clears hash cell hc on a client.
func (bc *broadcaster) empty(hc int32, arena []byte) ([]byte, []byte) {
	if bc.emptyRnd[hc] == bc.rnd {
		off, end := bc.emptyOff[hc], bc.emptyOff[hc]+bc.emptyLen[hc]
		return arena[off:end:end], arena
	}
	off := len(arena)
	arena = wire.AppendCellChunk(arena, uint32(hc), nil)
	bc.emptyRnd[hc], bc.emptyOff[hc], bc.emptyLen[hc] = bc.rnd, int32(off), int32(len(arena)-off)
	return arena[off:len(arena):len(arena)], arena
}
