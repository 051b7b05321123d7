package blob

import (
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Version is the blob format written now.
const Version = 2

// MaxBlob bounds a blob Decode accepts.
const MaxBlob = 8 << 20

// maxSide is the largest grid side a blob may describe (ecs.MaxGridSide;
// persist's tests hold the two equal).
const maxSide = 4096

// wallFloor is a version 1 floor's wall value (ecs.FloorWall; persist's
// tests hold the two equal).
const wallFloor = 0

// ErrBlob reports a blob that cannot be used.
var ErrBlob = errors.New("persist: bad area blob")

// Wanderer is a wandering body: its square, random state and pace.
type Wanderer struct {
	X     int32  `cbor:"1,keyasint"`
	Y     int32  `cbor:"2,keyasint"`
	Seed  uint32 `cbor:"3,keyasint"`
	Every uint8  `cbor:"4,keyasint"`
	Per   uint8  `cbor:"5,keyasint"`
}

// Creature is a creature as the blob keeps it; persist.Load hands them
// back for the Area's creature system to put into the world (it knows the
// kinds and spawners they refer to).
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

// Blob is an Area's durable state.
type Blob struct {
	Version   int        `cbor:"1,keyasint"`
	Tick      uint64     `cbor:"2,keyasint"`
	W         int        `cbor:"3,keyasint"`
	H         int        `cbor:"4,keyasint"`
	Floor     []int32    `cbor:"5,keyasint,omitempty"` // version 1 only
	Wanderers []Wanderer `cbor:"6,keyasint,omitempty"`
	Creatures []Creature `cbor:"7,keyasint,omitempty"`
	Doors     []Door     `cbor:"8,keyasint,omitempty"`
}

var decMode, _ = cbor.DecOptions{
	MaxNestedLevels:  8,
	MaxArrayElements: maxSide * maxSide,
	MaxMapPairs:      64,
	IndefLength:      cbor.IndefLengthForbidden,
}.DecMode()

var encMode, _ = cbor.CoreDetEncOptions().EncMode()

// Encode returns b's bytes (deterministic CBOR).
func Encode(b *Blob) ([]byte, error) { return encMode.Marshal(b) }

// Check reports whether persist.Load would accept data for a fresh Area of
// w x h squares, without building one (an error wrapping ErrBlob if not): the
// director checks each snapshot's blob before storing it, so a blob that
// no host could load never replaces a good one. It costs one decode.
func Check(data []byte, w, h int) error {
	_, err := Decode(data, w, h)
	return err
}

// Decode decodes data and checks it fits a fresh w x h Area: its version,
// its size, every body on the grid (and, in a version 1 blob, off the
// walls) and on a square of its own, and no door twice.
func Decode(data []byte, w, h int) (*Blob, error) {
	if len(data) > MaxBlob {
		return nil, fmt.Errorf("%w: %d bytes", ErrBlob, len(data))
	}
	var b Blob
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
		if b.Version == 1 && b.Floor[c] == wallFloor {
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
