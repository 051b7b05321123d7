package wire

import "strconv"

// Type is a message type number, the t of the envelope [v, t, body].
// Numbers are stable and never reused. Client-to-server types take 1..7,
// server-to-client types take 8 and up: the types below 24 encode in one
// byte, the later ones (flow, 24) in two.
type Type uint8

// Message type numbers. See docs/protocol.md for each body's CDDL.
const (
	TypeHello  Type = 1 // client -> server
	TypeResume Type = 2 // client -> server
	TypeIntent Type = 3 // client -> server
	TypeLeave  Type = 4 // client -> server
	TypeWatch  Type = 5 // client -> server (spectators)

	TypeHelloAck               Type = 8  // server -> client
	TypeError                  Type = 9  // server -> client
	TypeRehello                Type = 10 // server -> client
	TypeIntentResult           Type = 11 // server -> client
	TypeSnapshot               Type = 12 // server -> client
	TypeStatic                 Type = 13 // server -> client
	TypePresence               Type = 14 // server -> client
	TypeAreaClosing            Type = 15 // server -> client
	TypeTakenOver              Type = 16 // server -> client
	TypePortalBlocked          Type = 17 // server -> client
	TypePortalTransferRejected Type = 18 // server -> client
	TypePortalMoved            Type = 19 // server -> client
	TypeAreaInfo               Type = 20 // server -> client
	TypeLeft                   Type = 21 // server -> client
	TypeInventory              Type = 22 // server -> client
	TypeContainer              Type = 23 // server -> client
	TypeFlow                   Type = 24 // server -> client (spectators)
	TypeRecipes                Type = 25 // server -> client
	TypeTrade                  Type = 26 // server -> client
)

var typeNames = [...]string{
	TypeHello: "hello", TypeResume: "resume", TypeIntent: "intent", TypeLeave: "leave",
	TypeWatch:    "watch",
	TypeHelloAck: "hello_ack", TypeError: "error", TypeRehello: "rehello",
	TypeIntentResult: "intent_result", TypeSnapshot: "snapshot",
	TypeStatic: "static", TypePresence: "presence",
	TypeAreaClosing: "area_closing", TypeTakenOver: "taken_over",
	TypePortalBlocked:          "portal_blocked",
	TypePortalTransferRejected: "portal_transfer_rejected",
	TypePortalMoved:            "portal_moved",
	TypeAreaInfo:               "area_info",
	TypeLeft:                   "left",
	TypeInventory:              "inventory",
	TypeContainer:              "container",
	TypeFlow:                   "flow",
	TypeRecipes:                "recipes",
	TypeTrade:                  "trade",
}

// String returns the protocol name of the type, such as "hello_ack", or
// "type(n)" for a number not in the catalogue.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Known reports whether t is in the catalogue.
func (t Type) Known() bool { return int(t) < len(typeNames) && typeNames[t] != "" }

// FromClient reports whether t is a client-to-server type.
func (t Type) FromClient() bool { return t >= TypeHello && t <= TypeWatch }

// Message is one message body of the catalogue. Only this package's types
// implement it; they are plain structs whose exported fields are the body
// in wire order. Pass pointers (*Hello, *Snapshot, ...) to [Encode]; [Decode]
// returns pointers.
type Message interface {
	// Type returns the message's type number.
	Type() Type
	message()
}

// Hello is the first message of a connection (client -> server). Its shape
// is frozen across protocol versions: a server decodes a hello whatever the
// envelope version says and answers with [HelloAck] or an [Error] with
// [CodeVersionUnsupported].
type Hello struct {
	_        struct{} `cbor:",toarray"`
	Grant    string   // join grant token from the director
	JoinID   uint64   // echoed on every answer to this join
	Versions []uint16 // protocol versions the client speaks, any order
}

// Resume rebinds a new connection to a session after a drop (client ->
// server), using the token from [HelloAck].
type Resume struct {
	_      struct{} `cbor:",toarray"`
	Token  string
	JoinID uint64
}

// IntentKind says what an [Intent] asks for.
type IntentKind uint8

