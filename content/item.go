package content

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Bounds on an item kind and a resource source.
const (
	// MaxStack bounds an item kind's Stack.
	MaxStack = 999
	// MaxYields bounds the entries of one yields list.
	MaxYields = 8
	// MaxYieldCount bounds a yield's Count.
	MaxYieldCount = 999
	// MaxLabel bounds an item kind's Label in bytes.
	MaxLabel = 48
	// MaxStarter bounds the starter kit's entries: an inventory's slots.
	MaxStarter = 20
	// MaxContainer bounds a placed container's slots.
	MaxContainer = 64
	// MinOperatorItemCode is the lowest code an item kind added by an
	// operator's folder may take ([LoadDir]); the codes below it are
	// ley's own, so a kind ley ships later never takes an operator's code.
	MinOperatorItemCode = 32768
)

// Item is a kind of item: what a character carries in its inventory and,
// for some kinds, places in the world. The kinds are listed in
// items.json:
//
//	{"items": [
//	  {"name": "wood", "code": 13, "label": "Wood", "stack": 99},
//	  {"name": "chest", "code": 6, "label": "Chest", "stack": 1,
//	   "placed": {"slot": "occupant", "blocks": true, "look": 6, "container": 16},
//	   "yields": [{"item": "plank", "count": 4}]}
//	]}
//
// name, code, label and stack are required. An item kind that can be
// placed has placed (see [Placement]); one without cannot be placed. yields
// is only for a kind that can be placed, and defaults to the item itself,
// count 1. A blueprint names the recipe it teaches:
//
//	{"name": "blueprint_table", "code": 18, "label": "Table blueprint", "stack": 1,
//	 "teaches": "table"}
//
// Using one teaches its character the recipe and consumes it, unless
// "keep" is true.
type Item struct {
	// Name names the kind; yields, sources and recipes refer to it.
	Name string
	// Code is the kind's stable code, the one the protocol sends
	// (1..65535). It is unique among the kinds and never reused; see the
	// package documentation.
	Code uint16
	// Label is what a player is shown (1..[MaxLabel] bytes of UTF-8, no
	// control characters).
	Label string
	// Stack is the most one inventory slot holds (1..[MaxStack]); 1 is a
	// kind that does not stack.
	Stack int
	// Placed is what the kind is when placed in the world; its Slot is
	// [SlotNone] for a kind that cannot be placed ([Item.Placeable]).
	Placed Placement
	// Yields is what taking a placed item back gives (1..[MaxYields]
	// entries, each item named once); nil for a kind that cannot be placed.
	Yields []Yield
	// Teaches names the recipe using one teaches ("" for a kind that is
	// not a blueprint); Keep keeps the blueprint when used.
	Teaches string
	Keep    bool
}

// Placeable reports whether the kind can be placed in the world.
func (it Item) Placeable() bool { return it.Placed.Slot != SlotNone }

// Slot is where on a square a placed item sits.
type Slot uint8

// The slots. A square holds at most one item in each.
const (
	// SlotNone: the kind cannot be placed.
	SlotNone Slot = 0
	// SlotFloor: a floor tile, in the square's floor slot; always walkable
	// and never blocking sight.
	SlotFloor Slot = 1
	// SlotOccupant: furniture, a wall piece or a door, in the square's
	// occupant slot.
	SlotOccupant Slot = 2
)

// String returns the slot's name as items.json spells it ("floor",
// "occupant"), "none", or "slot(n)" for an unknown value.
func (s Slot) String() string {
	switch s {
	case SlotNone:
		return "none"
	case SlotFloor:
		return "floor"
	case SlotOccupant:
		return "occupant"
	}
	return fmt.Sprintf("slot(%d)", uint8(s))
}

