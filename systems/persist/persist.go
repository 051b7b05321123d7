// Package persist turns an Area's durable state into a blob and back: the
// non-player bodies (wanderers with their random state; creatures with
// their kind, spawner and health) and the state of its doors. The map
// itself is not in the blob: the Area's template rebuilds it. Players are
// not in the blob either: their characters live in rows of their own (the
// director's characters table), so a player who moved on is never
// restored by an old Area blob.
//
// The blob is CBOR (integer-keyed map, so later versions can add fields)
// and carries a version; Load refuses versions it does not know. Version
// 1 blobs (which carried the floor layer and no creatures) still load.
package persist

import (
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
	"github.com/leyworks/ley/ecs"
)

// Version is the blob format written by Save.
const Version = 2

// MaxBlob bounds a blob Load accepts.
const MaxBlob = 8 << 20

// ErrBlob reports a blob Load cannot use.
var ErrBlob = errors.New("persist: bad area blob")

type wanderer struct {
	X     int32  `cbor:"1,keyasint"`
	Y     int32  `cbor:"2,keyasint"`
	Seed  uint32 `cbor:"3,keyasint"`
	Every uint8  `cbor:"4,keyasint"`
	Per   uint8  `cbor:"5,keyasint"`
}

// Creature is a creature as the blob keeps it: Load hands them back for
// the Area's creature system to put into the world (it knows the kinds
// and spawners they refer to).
type Creature struct {
	X       int32  `cbor:"1,keyasint"`
	Y       int32  `cbor:"2,keyasint"`
	Kind    uint16 `cbor:"3,keyasint"`
	Spawner uint16 `cbor:"4,keyasint"`
	HP      uint16 `cbor:"5,keyasint"`
	Seed    uint32 `cbor:"6,keyasint"`
}

// Door is a door's state: its object ID in the Area's map, and whether it
// stands open.
type Door struct {
	ID   uint32 `cbor:"1,keyasint"`
	Open bool   `cbor:"2,keyasint"`
}

// State is what Load hands back for the host to restore: the doors and
// the creatures.
type State struct {
	Doors     []Door
	Creatures []Creature
}

type blob struct {
	Version   int        `cbor:"1,keyasint"`
	Tick      uint64     `cbor:"2,keyasint"`
	W         int        `cbor:"3,keyasint"`
	H         int        `cbor:"4,keyasint"`
	Floor     []int32    `cbor:"5,keyasint,omitempty"` // version 1 only
	Wanderers []wanderer `cbor:"6,keyasint,omitempty"`
	Creatures []Creature `cbor:"7,keyasint,omitempty"`
	Doors     []Door     `cbor:"8,keyasint,omitempty"`
}

var decMode, _ = cbor.DecOptions{
	MaxNestedLevels:  8,
	MaxArrayElements: ecs.MaxGridSide * ecs.MaxGridSide,
	MaxMapPairs:      64,
	IndefLength:      cbor.IndefLengthForbidden,
}.DecMode()

var encMode, _ = cbor.CoreDetEncOptions().EncMode()

// Save returns a's durable state, with the doors the host keeps. Call it
// on the goroutine ticking a.
func Save(a *ecs.Area, doors []Door) ([]byte, error) {
	b := blob{Version: Version, Tick: a.Tick, W: int(a.Grid.W()), H: int(a.Grid.H()), Doors: doors}
	q := ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Wander]().Query(&a.World)
	for q.Next() {
		p, m, w := q.Get()
		b.Wanderers = append(b.Wanderers, wanderer{X: p.X, Y: p.Y, Seed: w.Seed, Every: w.Every, Per: m.Period})
	}
	cq := ecs.NewFilter3[ecs.Position, ecs.Creature, ecs.Health]().Query(&a.World)
	for cq.Next() {
		p, c, h := cq.Get()
		if h.HP == 0 {
			continue // dying: it is gone at the next barrier
		}
		b.Creatures = append(b.Creatures, Creature{X: p.X, Y: p.Y, Kind: c.Kind, Spawner: c.Spawner, HP: h.HP, Seed: c.Seed})
	}
	out, err := encMode.Marshal(&b)
	if err != nil {
		return nil, fmt.Errorf("persist: save area %d: %w", a.ID, err)
	}
	return out, nil
}