// Intent kinds.
const (
	IntentStep   IntentKind = 0 // one step in Dir
	IntentMoveTo IntentKind = 1 // walk to Target
	IntentStop   IntentKind = 2 // cancel movement
	IntentAction IntentKind = 3 // act on the square next to the body in Dir
	// IntentPlace places one item of inventory slot Item.From on the
	// square next to the body in Dir.
	IntentPlace IntentKind = 4
	// IntentTake takes the item placed on the square next to the body in
	// Dir back into the inventory.
	IntentTake IntentKind = 5
	// IntentMoveItem moves Item.Count items (0: all) from slot Item.From
	// to slot Item.To: inventory slots 0..19, or ContainerSlot+k, slot k
	// of the container next to the body in Dir.
	IntentMoveItem IntentKind = 6
	// IntentCraft crafts at the station (a placed item whose kind has a
	// station) on the square next to the body in Dir: its contents, as a
	// multiset, must be exactly one of the station's recipes' inputs, and
	// become that recipe's outputs.
	IntentCraft IntentKind = 7
	// IntentUse uses the item of inventory slot Item.From: a blueprint
	// teaches its recipe.
	IntentUse IntentKind = 8
	// IntentTrade opens a trade with the player on the square next to
	// the body in Dir (see [Trade]).
	IntentTrade IntentKind = 9
	// IntentOffer puts Item.Count items of inventory slot Item.From on the
	// player's side of its open trade (Item.Count 0 takes the slot off).
	IntentOffer IntentKind = 10
	// IntentConfirm confirms the open trade as it stood at revision
	// Item.Count ([Trade].Rev): when both players have confirmed the same
	// revision, the items change hands in that tick.
	IntentConfirm IntentKind = 11
	// IntentCancel calls the open trade off.
	IntentCancel IntentKind = 12
	// IntentPrice sets the price of slot Item.From (ContainerSlot+k) of
	// the stall next to the body in Dir, which the player owns: Target.Y
	// items of the kind whose code is Target.X (Target.Y 0: not for sale).
	IntentPrice IntentKind = 13
	// IntentBuy buys the whole stack of slot Item.From (ContainerSlot+k)
	// of the stall next to the body in Dir at its price. The player says
	// what it expects: Item.Count items in the slot, for Target.Y items of
	// the kind whose code is Target.X; a stall that no longer matches is
	// refused STALE, and nothing changes hands.
	IntentBuy IntentKind = 14
)

// ContainerSlot is the first slot number of an item intent that names a
// slot of the container the body faces (ecs.ContainerSlot).
const ContainerSlot = 64

// InventorySlots is the number of slots of a character's inventory
// (ecs.InventorySlots): an [Inventory] has exactly this many.
const InventorySlots = 20

// ItemSlots are an item intent's slots and count; zero for the other
// kinds.
type ItemSlots struct {
	_     struct{} `cbor:",toarray"`
	From  uint8
	To    uint8
	Count uint16
}

// Dir is a grid direction, clockwise from north.
type Dir uint8

// Directions.
const (
	DirN  Dir = 0
	DirNE Dir = 1
	DirE  Dir = 2
	DirSE Dir = 3
	DirS  Dir = 4
	DirSW Dir = 5
	DirW  Dir = 6
	DirNW Dir = 7
)

// Cell is a grid coordinate.
type Cell struct {
	_ struct{} `cbor:",toarray"`
	X int32
	Y int32
}

// Intent is a player's request (client -> server), the one message that
// arrives at client rate. Seqs start at 1 in every session and go up by one
// in serial-number order (RFC 1982, see [SeqAfter]), wrapping after
// 2^32-1. Every Seq gets exactly one answer: an [IntentResult] rejection,
// or, if none comes, a later [Snapshot]'s AckSeq reaching it (applied). Use
// [DecodeIntent] on the server for a 0-allocation decode. Range checks of
// Kind and Dir are the caller's.
type Intent struct {
	_      struct{} `cbor:",toarray"`
	Seq    uint32
	Kind   IntentKind
	Dir    Dir  // for IntentStep, IntentAction and the item intents
	Target Cell // for IntentMoveTo
	Item   ItemSlots
}