// Placement is what an item kind is when placed in the world, written as
// the kind's "placed" object in items.json:
//
//	"placed": {"slot": "occupant", "blocks": true, "blocks_sight": true, "look": 20}
//	"placed": {"slot": "occupant", "door": true, "look": 23}
//	"placed": {"slot": "floor", "look": 30}
//
// slot and look are required. A floor tile takes nothing else. A door
// leaves blocks and blocks_sight out: like a map's doors, a closed one
// blocks movement and sight and an open one neither. container is a
// number of slots (default 0: not a container); a door cannot be one.
// station makes a container a crafting station of that name, where the
// recipes of the station are made (see [Recipe]):
//
//	"placed": {"slot": "occupant", "blocks": true, "look": 17, "container": 4, "station": "cauldron"}
//
// stall makes a container a stall: the player who places one owns it,
// stocks it and prices its slots, and others buy from it while the owner
// is away. becomes and grows make a placed item live: after grows seconds
// of its Area's live time it becomes a placed item of the kind becomes
// names, in the same slot of its square (a sapling, a tree):
//
//	"placed": {"slot": "occupant", "look": 20, "becomes": "tree", "grows": 60}
//
// A thing that lives is no container (what it held would have nowhere to
// go when it becomes another kind).
type Placement struct {
	// Slot is where on the square it sits; SlotNone for a kind that
	// cannot be placed (and then every other field is zero).
	Slot Slot
	// Blocks: bodies cannot enter its square; for a door, when closed.
	Blocks bool
	// BlocksSight: it stops line of sight; for a door, when closed.
	BlocksSight bool
	// Door: it opens and closes like a map's door.
	Door bool
	// Look is the code of what the client draws (0..65535). Looks are the
	// client's business; this package gives them no meaning.
	Look uint16
	// Container is how many inventory slots it holds (0..[MaxContainer]);
	// 0 is not a container.
	Container int
	// Station is the crafting station it is ("" for none); only a
	// container is one.
	Station string
	// Stall: it is a stall, a container its owner sells from; only a
	// container that is no station is one.
	Stall bool
	// Becomes names the kind it becomes after Grows seconds of its Area's
	// live time (1..[MaxGrow]); "" for a kind that does not live.
	Becomes string
	Grows   int
}

// MaxGrow bounds a living kind's Grows and a recipe's Seconds: a day.
const MaxGrow = 86400

// Yield is a count of one item kind, given by taking an item back or by
// gathering a source.
type Yield struct {
	// Item names the kind; it exists in the library.
	Item string
	// Count is how many (1..[MaxYieldCount]).
	Count int
}

// Source is what gathering from a map object of one class gives (a tree,
// a rock). The sources are the "sources" table of items.json:
//
//	{"sources": [
//	  {"class": "tree", "yields": [{"item": "wood", "count": 2}], "cooldown_ticks": 40}
//	]}
//
// Every field is required. class is one of the classes an "objects" layer
// holds (see [ObjectClasses]); each class is listed once at most, and an
// object of a class with no source cannot be gathered.
type Source struct {
	// Class is the objects' class.
	Class ObjectClass
	// Yields is what one gathering gives (1..[MaxYields] entries, each
	// item named once).
	Yields []Yield
	// CooldownTicks is the ticks at [TickRate] before the same object
	// can be gathered again (1..65535).
	CooldownTicks uint16
}

type rawItem struct {
	Name    string      `json:"name"`
	Code    *int        `json:"code"`
	Label   *string     `json:"label"`
	Stack   *int        `json:"stack"`
	Placed  *rawPlaced  `json:"placed"`
	Yields  *[]rawYield `json:"yields"`
	Teaches string      `json:"teaches"`
	Keep    bool        `json:"keep"`
}

type rawPlaced struct {
	Slot        string `json:"slot"`
	Blocks      *bool  `json:"blocks"`
	BlocksSight *bool  `json:"blocks_sight"`
	Door        bool   `json:"door"`
	Look        *int   `json:"look"`
	Container   int    `json:"container"`
	Station     string `json:"station"`
	Stall       bool   `json:"stall"`
	Becomes     string `json:"becomes"`
	Grows       int    `json:"grows"`
}

