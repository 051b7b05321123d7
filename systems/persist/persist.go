// Package persist turns an Area's durable state into a blob and back: the
// floor layer and the non-player bodies (wanderers and their random state).
// Players are not in the blob: their characters live in rows of their own
// (the director's characters table), so a player who moved on is never
// restored by an old Area blob.
//
// The blob is CBOR (integer-keyed map, so later versions can add fields)
// and carries a version; Load refuses versions it does not know.
package persist

import (
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
	"github.com/leyworks/ley/ecs"
)

// Version is the blob format written by Save.
const Version = 1

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

type blob struct {
	Version   int        `cbor:"1,keyasint"`
	Tick      uint64     `cbor:"2,keyasint"`
	W         int        `cbor:"3,keyasint"`
	H         int        `cbor:"4,keyasint"`
	Floor     []int32    `cbor:"5,keyasint"`
	Wanderers []wanderer `cbor:"6,keyasint"`
}

var decMode, _ = cbor.DecOptions{
	MaxNestedLevels:  8,
	MaxArrayElements: ecs.MaxGridSide * ecs.MaxGridSide,
	MaxMapPairs:      64,
	IndefLength:      cbor.IndefLengthForbidden,
}.DecMode()

var encMode, _ = cbor.CoreDetEncOptions().EncMode()

// Save returns a's durable state. Call it on the goroutine ticking a.
func Save(a *ecs.Area) ([]byte, error) {
	b := blob{Version: Version, Tick: a.Tick, W: int(a.Grid.W()), H: int(a.Grid.H()), Floor: a.Grid.Layer(ecs.LayerFloor)}
	q := ecs.NewFilter3[ecs.Position, ecs.Mover, ecs.Wander]().Query(&a.World)
	for q.Next() {
		p, m, w := q.Get()
		b.Wanderers = append(b.Wanderers, wanderer{X: p.X, Y: p.Y, Seed: w.Seed, Every: w.Every, Per: m.Period})
	}
	out, err := encMode.Marshal(&b)
	if err != nil {
		return nil, fmt.Errorf("persist: save area %d: %w", a.ID, err)
	}
	return out, nil
}

// Load restores a blob from Save into a, which must be a fresh Area of the
// same size with no bodies. It refuses a blob of another size or version,
// and one [Check] refuses.
func Load(a *ecs.Area, data []byte) error {
	b, err := decode(data, int(a.Grid.W()), int(a.Grid.H()))
	if err != nil {
		return err
	}
	copy(a.Grid.Layer(ecs.LayerFloor), b.Floor)
	for _, w := range b.Wanderers {
		if _, err := a.SpawnWanderer(w.X, w.Y, w.Seed, w.Per, w.Every); err != nil {
			return fmt.Errorf("%w: wanderer at (%d,%d): %v", ErrBlob, w.X, w.Y, err)
		}
	}
	a.Tick = b.Tick
	return nil
}

// Check reports whether Load would accept data for a fresh Area of w x h
// squares, without building one (an error wrapping ErrBlob if not): the
// director checks each snapshot's blob before storing it, so a blob that
// no host could load never replaces a good one. It costs one decode of the
// blob: the floor's w*h int32 and a set of the wanderers' squares.
func Check(data []byte, w, h int) error {
	_, err := decode(data, w, h)
	return err
}

// decode decodes data and checks it fits a fresh w x h Area: its version,
// its size, and every wanderer on a walkable square of its own.
func decode(data []byte, w, h int) (*blob, error) {
	if len(data) > MaxBlob {
		return nil, fmt.Errorf("%w: %d bytes", ErrBlob, len(data))
	}
	var b blob
	if err := decMode.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBlob, err)
	}
	if b.Version != Version {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrBlob, b.Version, Version)
	}
	if b.W != w || b.H != h || len(b.Floor) != w*h {
		return nil, fmt.Errorf("%w: %dx%d blob for a %dx%d area", ErrBlob, b.W, b.H, w, h)
	}
	taken := make(map[int32]struct{}, len(b.Wanderers))
	for _, wd := range b.Wanderers {
		if wd.X < 0 || wd.Y < 0 || int(wd.X) >= w || int(wd.Y) >= h {
			return nil, fmt.Errorf("%w: wanderer at (%d,%d) is off the grid", ErrBlob, wd.X, wd.Y)
		}
		c := wd.Y*int32(w) + wd.X
		if b.Floor[c] == ecs.FloorWall {
			return nil, fmt.Errorf("%w: wanderer at (%d,%d) stands in a wall", ErrBlob, wd.X, wd.Y)
		}
		if _, dup := taken[c]; dup {
			return nil, fmt.Errorf("%w: two wanderers at (%d,%d)", ErrBlob, wd.X, wd.Y)
		}
		taken[c] = struct{}{}
	}
	return &b, nil
}