// HelloAck answers a valid [Hello] or [Resume]: the peer is bound.
type HelloAck struct {
	_           struct{} `cbor:",toarray"`
	JoinID      uint64
	Entity      uint32 // the player's entity id
	Tick        uint64 // the Area's current tick
	Area        uint32
	ResumeToken string
	Version     uint16 // negotiated protocol version
}

// Error reports a failure (server -> client). RefSeq names the intent or 0;
// JoinID names the join attempt or 0.
type Error struct {
	_      struct{} `cbor:",toarray"`
	Code   Code
	RefSeq uint32
	JoinID uint64
	Detail string // human-readable, for logs; may be empty
}

// Rehello tells a peer its binding was lost and it must send hello again.
type Rehello struct {
	_      struct{} `cbor:",toarray"`
	Code   Code
	Detail string
}

// IntentResult rejects one intent. Applied intents are acknowledged by
// AckSeq in the next [Snapshot] instead. [AppendIntentResult] encodes it
// without allocating.
type IntentResult struct {
	_    struct{} `cbor:",toarray"`
	Seq  uint32
	Code Code
}

// Object is one static object of a cell: a door, a tree, a sign, a rock, a
// chest or a portal square. Kind is one of the Object* kinds; State is a
// door's (0 closed, 1 open) and 0 for the others; Text is a sign's words
// ("" for the others).
type Object struct {
	_     struct{} `cbor:",toarray"`
	ID    uint32
	Kind  uint16
	X     int32
	Y     int32
	State uint8
	Text  string
	// Item is a placed item's kind (an [ItemKind] code of area_info), 0
	// for the map's own objects.
	Item uint16
}

// Object kinds (the content's object classes, content/doc.go).
const (
	ObjectDoor   uint16 = 1 // blocks movement and sight while closed
	ObjectTree   uint16 = 2 // blocks movement and sight
	ObjectSign   uint16 = 3 // blocks movement; has Text
	ObjectRock   uint16 = 4 // blocks movement
	ObjectChest  uint16 = 5 // blocks movement
	ObjectPortal uint16 = 6 // a portal square: stepping on it crosses to another Area
	ObjectItem   uint16 = 7 // an item a player placed; Item says which (a placed door piece is an ObjectDoor with its Item)
)

// Floor kinds of a [Static]'s floor runs: the content's floor kinds
// (content/doc.go), and walls.
const (
	FloorVoid  uint8 = 0 // nothing: not walkable
	FloorGrass uint8 = 1
	FloorDirt  uint8 = 2
	FloorStone uint8 = 3
	FloorSand  uint8 = 4
	FloorWood  uint8 = 5
	FloorWater uint8 = 6 // not walkable; sight crosses it
	FloorWall  uint8 = 7 // nothing stands on it or sees through it
)

// Static is the map of one cell at one version: its floor, as runs of
// (kind, count) over the cell's squares row by row (the cell's squares
// that lie on the grid: a cell at the grid's right or bottom edge may be
// narrower or shorter), and its static objects. It is sent reliably when a
// cell comes into a peer's view and whenever its version changes, before
// the snapshot that shows the cell; it replaces the client's map of that
// cell.
type Static struct {
	_       struct{} `cbor:",toarray"`
	Cell    uint32
	Version uint32
	Floor   []uint32 // kind, count, kind, count, ...
	Objects []Object
}

// RuleFlags are the rules of an Area that a client needs.
type RuleFlags uint8

// The rule flags.
const (
	RuleDiagonal      RuleFlags = 1 << 0 // diagonal steps are allowed
	RulePvP           RuleFlags = 1 << 1 // players may attack players
	RuleCreaturesHunt RuleFlags = 1 << 2 // creatures hunt players
	RuleLineOfSight   RuleFlags = 1 << 3 // a player is sent only what it can see
	RuleMayBuild      RuleFlags = 1 << 4 // this player may build here (place, take back, gather, use containers)
)

