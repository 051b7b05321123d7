package blob

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fxamacker/cbor/v2"
)

// Version is the blob format written now. Version 3 added the Area's
// items (placed, in containers, its id counter and its ledger); a version
// 2 blob reads as one with none. Version 4 added what a placed item is
// beyond its stack: a stall's owner and prices, a living thing's or a
// working station's clock; a version 3 blob reads as one with none.
const Version = 4

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

// Stack is an item stack as blobs and character states keep it.
type Stack struct {
	ID    uint64 `cbor:"1,keyasint"`
	Kind  uint16 `cbor:"2,keyasint"`
	Count uint16 `cbor:"3,keyasint"`
}

// Placed is an item standing on a square: its stack (always of one
// item), its slot, a placed door's state, and a container's slots (empty
// slots kept, so slot numbers survive).
type Placed struct {
	X        int32   `cbor:"1,keyasint"`
	Y        int32   `cbor:"2,keyasint"`
	Stack    Stack   `cbor:"3,keyasint"`
	Floor    bool    `cbor:"4,keyasint,omitempty"`
	Open     bool    `cbor:"5,keyasint,omitempty"`
	Contents []Stack `cbor:"6,keyasint,omitempty"`
	// Owner is a stall's owner (an account; 0 for other kinds), Prices
	// its asks, one per slot of Contents (a zero Price: not for sale).
	Owner  uint64  `cbor:"7,keyasint,omitempty"`
	Prices []Price `cbor:"8,keyasint,omitempty"`
	// LeftMS is how much of its Area's live time, in milliseconds, a
	// living thing has left to grow, or a working station (Recipe, its
	// recipe's code) has left to work; 0 for one that does not.
	LeftMS uint32 `cbor:"9,keyasint,omitempty"`
	Recipe uint16 `cbor:"10,keyasint,omitempty"`
}

// Price is a stall's ask for one slot: Count items of kind Kind.
type Price struct {
	Kind  uint16 `cbor:"1,keyasint"`
	Count uint16 `cbor:"2,keyasint"`
}

