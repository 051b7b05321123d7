package persist

import (
	"fmt"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/persist/blob"
)

// The blob's version, size bound and error, as package blob has them.
const (
	Version = blob.Version
	MaxBlob = blob.MaxBlob
)

// ErrBlob reports a blob Load cannot use.
var ErrBlob = blob.ErrBlob

// Creature, Door, Placed, Stack and Tally are as the blob keeps them.
type (
	Creature = blob.Creature
	Door     = blob.Door
	Placed   = blob.Placed
	Stack    = blob.Stack
	Tally    = blob.Tally
)

// Items is an Area's items as its blob keeps them: the placed ones (with
// their containers' contents), the counter of the ids it mints, and its
// ledger (systems/items saves and restores them).
type Items struct {
	Placed             []Placed
	Next               uint32
	Created, Destroyed []Tally
}

// State is what Load hands back for the host to restore: the doors and
// the creatures.
type State struct {
	Doors     []Door
	Creatures []Creature
}

// Save returns a's durable state, with the doors and items its systems
// keep (items may be nil). Call it on the goroutine ticking a.
func Save(a *ecs.Area, doors []Door, items *Items) ([]byte, error) {
	b := blob.Blob{Version: Version, Tick: a.Tick, W: int(a.Grid.W()), H: int(a.Grid.H()), Doors: doors}
	if items != nil {
		b.Placed, b.NextItem, b.Created, b.Destroyed = items.Placed, items.Next, items.Created, items.Destroyed
	}
	q := ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Wander]().Query(&a.World)
	for q.Next() {
		p, m, w := q.Get()
		b.Wanderers = append(b.Wanderers, blob.Wanderer{X: p.X, Y: p.Y, Seed: w.Seed, Every: w.Every, Per: m.Period})
	}
	cq := ecs.NewFilter3[ecs.Position, ecs.Creature, ecs.Health]().Query(&a.World)
	for cq.Next() {
		p, c, h := cq.Get()
		if h.HP == 0 {
			continue // dying: it is gone at the next barrier
		}
		b.Creatures = append(b.Creatures, Creature{X: p.X, Y: p.Y, Kind: c.Kind, Spawner: c.Spawner, HP: h.HP, Seed: c.Seed})
	}
	out, err := blob.Encode(&b)
	if err != nil {
		return nil, fmt.Errorf("persist: save area %d: %w", a.ID, err)
	}
	return out, nil
}

// Load restores a blob from Save into a, which must be a fresh Area of the
// same size with no bodies and its map laid: it hands the items to place
// (when place is not nil; before any body stands, so no body takes an
// item's square), puts the wanderers back, and hands back the doors and
// creatures for the host. It refuses a blob of another size or version,
// one [Check] refuses, and one place refuses. A body whose square the map
// no longer leaves free (the content changed since the blob was saved) is
// left out rather than failing the Area.
func Load(a *ecs.Area, data []byte, place func(*Items) error) (State, error) {
	b, err := blob.Decode(data, int(a.Grid.W()), int(a.Grid.H()))
	if err != nil {
		return State{}, err
	}
	if b.Version == 1 {
		copy(a.Grid.Layer(ecs.LayerFloor), b.Floor)
	}
	if place != nil {
		if err := place(&Items{Placed: b.Placed, Next: b.NextItem, Created: b.Created, Destroyed: b.Destroyed}); err != nil {
			return State{}, fmt.Errorf("persist: load area %d: %w", a.ID, err)
		}
	}
	for _, w := range b.Wanderers {
		_, _ = a.SpawnWanderer(w.X, w.Y, w.Seed, w.Per, w.Every) // a square taken by the map now: one fewer
	}
	a.Tick = b.Tick
	return State{Doors: b.Doors, Creatures: b.Creatures}, nil
}

// Check reports whether Load would accept data for a fresh Area of w x h
// squares (blob.Check).
func Check(data []byte, w, h int) error { return blob.Check(data, w, h) }