// AreaInfo tells a bound client what it needs to draw and play the Area:
// sent right after every [HelloAck]. Squares are numbered (x, y) from the
// top left, x to the east, y to the south (north is -y); hash cells of
// CellSize squares a side are numbered row by row: cell = (y / CellSize) *
// ceil(W / CellSize) + x / CellSize.
type AreaInfo struct {
	_        struct{} `cbor:",toarray"`
	Area     uint32
	Kind     string // home, village, arena, ...
	W, H     uint32
	CellSize uint16
	TickHz   uint16
	// SnapshotHz is the snapshot rate; StepMS the least time between two
	// steps of a player (the movement budget); QueueLen the intents that
	// may wait for their tick (more are refused TOO_FAST).
	SnapshotHz uint16
	StepMS     uint32
	QueueLen   uint8
	// InterestRadius is how far a player sees, in squares (0: the whole
	// Area).
	InterestRadius uint16
	// ResumeGraceMS is how long a dropped player's body waits for a resume.
	ResumeGraceMS uint32
	Rules         RuleFlags
	// PlayerHP is a player's full health.
	PlayerHP uint16
	// Creatures are the Area's creature kinds: an entity's Look k > 0
	// names Creatures[k-1].
	Creatures []CreatureKind
	// Items are the item kinds of the realm's content: what an
	// [Inventory], a [Container] or a placed [Object] names by code.
	Items []ItemKind
	// Plots are the squares of the map where building is allowed, when
	// the Area's rules allow it only on plots (a village); empty when
	// they do not (a home, an arena), where [RuleMayBuild] alone says.
	Plots []Plot
}

// Plot is a rectangle of squares of the map where players may build:
// W x H squares from (X, Y).
type Plot struct {
	_    struct{} `cbor:",toarray"`
	X, Y int32
	W, H uint16
}

// Item slots of an [ItemKind]: where on a square it sits when placed.
const (
	ItemSlotNone     uint8 = 0 // it cannot be placed
	ItemSlotFloor    uint8 = 1 // a floor tile: blocks nothing
	ItemSlotOccupant uint8 = 2 // furniture, a wall piece, a door
)

// Item kind flags: what a placed item of the kind does.
const (
	ItemBlocks      uint8 = 1 << 0 // it stops bodies (a door: while closed)
	ItemBlocksSight uint8 = 1 << 1 // it stops line of sight (a door: while closed)
	ItemDoor        uint8 = 1 << 2 // it opens and closes like the map's doors
	ItemTeaches     uint8 = 1 << 3 // using one teaches a recipe (a blueprint)
	ItemStall       uint8 = 1 << 4 // placed, it is a stall: its owner sells what it holds
)

// ItemKind is one kind of item: its code, name and label, how many one
// slot holds, where it sits when placed and what it does there (Flags:
// ItemBlocks, ...), what the client draws for it placed (Look), and how
// many slots it holds as a container (0: none), and the crafting station
// it is when placed ("": none; see [Recipe]). A kind that lives, placed,
// becomes the kind Becomes after Grows seconds of its Area's live time
// (0, 0: it does not).
type ItemKind struct {
	_         struct{} `cbor:",toarray"`
	Code      uint16
	Name      string
	Label     string
	Stack     uint16
	Slot      uint8
	Flags     uint8
	Look      uint16
	Container uint8
	Station   string
	Becomes   uint16
	Grows     uint32
}

// Stack is one slot of an [Inventory] or a [Container]: Count items of
// kind Kind, named ID; an empty slot is all zeros.
type Stack struct {
	_     struct{} `cbor:",toarray"`
	ID    uint64
	Kind  uint16
	Count uint16
}

// Inventory is what the player's character carries, slot by slot (exactly
// [InventorySlots]): sent whole after [AreaInfo] on every bind, and again
// whenever it changed, before the snapshot whose ack_seq passes the
// intent that changed it. Stash is what waits for the character outside
// this Area (at most [MaxStash] stacks): what the Area's rules did not let
// it carry in, given back when it binds where they do.
type Inventory struct {
	_     struct{} `cbor:",toarray"`
	Slots []Stack
	Stash []Stack
}