// Tally is a count of items of one kind.
type Tally struct {
	Kind  uint16 `cbor:"1,keyasint"`
	Count uint64 `cbor:"2,keyasint"`
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
	// Placed are the items standing in the Area; NextItem the counter of
	// the item ids it mints; Created and Destroyed its ledger: the items
	// of each kind it ever made and unmade (docs/items.md).
	Placed    []Placed `cbor:"9,keyasint,omitempty"`
	NextItem  uint32   `cbor:"10,keyasint,omitempty"`
	Created   []Tally  `cbor:"11,keyasint,omitempty"`
	Destroyed []Tally  `cbor:"12,keyasint,omitempty"`
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
	case 2, 3, Version:
		if b.Version == 2 && (len(b.Placed) > 0 || b.NextItem > 0 || len(b.Created) > 0 || len(b.Destroyed) > 0) {
			return nil, fmt.Errorf("%w: a version 2 blob carries no items", ErrBlob)
		}
		if len(b.Floor) != 0 {
			return nil, fmt.Errorf("%w: a version %d blob carries no floor", ErrBlob, Version)
		}
	default:
		return nil, fmt.Errorf("%w: version %d, this build reads 1 to %d", ErrBlob, b.Version, Version)
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
	if err := checkPlaced(&b, w, h); err != nil {
		return nil, err
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

// checkPlaced checks a blob's items: each on the grid, at most one in each
// slot of a square, every stack of a kind with 1..65535 items (a placed
// one exactly 1), no item id twice, no ledger kind twice.
func checkPlaced(b *Blob, w, h int) error {
	type slot struct {
		c     int32
		floor bool
	}
	slots := make(map[slot]struct{}, len(b.Placed))
	ids := make(map[uint64]struct{}, len(b.Placed))
	stack := func(s Stack, where string) error {
		if s.Kind == 0 || s.Count == 0 || s.ID == 0 {
			return fmt.Errorf("%w: %s holds a stack %d of kind %d, count %d", ErrBlob, where, s.ID, s.Kind, s.Count)
		}
		if _, dup := ids[s.ID]; dup {
			return fmt.Errorf("%w: item %d twice", ErrBlob, s.ID)
		}
		ids[s.ID] = struct{}{}
		return nil
	}
	for _, p := range b.Placed {
		if p.X < 0 || p.Y < 0 || int(p.X) >= w || int(p.Y) >= h {
			return fmt.Errorf("%w: item at (%d,%d) is off the grid", ErrBlob, p.X, p.Y)
		}
		k := slot{p.Y*int32(w) + p.X, p.Floor}
		if _, dup := slots[k]; dup {
			return fmt.Errorf("%w: two items in one slot of (%d,%d)", ErrBlob, p.X, p.Y)
		}
		slots[k] = struct{}{}
		if p.Stack.Count != 1 {
			return fmt.Errorf("%w: %d items placed as one at (%d,%d)", ErrBlob, p.Stack.Count, p.X, p.Y)
		}
		if err := stack(p.Stack, "a placed item"); err != nil {
			return err
		}
		if len(p.Contents) > maxContainer {
			return fmt.Errorf("%w: a container of %d slots", ErrBlob, len(p.Contents))
		}
		if len(p.Prices) > len(p.Contents) {
			return fmt.Errorf("%w: a stall of %d slots with %d prices", ErrBlob, len(p.Contents), len(p.Prices))
		}
		if p.Owner == 0 && len(p.Prices) > 0 {
			return fmt.Errorf("%w: prices on a stall with no owner at (%d,%d)", ErrBlob, p.X, p.Y)
		}
		if p.Recipe != 0 && (p.LeftMS == 0 || len(p.Contents) == 0) {
			return fmt.Errorf("%w: a working station with no time left or no slots at (%d,%d)", ErrBlob, p.X, p.Y)
		}
		for _, c := range p.Contents {
			if c.Count == 0 && c.Kind == 0 && c.ID == 0 {
				continue // an empty slot
			}
			if err := stack(c, "a container"); err != nil {
				return err
			}
		}
	}
	for _, l := range [][]Tally{b.Created, b.Destroyed} {
		seen := make(map[uint16]struct{}, len(l))
		for _, t := range l {
			if _, dup := seen[t.Kind]; dup || t.Kind == 0 {
				return fmt.Errorf("%w: ledger kind %d twice or zero", ErrBlob, t.Kind)
			}
			seen[t.Kind] = struct{}{}
		}
	}
	return nil
}

// maxContainer bounds a container's slots (content.MaxContainer).
const maxContainer = 64

// CharacterVersion is the character state format written now: 2 added
// the stash, 3 the recipes it knows. DecodeCharacter reads 1 and 2 as
// well (a version 1 state has no stash, a version 2 state no recipes).
const CharacterVersion = 3

// MaxCharacter bounds a character state DecodeCharacter accepts.
const MaxCharacter = 16 << 10

// maxInventory bounds a character state's inventory slots
// (ecs.InventorySlots; persist's tests hold the two equal); maxStash its
// stash (ecs.MaxStash).
const (
	maxInventory = 20
	maxStash     = 40
	// maxRecipes bounds the recipes a character knows (ecs.MaxRecipes).
	maxRecipes = 1024
)

// Character is a character's state as its row keeps it: what it carries
// (slot by slot, empty slots kept), what waits in its stash (stacks,
// none empty) and the codes of the recipes it knows (ascending). An empty
// state (no bytes) is a character that owns and knows nothing.
type Character struct {
	Version   int      `cbor:"1,keyasint"`
	Inventory []Stack  `cbor:"2,keyasint,omitempty"`
	Stash     []Stack  `cbor:"3,keyasint,omitempty"`
	Recipes   []uint16 `cbor:"4,keyasint,omitempty"`
}

// EncodeCharacter returns c's bytes (deterministic CBOR).
func EncodeCharacter(c *Character) ([]byte, error) { return encMode.Marshal(c) }

// DecodeCharacter decodes a character state and checks it: its version,
// at most maxInventory slots and maxStash stashed stacks, every stack
// whole (kind, count and id set) or an empty slot, no id twice, at most
// maxRecipes recipe codes, ascending and none 0. No bytes decode to a
// character owning nothing.
func DecodeCharacter(data []byte) (*Character, error) {
	var c Character
	if len(data) == 0 {
		c.Version = CharacterVersion
		return &c, nil
	}
	if len(data) > MaxCharacter {
		return nil, fmt.Errorf("%w: a character state of %d bytes", ErrBlob, len(data))
	}
	if err := decMode.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: character state: %v", ErrBlob, err)
	}
	if c.Version < 1 || c.Version > CharacterVersion {
		return nil, fmt.Errorf("%w: character state version %d, this build reads 1..%d", ErrBlob, c.Version, CharacterVersion)
	}
	if c.Version == 1 && c.Stash != nil {
		return nil, fmt.Errorf("%w: a version 1 character state with a stash", ErrBlob)
	}
	if c.Version < 3 && c.Recipes != nil {
		return nil, fmt.Errorf("%w: a version %d character state with recipes", ErrBlob, c.Version)
	}
	if len(c.Recipes) > maxRecipes {
		return nil, fmt.Errorf("%w: %d recipes", ErrBlob, len(c.Recipes))
	}
	for i, r := range c.Recipes {
		if r == 0 || i > 0 && r <= c.Recipes[i-1] {
			return nil, fmt.Errorf("%w: character state: recipes %v not ascending codes", ErrBlob, c.Recipes)
		}
	}
	if len(c.Inventory) > maxInventory {
		return nil, fmt.Errorf("%w: %d inventory slots", ErrBlob, len(c.Inventory))
	}
	if len(c.Stash) > maxStash {
		return nil, fmt.Errorf("%w: %d stashed stacks", ErrBlob, len(c.Stash))
	}
	ids := make(map[uint64]struct{}, len(c.Inventory)+len(c.Stash))
	for i, s := range slices.Concat(c.Inventory, c.Stash) {
		if s == (Stack{}) && i < len(c.Inventory) {
			continue
		}
		if s.Kind == 0 || s.Count == 0 || s.ID == 0 {
			return nil, fmt.Errorf("%w: character state: a stack %d of kind %d, count %d", ErrBlob, s.ID, s.Kind, s.Count)
		}
		if _, dup := ids[s.ID]; dup {
			return nil, fmt.Errorf("%w: character state: item %d twice", ErrBlob, s.ID)
		}
		ids[s.ID] = struct{}{}
	}
	return &c, nil
}