type rawYield struct {
	Item  string `json:"item"`
	Count *int   `json:"count"`
}

type rawSource struct {
	Class         string      `json:"class"`
	Yields        *[]rawYield `json:"yields"`
	CooldownTicks *int        `json:"cooldown_ticks"`
}

// item checks an items.json entry on its own (the kinds it yields and the
// uniqueness of its code are checked by Load, against all kinds).
func (r rawItem) item() (Item, error) {
	if err := checkName("item", r.Name); err != nil {
		return Item{}, err
	}
	switch {
	case r.Code == nil:
		return Item{}, invalidf("missing \"code\"")
	case r.Label == nil:
		return Item{}, invalidf("missing \"label\"")
	case r.Stack == nil:
		return Item{}, invalidf("missing \"stack\"")
	case *r.Code < 1 || *r.Code > 65535:
		return Item{}, invalidf("\"code\" is %d (1..65535)", *r.Code)
	case *r.Stack < 1 || *r.Stack > MaxStack:
		return Item{}, invalidf("\"stack\" is %d (1..%d)", *r.Stack, MaxStack)
	}
	if err := checkLabel(*r.Label); err != nil {
		return Item{}, err
	}
	it := Item{Name: r.Name, Code: uint16(*r.Code), Label: *r.Label, Stack: *r.Stack, Teaches: r.Teaches, Keep: r.Keep}
	if r.Teaches != "" {
		if err := checkName("teaches", r.Teaches); err != nil {
			return Item{}, err
		}
	} else if r.Keep {
		return Item{}, invalidf("\"keep\" without \"teaches\": only a blueprint is kept when used")
	}
	if r.Placed == nil {
		if r.Yields != nil {
			return Item{}, invalidf("\"yields\" without \"placed\": only a placed item is taken back")
		}
		return it, nil
	}
	p, err := r.Placed.placement()
	if err != nil {
		return Item{}, err
	}
	it.Placed = p
	it.Yields = []Yield{{Item: r.Name, Count: 1}}
	if r.Yields != nil {
		if it.Yields, err = yields(*r.Yields); err != nil {
			return Item{}, err
		}
	}
	return it, nil
}

// checkLabel checks an item kind's label.
func checkLabel(s string) error {
	switch {
	case s == "":
		return invalidf("\"label\" is empty")
	case len(s) > MaxLabel:
		return tooLargef("\"label\" is %d bytes (at most %d)", len(s), MaxLabel)
	case !utf8.ValidString(s):
		return invalidf("\"label\" is not UTF-8")
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return invalidf("\"label\" %q holds a control character", s)
		}
	}
	return nil
}

