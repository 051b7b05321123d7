package ecs

import (
	"errors"
	"fmt"
)

// ErrNotParked reports a Renew of an Area that holds its world: only a
// parked Area's restore renews it.
var ErrNotParked = errors.New("ecs: renew of an Area that is not parked")

// Park lets go of what a frozen Area holds, its world, grid, systems,
// indexes and component maps, so that an Area nobody uses costs little
// more than its shell: its ID, Rules, TickRate and Tick, its inbox, timer
// and mode, its place in its Clock, the hooks its owner set (AfterTick,
// OnTimer, Rest, OnPanic, OnControl) and its census (its bodies leave the
// count until they are back). The systems' hooks (OnAction, OnDeath,
// OnItem) go with the systems.
//
// The next time the Area runs, a tick, a poll, control work or Step,
// restore runs first, on that goroutine and inside the Area's fault
// boundary: it must make the Area whole again (Renew, then its systems and
// its state), and a panic in it fails the Area as a panic in a tick does.
// Parking is the owner's to decide: it keeps what restore needs (the
// Area's state as a blob) and must not park an Area whose state it could
// not build again.
//
// Park a frozen Area only, from its goroutine, outside a query and with
// no deferred work; it panics otherwise, and on an Area parked already.
// Answers waiting in the Outbox stay for AfterTick (a poll's stray
// intents are answered before its timer fires).
func (a *Area) Park(restore func(a *Area)) {
	switch {
	case restore == nil:
		panic("ecs: Park with no restore")
	case a.restore != nil:
		panic("ecs: Park of a parked Area")
	case a.Mode() != Frozen:
		panic("ecs: Park of an active Area")
	case a.World.IsLocked() || len(a.deferred) > 0 || len(a.dying) > 0:
		panic("ecs: Park of an Area with work in flight")
	}
	a.counted(-a.entities)
	a.World, a.Grid = World{}, nil
	a.Intents, a.Moves, a.Events = nil, nil, nil
	a.MovesPending, a.dying, a.byID, a.indexes = 0, nil, nil, nil
	a.players, a.wanderers, a.creatures = 0, 0, 0
	a.systems, a.idlers, a.sysLast = nil, nil, nil
	a.stats.mu.Lock()
	a.stats.systems = nil
	a.stats.mu.Unlock()
	a.posMap, a.bodyMap, a.playerMap, a.moverMap = Map[Position]{}, Map[Body]{}, Map[Player]{}, Map[Mover]{}
	a.intentsMap, a.pathMap, a.transitMap = Map[Intents]{}, Map[Path]{}, Map[Transit]{}
	a.creatureMap, a.healthMap, a.inventoryMap = Map[Creature]{}, Map[Health]{}, Map[Inventory]{}
	a.playerIDs, a.wandererIDs = nil, nil
	a.OnAction, a.OnDeath, a.OnItem = nil, nil, nil
	a.restore = restore
}

// Parked reports whether the Area is parked (Park) and not yet restored.
// Call it from the goroutine running the Area.
func (a *Area) Parked() bool { return a.restore != nil }

// Renew gives a parked Area, from inside its restore, an empty world and
// grid as NewArea makes them for cfg (which must name the same Area at the
// same tick rate); its tick, inbox, timer, Clock and hooks stay. The
// restore then adds its systems (Use) and state, as for a new Area.
func (a *Area) Renew(cfg Config) error {
	if a.Grid != nil {
		return ErrNotParked
	}
	if err := cfg.fill(); err != nil {
		return err
	}
	if cfg.ID != a.ID || cfg.TickRate != a.TickRate {
		return fmt.Errorf("ecs: renew area %d at %d Hz as area %d at %d Hz", a.ID, a.TickRate, cfg.ID, cfg.TickRate)
	}
	a.Rules = cfg.Rules
	return a.makeWorld(cfg)
}

// unpark runs a parked Area's restore (Park), before anything else of a
// run; a restore that leaves the Area without a world is a fault of the
// Area.
func (a *Area) unpark() {
	restore := a.restore
	if restore == nil {
		return
	}
	a.restore = nil
	restore(a)
	if a.Grid == nil {
		panic(fmt.Sprintf("ecs: area %d: its restore did not renew it", a.ID))
	}
}