// Load restores a blob from Save into a, which must be a fresh Area of the
// same size with no bodies and its map laid: it puts the wanderers back
// and hands back the doors and creatures for the host. It refuses a blob
// of another size or version, and one [Check] refuses. A body whose square
// the map no longer leaves free (the content changed since the blob was
// saved) is left out rather than failing the Area.
func Load(a *ecs.Area, data []byte) (State, error) {
	b, err := decode(data, int(a.Grid.W()), int(a.Grid.H()))
	if err != nil {
		return State{}, err
	}
	if b.Version == 1 {
		copy(a.Grid.Layer(ecs.LayerFloor), b.Floor)
	}
	for _, w := range b.Wanderers {
		_, _ = a.SpawnWanderer(w.X, w.Y, w.Seed, w.Per, w.Every) // a square taken by the map now: one fewer
	}
	a.Tick = b.Tick
	return State{Doors: b.Doors, Creatures: b.Creatures}, nil
}

// Check reports whether Load would accept data for a fresh Area of w x h
// squares, without building one (an error wrapping ErrBlob if not): the
// director checks each snapshot's blob before storing it, so a blob that
// no host could load never replaces a good one. It costs one decode.
func Check(data []byte, w, h int) error {
	_, err := decode(data, w, h)
	return err
}

// decode decodes data and checks it fits a fresh w x h Area: its version,
// its size, every body on the grid (and, in a version 1 blob, off the
// walls) and on a square of its own, and no door twice.
func decode(data []byte, w, h int) (*blob, error) {
	if len(data) > MaxBlob {
		return nil, fmt.Errorf("%w: %d bytes", ErrBlob, len(data))
	}
	var b blob
	if err := decMode.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBlob, err)
	}
	switch b.Version {
	case 1:
		if len(b.Floor) != w*h || len(b.Creatures) > 0 || len(b.Doors) > 0 {
			return nil, fmt.Errorf("%w: a version 1 blob with %d floor squares for a %dx%d area, %d creatures, %d doors", ErrBlob, len(b.Floor), w, h, len(b.Creatures), len(b.Doors))
		}
	case Version:
		if len(b.Floor) != 0 {
			return nil, fmt.Errorf("%w: a version %d blob carries no floor", ErrBlob, Version)
		}
	default:
		return nil, fmt.Errorf("%w: version %d, this build reads 1 and %d", ErrBlob, b.Version, Version)
	}
	if b.W != w || b.H != h {
		return nil, fmt.Errorf("%w: %dx%d blob for a %dx%d area", ErrBlob, b.W, b.H, w, h)
	}
	taken := make(map[int32]struct{}, len(b.Wanderers)+len(b.Creatures))
	body := func(what string, x, y int32) error {
		if x < 0 || y < 0 || int(x) >= w || int(y) >= h {
			return fmt.Errorf("%w: %s at (%d,%d) is off the grid", ErrBlob, what, x, y)
		}
		c := y*int32(w) + x
		if b.Version == 1 && b.Floor[c] == ecs.FloorWall {
			return fmt.Errorf("%w: %s at (%d,%d) stands in a wall", ErrBlob, what, x, y)
		}
		if _, dup := taken[c]; dup {
			return fmt.Errorf("%w: two bodies at (%d,%d)", ErrBlob, x, y)
		}
		taken[c] = struct{}{}
		return nil
	}
	for _, wd := range b.Wanderers {
		if err := body("wanderer", wd.X, wd.Y); err != nil {
			return nil, err
		}
	}
	for _, c := range b.Creatures {
		if err := body("creature", c.X, c.Y); err != nil {
			return nil, err
		}
		if c.HP == 0 || c.Kind == 0 {
			return nil, fmt.Errorf("%w: creature at (%d,%d) of kind %d with %d hp", ErrBlob, c.X, c.Y, c.Kind, c.HP)
		}
	}
	doors := make(map[uint32]struct{}, len(b.Doors))
	for _, d := range b.Doors {
		if _, dup := doors[d.ID]; dup {
			return nil, fmt.Errorf("%w: door %d twice", ErrBlob, d.ID)
		}
		doors[d.ID] = struct{}{}
	}
	return &b, nil
}