// placement checks a "placed" object.
func (r rawPlaced) placement() (Placement, error) {
	var p Placement
	switch r.Slot {
	case "":
		return p, invalidf("\"placed\": missing \"slot\"")
	case "floor":
		p.Slot = SlotFloor
	case "occupant":
		p.Slot = SlotOccupant
	default:
		return p, invalidf("\"placed\": unknown slot %q (want floor or occupant)", r.Slot)
	}
	switch {
	case r.Look == nil:
		return p, invalidf("\"placed\": missing \"look\"")
	case *r.Look < 0 || *r.Look > 65535:
		return p, invalidf("\"placed\": \"look\" is %d (0..65535)", *r.Look)
	case r.Container < 0 || r.Container > MaxContainer:
		return p, invalidf("\"placed\": \"container\" is %d (0..%d)", r.Container, MaxContainer)
	case p.Slot == SlotFloor && (r.Blocks != nil || r.BlocksSight != nil || r.Door || r.Container != 0):
		return p, invalidf("\"placed\": a floor tile takes only \"slot\" and \"look\" (it is walkable and never blocks sight)")
	case r.Door && (r.Blocks != nil || r.BlocksSight != nil):
		return p, invalidf("\"placed\": a door takes no \"blocks\" or \"blocks_sight\" (closed, it blocks both; open, neither)")
	case r.Door && r.Container != 0:
		return p, invalidf("\"placed\": a door cannot be a container")
	case r.Station != "" && r.Container == 0:
		return p, invalidf("\"placed\": a station is a container: give it \"container\" slots for what is crafted in it")
	case r.Stall && (r.Container == 0 || r.Station != ""):
		return p, invalidf("\"placed\": a stall is a container that is no station: give it \"container\" slots for its stock")
	case (r.Becomes == "") != (r.Grows == 0):
		return p, invalidf("\"placed\": \"becomes\" and \"grows\" go together: what it becomes, after how many seconds")
	case r.Grows < 0 || r.Grows > MaxGrow:
		return p, invalidf("\"placed\": \"grows\" is %d (1..%d seconds)", r.Grows, MaxGrow)
	case r.Becomes != "" && (r.Container != 0 || r.Door):
		return p, invalidf("\"placed\": a thing that lives is no container and no door")
	}
	if r.Becomes != "" {
		if err := checkName("becomes", r.Becomes); err != nil {
			return p, &problem{kindOf(err), "\"placed\": " + err.Error()}
		}
	}
	p.Stall, p.Becomes, p.Grows = r.Stall, r.Becomes, r.Grows
	if r.Station != "" {
		if err := checkName("station", r.Station); err != nil {
			return p, &problem{kindOf(err), "\"placed\": " + err.Error()}
		}
	}
	p.Station = r.Station
	p.Look = uint16(*r.Look)
	p.Door = r.Door
	p.Container = r.Container
	p.Blocks = r.Door || r.Blocks != nil && *r.Blocks
	p.BlocksSight = r.Door || r.BlocksSight != nil && *r.BlocksSight
	return p, nil
}

// yields checks a yields list on its own (Load checks that the items exist).
func yields(rs []rawYield) ([]Yield, error) { return yieldsUpTo(rs, MaxYields) }

// yieldsUpTo is yields with at most most entries.
func yieldsUpTo(rs []rawYield, most int) ([]Yield, error) {
	switch {
	case len(rs) == 0:
		return nil, invalidf("\"yields\" is empty")
	case len(rs) > most:
		return nil, tooLargef("\"yields\" has %d entries (at most %d)", len(rs), most)
	}
	ys := make([]Yield, 0, len(rs))
	for _, r := range rs {
		if err := checkName("yields", r.Item); err != nil {
			return nil, err
		}
		switch {
		case r.Count == nil:
			return nil, invalidf("\"yields\" %q: missing \"count\"", r.Item)
		case *r.Count < 1 || *r.Count > MaxYieldCount:
			return nil, invalidf("\"yields\" %q: \"count\" is %d (1..%d)", r.Item, *r.Count, MaxYieldCount)
		}
		for _, y := range ys {
			if y.Item == r.Item {
				return nil, invalidf("\"yields\" lists %q twice", r.Item)
			}
		}
		ys = append(ys, Yield{Item: r.Item, Count: *r.Count})
	}
	return ys, nil
}

// source checks a "sources" entry on its own (Load checks that the items
// it yields exist).
func (r rawSource) source() (Source, error) {
	if r.Class == "" {
		return Source{}, invalidf("missing \"class\"")
	}
	class, err := ParseObjectClass(r.Class)
	if err != nil {
		return Source{}, err
	}
	switch {
	case r.Yields == nil:
		return Source{}, invalidf("missing \"yields\"")
	case r.CooldownTicks == nil:
		return Source{}, invalidf("missing \"cooldown_ticks\"")
	case *r.CooldownTicks < 1 || *r.CooldownTicks > 65535:
		return Source{}, invalidf("\"cooldown_ticks\" is %d (1..65535)", *r.CooldownTicks)
	}
	ys, err := yields(*r.Yields)
	if err != nil {
		return Source{}, err
	}
	return Source{Class: class, Yields: ys, CooldownTicks: uint16(*r.CooldownTicks)}, nil
}
