package content

import (
	"fmt"
	"strings"
)

// FloorKind is what a square's ground is made of. Its value is a stable
// code the protocol sends (see the table in the package documentation);
// codes are never reused or renumbered, new kinds get new codes.
type FloorKind uint16

// The floor kinds. In a Tiled map a floor tile's class (its "Class" in
// Tiled's tileset editor) is one of these names.
const (
	// FloorVoid is no ground at all (gid 0 on the floor layer): nothing
	// stands there.
	FloorVoid FloorKind = 0
	// FloorGrass is grass: walkable.
	FloorGrass FloorKind = 1
	// FloorDirt is bare earth, a path or a road: walkable.
	FloorDirt FloorKind = 2
	// FloorStone is paving or rock: walkable.
	FloorStone FloorKind = 3
	// FloorSand is sand: walkable.
	FloorSand FloorKind = 4
	// FloorWood is floorboards: walkable.
	FloorWood FloorKind = 5
	// FloorWater is water: not walkable, does not block sight.
	FloorWater FloorKind = 6
	// numFloorKinds is one past the highest code.
	numFloorKinds = 7
)

var floorNames = [numFloorKinds]string{
	FloorVoid: "void", FloorGrass: "grass", FloorDirt: "dirt", FloorStone: "stone",
	FloorSand: "sand", FloorWood: "wood", FloorWater: "water",
}

// FloorKinds returns every floor kind, in code order.
func FloorKinds() []FloorKind {
	ks := make([]FloorKind, numFloorKinds)
	for i := range ks {
		ks[i] = FloorKind(i)
	}
	return ks
}

// String returns the kind's name ("grass"), or "floor(n)" for an unknown code.
func (k FloorKind) String() string {
	if k < numFloorKinds {
		return floorNames[k]
	}
	return fmt.Sprintf("floor(%d)", uint16(k))
}

// Walkable reports whether a body may stand on this kind of floor: every
// kind but void and water.
func (k FloorKind) Walkable() bool {
	return k != FloorVoid && k != FloorWater && k < numFloorKinds
}

// ParseFloorKind returns the floor kind named s. "void" is not a tile class
// (an empty cell is void), so it is refused here.
func ParseFloorKind(s string) (FloorKind, error) {
	for k := FloorGrass; k < numFloorKinds; k++ {
		if floorNames[k] == s {
			return k, nil
		}
	}
	return 0, invalidf("unknown floor class %q (want one of %s)", s, floorClassList())
}

func floorClassList() string {
	return strings.Join(floorNames[FloorGrass:], ", ")
}