// MaxStash bounds a character's stash, in stacks.
const MaxStash = 40

// Container is the contents of the container (a chest) placed on (X, Y):
// sent to a player who acts on it (opens it), and again to every player
// next to it whenever its contents change. A stall's has Prices, one per
// slot (a zero [Amount]: not for sale), and Flags [ContainerOwned] for
// its owner; a working station's has Ready, the Area tick its recipe is
// done at (0: idle).
type Container struct {
	_      struct{} `cbor:",toarray"`
	X, Y   int32
	Slots  []Stack
	Prices []Amount
	Flags  uint8
	Ready  uint64
}

// Container flags.
const (
	ContainerOwned uint8 = 1 << 0 // the player owns it (a stall's owner)
)

// Trade is the state of a trade between the player and the player With
// (an entity id): sent to both whenever it changes (opened, an offer
// changed, a confirmation), and once when it ends. Rev counts its
// changes; [IntentConfirm] names the revision it confirms. Mine and
// Theirs are the two sides' offers; Confirmed has TradeMine and
// TradeTheirs. Status is TradeOpen, TradeDone (the items changed hands)
// or TradeVoid, with the reason in Reason (a code: TRADE_CANCELLED,
// TRADE_FAR, ...).
type Trade struct {
	_         struct{} `cbor:",toarray"`
	ID        uint32
	With      uint32
	Rev       uint16
	Mine      []Offered
	Theirs    []Offered
	Confirmed uint8
	Status    uint8
	Reason    Code
}

// Offered is one entry of a trade's side: the stack of the offering
// player's inventory slot Slot, Stack.Count of its items.
type Offered struct {
	_     struct{} `cbor:",toarray"`
	Slot  uint8
	Stack Stack
}

// A [Trade]'s confirmations and statuses.
const (
	TradeMine   uint8 = 1 << 0 // the player confirmed the current revision
	TradeTheirs uint8 = 1 << 1 // the other player did

	TradeOpen uint8 = 0 // under way
	TradeDone uint8 = 1 // the items changed hands
	TradeVoid uint8 = 2 // called off; Reason says why
)

// MaxOffered bounds a trade's side, in stacks.
const MaxOffered = 8

// Recipe is one recipe a character knows: made at a station (an
// [ItemKind]'s Station) from exactly its Inputs, giving its Outputs, each
// sorted by kind, after Seconds of the Area's live time (0: at once).
type Recipe struct {
	_       struct{} `cbor:",toarray"`
	Code    uint16
	Name    string
	Station string
	Inputs  []Amount
	Outputs []Amount
	Seconds uint32
}

// Amount is Count items of the kind Kind.
type Amount struct {
	_     struct{} `cbor:",toarray"`
	Kind  uint16
	Count uint16
}

// Recipes is every recipe the player's character knows (at most
// [MaxRecipes], by code): sent after [Inventory] on every bind, and again
// whenever the character learned one, before the snapshot whose ack_seq
// passes the intent that taught it. A recipe the character does not know
// is never sent.
type Recipes struct {
	_     struct{} `cbor:",toarray"`
	Known []Recipe
}

// MaxRecipes bounds a [Recipes] list; MaxRecipeAmounts a recipe's inputs
// and its outputs.
const (
	MaxRecipes       = 1024
	MaxRecipeAmounts = 8
)

// CreatureKind is one kind of creature of an Area: its name and full
// health.
type CreatureKind struct {
	_    struct{} `cbor:",toarray"`
	Name string
	HP   uint16
}

// Player is one bound player in a [Presence] list.
type Player struct {
	_      struct{} `cbor:",toarray"`
	Entity uint32
	Name   string
}

// Presence lists the players bound in the Area; it replaces the client's
// previous list.
type Presence struct {
	_       struct{} `cbor:",toarray"`
	Area    uint32
	Players []Player
}

// AreaClosing warns that the Area shuts down after GraceMS milliseconds.
type AreaClosing struct {
	_       struct{} `cbor:",toarray"`
	Reason  Code
	GraceMS uint32
}

