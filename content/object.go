package content

import (
	"fmt"
	"strings"
)

// ObjectClass is the class of a static object. Its value is a stable code
// the protocol sends (see the table in the package documentation); codes
// are never reused or renumbered.
type ObjectClass uint16

// The object classes. In a Tiled map an object's class (its "Class", or
// "Type" in Tiled 1.8 and earlier) is one of these names.
const (
	// ClassNone is the zero value; no loaded object has it.
	ClassNone ObjectClass = 0
	// ClassDoor is a door: closed, it blocks movement and sight; open,
	// neither. Property "open" (bool, default false).
	ClassDoor ObjectClass = 1
	// ClassTree blocks movement and sight.
	ClassTree ObjectClass = 2
	// ClassSign blocks movement, not sight. Property "text" (string,
	// required, at most [MaxSignText] bytes).
	ClassSign ObjectClass = 3
	// ClassRock blocks movement, not sight.
	ClassRock ObjectClass = 4
	// ClassChest blocks movement, not sight.
	ClassChest ObjectClass = 5
	// ClassPortal is the code of a portal square, for the protocol to draw
	// it with. Portals are authored in the "portals" layer (they are
	// [Portal] values, never [Object] values); the "objects" layer refuses
	// this class. A portal blocks neither movement nor sight.
	ClassPortal ObjectClass = 6
	// numClasses is one past the highest code.
	numClasses = 7
)

// MaxSignText bounds a sign's text in bytes.
const MaxSignText = 200

type classInfo struct {
	name          string
	blocks, sight bool // when closed, for a door
}

var classes = [numClasses]classInfo{
	ClassNone:   {name: "none"},
	ClassDoor:   {name: "door", blocks: true, sight: true},
	ClassTree:   {name: "tree", blocks: true, sight: true},
	ClassSign:   {name: "sign", blocks: true},
	ClassRock:   {name: "rock", blocks: true},
	ClassChest:  {name: "chest", blocks: true},
	ClassPortal: {name: "portal"},
}

// ObjectClasses returns the classes an "objects" layer may hold, in code
// order (door, tree, sign, rock, chest).
func ObjectClasses() []ObjectClass {
	return []ObjectClass{ClassDoor, ClassTree, ClassSign, ClassRock, ClassChest}
}

// String returns the class's name ("door"), or "class(n)" for an unknown code.
func (c ObjectClass) String() string {
	if c < numClasses {
		return classes[c].name
	}
	return fmt.Sprintf("class(%d)", uint16(c))
}

// BlocksMovement reports whether an object of this class stops bodies; for
// a door, when it is closed.
func (c ObjectClass) BlocksMovement() bool { return c < numClasses && classes[c].blocks }

// BlocksSight reports whether an object of this class stops line of sight;
// for a door, when it is closed.
func (c ObjectClass) BlocksSight() bool { return c < numClasses && classes[c].sight }

// ParseObjectClass returns the class of an "objects" layer's object named s.
func ParseObjectClass(s string) (ObjectClass, error) {
	for _, c := range ObjectClasses() {
		if classes[c].name == s {
			return c, nil
		}
	}
	return 0, invalidf("unknown class %q (want one of %s)", s, objectClassList())
}

func objectClassList() string {
	names := make([]string, 0, numClasses)
	for _, c := range ObjectClasses() {
		names = append(names, classes[c].name)
	}
	return strings.Join(names, ", ")
}

// Object is a static object: it stands on one square for the Area's
// whole life.
type Object struct {
	// ID is the object's id in the Tiled map (unique within the map).
	ID int
	// Name is the object's name in the map, often "".
	Name string
	// X, Y is its square.
	X, Y int32
	// Class is what it is.
	Class ObjectClass
	// Open is a door's state at load; false for every other class.
	Open bool
	// Text is a sign's text; "" for every other class.
	Text string
}

// Blocks reports whether the object stops bodies from entering its square.
func (o Object) Blocks() bool {
	if o.Class == ClassDoor && o.Open {
		return false
	}
	return o.Class.BlocksMovement()
}

// BlocksSight reports whether the object stops line of sight.
func (o Object) BlocksSight() bool {
	if o.Class == ClassDoor && o.Open {
		return false
	}
	return o.Class.BlocksSight()
}
