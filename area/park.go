package area

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/interest"
)

// Parking (docs/operations.md, "Parked Areas"; docs/items.md, "A parked
// Area"): an Area frozen for Config.ParkAfter with nothing in flight
// keeps its state as the blob it persists and lets go of its world
// (ecs.Area.Park); whatever runs it next builds it again from that blob
// first (unpark). Its fence: the blob it parks is the one the director
// holds, acked. An Area whose state differs from its last snapshot's
// persists first and parks once that snapshot is acked, so a rebuild
// that fails loses nothing: the director places the Area again from the
// same state.

// mayPark reports whether the Area may park, time aside: parking is on,
// and it is frozen, whole, and nothing is here, coming, watching or in
// flight (a close, a crossing, a snapshot the director has not acked, a
// departed character's state, an armed failpoint). A spectator's grant
// not yet used does not keep it: the grant is the host's, kept as it is,
// and the spectator's hello builds the Area again. Area goroutine.
func (ha *hostArea) mayPark() bool {
	return ha.h.cfg.ParkAfter > 0 && ha.a.Mode() == ecs.Frozen && !ha.a.Parked() && ha.closing == nil && !ha.fenced &&
		ha.bound == 0 && len(ha.grants) == 0 && len(ha.bodies) == 0 && len(ha.crossings) == 0 && len(ha.settling) == 0 &&
		len(ha.departed) == 0 && ha.unacked == nil && !ha.spectated() && ha.panicPoint == ""
}

// armPark sets the timer of a frozen Area that may park (mayPark) to its
// park time, once what kept it from parking is gone (its last snapshot
// acked, its departures written); it leaves the timer of any other Area
// as it is. Area goroutine.
func (ha *hostArea) armPark() {
	if t := ha.parkTime(); !t.IsZero() {
		ha.a.SetTimer(t)
	}
}

// parkTime is when the frozen Area parks, the zero time when it may not
// (mayPark): the timer a frozen Area with nothing else to do is left
// with.
func (ha *hostArea) parkTime() time.Time {
	if !ha.mayPark() {
		return time.Time{}
	}
	return ha.parkAt
}

// park parks the Area if its state is the one the director holds; else it
// persists that state, and parks once it is acked (onAck sets the timer
// again). It reports whether the Area parked. Area goroutine, in its
// chores, with mayPark true.
func (ha *hostArea) park(now time.Time) bool {
	blob, err := ha.eng.Save()
	if err != nil {
		ha.h.log.Error("park area: save its state", "area", ha.id, "err", err)
		ha.parkAt = now.Add(ha.h.cfg.ParkAfter)
		return false
	}
	if blobSum(blob) != ha.persistedSum {
		ha.persist(now, false)
		return false
	}
	a, g := ha.a, ha.a.Grid
	ha.parkedView.Store(&parkedView{epoch: ha.epoch, blob: blob, w: int(g.W()), h: int(g.H()), tick: a.Tick,
		bodies: a.Players() + a.Wanderers() + a.Creatures(), creatures: a.Creatures()})
	ha.parked = blob
	ha.eng, ha.interest = nil, nil
	ha.intents, ha.players, ha.positions, ha.paths = ecs.Map[ecs.Intents]{}, ecs.Map[ecs.Player]{}, ecs.Map[ecs.Position]{}, ecs.Map[ecs.Path]{}
	// Entity IDs start again in the world built back: no route or
	// spectator scratch may name one of this world's.
	ha.routes = nil
	ha.watchers = watchers{grants: ha.watchers.grants}
	ha.snaps.frame = interest.Frame{}
	ha.static = wire.Static{}
	ha.answerBuf = nil
	ha.a.Park(ha.unpark)
	ha.h.parked.Add(1)
	ha.h.parkedOne(ha.bytes)
	ha.h.log.Debug("area parked", "area", ha.id, "blob_bytes", len(blob))
	return true
}

// unpark is the parked Area's ecs restore: it builds the Area again from
// its spec and parked blob, before anything else runs in it, and gives it
// ParkAfter from now before it parks again. A failure panics: the Area
// fails, and the director places it again from its last acked snapshot,
// which holds the same state (park). Area goroutine.
func (ha *hostArea) unpark(a *ecs.Area) {
	ha.parkedView.Store(nil)
	if _, err := ha.assemble(a, ha.parked); err != nil {
		panic(fmt.Errorf("area %d: build the parked area again: %w", ha.id, err))
	}
	ha.parked = nil
	ha.h.parked.Add(-1)
	ha.parkAt = time.Now().Add(ha.h.cfg.ParkAfter)
	ha.armPark()
}

// giveBackAt and giveBackAfter: once parked Areas let go of giveBackAt
// bytes (their estimates) since the host last gave memory back, it gives
// it back giveBackAfter later, once for the burst.
const (
	giveBackAt    = 16 << 20
	giveBackAfter = time.Second
)

// parkedOne counts the n bytes an Area that parked let go of, and arms the
// give-back of a burst of them: the collector frees their worlds, but a
// quiet host allocates too little for a collection to come, and the
// runtime keeps what it freed for a heap as large as before. One forced
// collection (debug.FreeOSMemory) a second at most, and only after some
// 400 homes parked. Area goroutine.
func (h *Host) parkedOne(n int64) {
	if h.letGo.Add(n) < giveBackAt || !h.giveBack.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(giveBackAfter, func() {
		h.letGo.Store(0)
		h.giveBack.Store(false)
		debug.FreeOSMemory()
	})
}

// state is the parked Area's control.AreaState (hostArea.state), with its
// items when asked (hostArea.items): what it will be built again with.
func (pv *parkedView) state(area uint32, items bool, now time.Time) control.AreaState {
	st := control.AreaState{Area: area, Epoch: pv.epoch, Tick: pv.tick, Bodies: pv.bodies, Creatures: pv.creatures, ReadUS: now.UnixMicro()}
	if items {
		st.Items = &control.AreaItems{W: pv.w, H: pv.h, Blob: pv.blob, Characters: []control.Character{}}
	}
	return st
}