// Leave ends the session on purpose: the player quits the Area (a page's
// Leave or Log out, a closing tab). The body leaves the world at once,
// its state stored, and its resume token dies; the server answers [Left]
// and closes (1000). Its body is empty.
type Leave struct {
	_ struct{} `cbor:",toarray"`
}

// Watch is a spectator's choice of what it is sent (client -> server):
// Entity 0, the whole Area; a player's entity, the snapshots that
// player's session is sent (the cells within its interest, and only what
// it sees where the Area's rules ask for line of sight); a creature's
// entity, the whole Area and the creature's flow field ([Flow]). The next
// snapshot resets the spectator's view (its reset flag) and carries the
// new choice whole. A spectator starts watching the whole Area. From a
// peer that is not a spectator it is refused UNKNOWN_TYPE.
type Watch struct {
	_      struct{} `cbor:",toarray"`
	Entity uint32
}

// Flow values: a square's entry in [Flow.Dirs] is a [Dir] (0..7), the
// direction of the first step from it towards the target, or one of these.
const (
	FlowTarget    uint8 = 8   // the target's own square
	FlowUnreached uint8 = 255 // no way to the target within the field's reach
)

// MaxFlowSide bounds a [Flow]'s window, in squares a side.
const MaxFlowSide = 256

// Flow is the flow field a creature a spectator watches follows (server
// -> client, spectators only): the field of the body it hunts (Target, an
// entity; 0 when it hunts nobody, and the window is empty), over the
// window of W x H squares from (X, Y) around that body. Dirs holds a byte
// per square of the window, row by row: a [Dir] (the first step from
// there towards the target), [FlowTarget] or [FlowUnreached]. It is sent
// when it changes, reliably.
type Flow struct {
	_        struct{} `cbor:",toarray"`
	Creature uint32
	Target   uint32
	X, Y     int32
	W, H     uint16
	Dirs     []byte
}

// Left answers [Leave]: the body has left the Area, and the connection
// closes (1000) after it. Its body is empty.
type Left struct {
	_ struct{} `cbor:",toarray"`
}

// TakenOver is sent to the old peer when a second login of the same account
// takes the session over, just before its close. Its body is empty.
type TakenOver struct {
	_ struct{} `cbor:",toarray"`
}

// PortalBlocked reports a portal crossing that did not happen; the player
// stays (or is restored) at the from-cell.
type PortalBlocked struct {
	_      struct{} `cbor:",toarray"`
	Reason Code
}

// PortalTransferRejected reports that the director refused a transfer.
type PortalTransferRejected struct {
	_      struct{} `cbor:",toarray"`
	Reason Code
}

// PortalMoved tells the client its player now lives in another Area: open
// WSURL and send hello with Grant and JoinID.
type PortalMoved struct {
	_      struct{} `cbor:",toarray"`
	Area   uint32
	WSURL  string
	Grant  string
	JoinID uint64
}

// Type implements [Message].
func (*Hello) Type() Type { return TypeHello }

// Type implements [Message].
func (*Resume) Type() Type { return TypeResume }

// Type implements [Message].
func (*Intent) Type() Type { return TypeIntent }

// Type implements [Message].
func (*HelloAck) Type() Type { return TypeHelloAck }

// Type implements [Message].
func (*Error) Type() Type { return TypeError }

// Type implements [Message].
func (*Rehello) Type() Type { return TypeRehello }

// Type implements [Message].
func (*IntentResult) Type() Type { return TypeIntentResult }

// Type implements [Message].
func (*Snapshot) Type() Type { return TypeSnapshot }

// Type implements [Message].
func (*Static) Type() Type { return TypeStatic }

// Type implements [Message].
func (*Presence) Type() Type { return TypePresence }

// Type implements [Message].
func (*AreaClosing) Type() Type { return TypeAreaClosing }

// Type implements [Message].
func (*TakenOver) Type() Type { return TypeTakenOver }

// Type implements Message.
func (*Leave) Type() Type { return TypeLeave }

// Type implements Message.
func (*Left) Type() Type { return TypeLeft }

// Type implements [Message].
func (*Watch) Type() Type { return TypeWatch }

// Type implements [Message].
func (*Flow) Type() Type { return TypeFlow }

// Type implements [Message].
func (*PortalBlocked) Type() Type { return TypePortalBlocked }

// Type implements [Message].
func (*PortalTransferRejected) Type() Type { return TypePortalTransferRejected }

// Type implements [Message].
func (*PortalMoved) Type() Type { return TypePortalMoved }

// Type implements [Message].
func (*AreaInfo) Type() Type { return TypeAreaInfo }

// Type implements [Message].
func (*Inventory) Type() Type { return TypeInventory }

// Type implements [Message].
func (*Container) Type() Type { return TypeContainer }

// Type implements [Message].
func (*Recipes) Type() Type { return TypeRecipes }

// Type implements [Message].
func (*Trade) Type() Type { return TypeTrade }

func (*Hello) message()                  {}
func (*Resume) message()                 {}
func (*Intent) message()                 {}
func (*HelloAck) message()               {}
func (*Error) message()                  {}
func (*Rehello) message()                {}
func (*IntentResult) message()           {}
func (*Snapshot) message()               {}
func (*ShortSnapshot) message()          {}
func (*Static) message()                 {}
func (*Presence) message()               {}
func (*AreaClosing) message()            {}
func (*TakenOver) message()              {}
func (*Leave) message()                  {}
func (*Watch) message()                  {}
func (*Flow) message()                   {}
func (*Left) message()                   {}
func (*PortalBlocked) message()          {}
func (*PortalTransferRejected) message() {}
func (*PortalMoved) message()            {}
func (*AreaInfo) message()               {}
func (*Inventory) message()              {}
func (*Container) message()              {}
func (*Recipes) message()                {}
func (*Trade) message()                  {}

// newMessage returns a fresh zero body for t, or nil if t is unknown.
func newMessage(t Type) Message {
	switch t {
	case TypeHello:
		return new(Hello)
	case TypeResume:
		return new(Resume)
	case TypeIntent:
		return new(Intent)
	case TypeHelloAck:
		return new(HelloAck)
	case TypeError:
		return new(Error)
	case TypeRehello:
		return new(Rehello)
	case TypeIntentResult:
		return new(IntentResult)
	case TypeSnapshot:
		return new(Snapshot)
	case TypeStatic:
		return new(Static)
	case TypePresence:
		return new(Presence)
	case TypeAreaClosing:
		return new(AreaClosing)
	case TypeTakenOver:
		return new(TakenOver)
	case TypeLeave:
		return new(Leave)
	case TypeWatch:
		return new(Watch)
	case TypeFlow:
		return new(Flow)
	case TypeLeft:
		return new(Left)
	case TypePortalBlocked:
		return new(PortalBlocked)
	case TypePortalTransferRejected:
		return new(PortalTransferRejected)
	case TypePortalMoved:
		return new(PortalMoved)
	case TypeAreaInfo:
		return new(AreaInfo)
	case TypeInventory:
		return new(Inventory)
	case TypeContainer:
		return new(Container)
	case TypeRecipes:
		return new(Recipes)
	case TypeTrade:
		return new(Trade)
	}
	return nil
}

// SeqAfter reports whether intent seq a comes after b in serial-number
// arithmetic on 32 bits (RFC 1982): 0 < a-b < 2^31, modulo 2^32. A session
// starts at b = 0, so its first seq is 1; after 2^32-1 comes 0.
func SeqAfter(a, b uint32) bool {
	d := a - b
	return d != 0 && d < 1<<31
}

// Delta returns the square offset of one step in d: north is -y, east is
// +x. A value above 7 has no direction: (0, 0).
func (d Dir) Delta() (dx, dy int32) {
	if d > DirNW {
		return 0, 0
	}
	return [8]int32{0, 1, 1, 1, 0, -1, -1, -1}[d], [8]int32{-1, -1, 0, 1, 1, 1, 0, -1}[d]
}
