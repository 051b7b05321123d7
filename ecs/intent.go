package ecs

// IntentKind says what an intent asks for.
type IntentKind uint8

// The intent kinds.
const (
	// IntentStep asks for one step in Dir.
	IntentStep IntentKind = iota + 1
	// IntentMoveTo asks to walk to (X, Y) along a planned path; a newer
	// move-to or a stop supersedes it while it waits in the queue.
	IntentMoveTo
	// IntentStop drops the queued steps and the move-to target.
	IntentStop
	// IntentAction acts on the square next to the body in Dir (the body
	// turns to face it): opens or closes a door, attacks a creature or,
	// where the rules allow it, a player. It spends the movement budget
	// like a step. What it does is the Area's OnAction hook's to say.
	IntentAction
	// IntentPlace places the item of inventory slot From on the square next
	// to the body in Dir (the body turns to face it).
	IntentPlace
	// IntentTake takes the item placed on the square next to the body in
	// Dir back into the inventory (the occupant slot's item first, else the
	// floor's).
	IntentTake
	// IntentMoveItem moves Count items (0: the whole stack) from slot From
	// to slot To: inventory slots, or slots of the container the body
	// faces in Dir (ContainerSlot+k). Onto an empty slot it moves (or
	// splits), onto a stack of the same kind it merges as far as the stack
	// goes, onto another kind it swaps whole stacks.
	IntentMoveItem
	// IntentCraft crafts at the station the body faces in Dir (the body
	// turns to face it): the station's contents, as a multiset, must be
	// exactly a recipe's inputs, and become its outputs.
	IntentCraft
	// IntentUse uses the item of inventory slot From: a blueprint teaches
	// its recipe.
	IntentUse
	// IntentTrade opens a trade with the player next to the body in Dir.
	IntentTrade
	// IntentOffer puts Count items of inventory slot From on the body's
	// side of its open trade (Count 0 takes the slot off).
	IntentOffer
	// IntentConfirm confirms the open trade at revision Count.
	IntentConfirm
	// IntentCancel calls the open trade off.
	IntentCancel
	// IntentPrice sets the price of slot From (ContainerSlot+k) of the
	// stall next to the body in Dir: Y items of kind X (Y 0: not for sale).
	IntentPrice
	// IntentBuy buys the stack of slot From (ContainerSlot+k) of the stall
	// next to the body in Dir, expected to hold Count items, for the price
	// the buyer expects: Y items of kind X.
	IntentBuy
)

// Intent is one request of a player, tagged with the client's seq.
type Intent struct {
	Seq  uint32
	Kind IntentKind
	Dir  Dir
	X, Y int32
	// From, To and Count are an item intent's slots and count.
	From, To uint8
	Count    uint16
	// Tag is the poster's own mark, carried unchanged to the Answer: the
	// host puts its connection's binding number here, so an answer is never
	// delivered to a later connection than the one that sent the intent.
	Tag uint32
	// Superseded is set by the intake when a newer intent replaces this one
	// while it waits; it is answered OutcomeSuperseded when it reaches the
	// head of the queue, so queued intents are answered in seq order.
	Superseded bool
}

// Outcome is the engine's answer to one intent. Every intent gets exactly
// one: OutcomeApplied or a rejection. The area host maps outcomes to wire
// codes (applied intents are acknowledged through the snapshot's ack_seq).
type Outcome uint8

// The outcomes.
const (
	OutcomeApplied          Outcome = iota // done; acknowledged by ack_seq
	OutcomeSuperseded                      // replaced by a newer intent before it ran
	OutcomeTooFast                         // the entity's queue was full
	OutcomeEntityGone                      // the body no longer exists
	OutcomePortalInProgress                // the body is crossing a portal
	OutcomeBlocked                         // the square is a wall or occupied
	OutcomeOutOfBounds                     // the square is off the grid
	OutcomeNoPath                          // no route to the move-to target
	OutcomeInvalid                         // an intent kind or direction the engine does not know
	OutcomeNotAllowed                      // the Area's rules forbid it (a diagonal step where none are allowed)
	OutcomeClosing                         // the Area closes: nothing more is applied
	OutcomeNothingThere                    // an action on a square with nothing to act on
	OutcomeInventoryFull                   // no room in the inventory (or container) for it
	OutcomeNotBuilder                      // the Area's rules do not let this player build here
	OutcomeBudget                          // the player's changes per minute are spent
	OutcomeItemCap                         // the Area holds as many placed items as its rules allow
	OutcomeCooldown                        // the source was gathered too recently
	OutcomeOccupied                        // the square's slot for it holds something already
	OutcomeNotEmpty                        // a container that still holds items cannot be taken back
	OutcomeOffPlot                         // building here is allowed only on the map's plots, and the square is on none
	OutcomeNoRecipe                        // the station's contents match none of its recipes
	OutcomeKnown                           // the character knows the recipe already
	OutcomeTrading                         // the body has an open trade: its items are held
	OutcomeNotTrading                      // the body has no open trade
	OutcomeBusy                            // the other player trades with someone else
	OutcomeStale                           // the trade or stall is not what the player saw
	OutcomeWorking                         // the station is working: its contents are held
	OutcomeNotOwner                        // only the stall's owner may do this
	OutcomeNotForSale                      // the stall's slot has no price or nothing in it
	OutcomeCantPay                         // the buyer does not carry the price
)

var outcomeNames = [...]string{"APPLIED", "SUPERSEDED", "TOO_FAST", "ENTITY_GONE", "PORTAL_IN_PROGRESS", "BLOCKED", "OUT_OF_BOUNDS", "NO_PATH", "INVALID", "NOT_ALLOWED", "CLOSING", "NOTHING_THERE", "INVENTORY_FULL", "NOT_BUILDER", "BUDGET", "ITEM_CAP", "COOLDOWN", "OCCUPIED", "NOT_EMPTY", "OFF_PLOT", "NO_RECIPE", "KNOWN", "TRADING", "NOT_TRADING", "BUSY", "STALE", "WORKING", "NOT_OWNER", "NOT_FOR_SALE", "CANT_PAY"}

// String returns the outcome's upper-case name.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "OUTCOME?"
}

// Answer is one intent's outcome, for the host to deliver.
type Answer struct {
	Entity  Entity
	Seq     uint32
	Tag     uint32
	Outcome Outcome
}

// QueueLen bounds each entity's queue of pending intents.
const QueueLen = 8

// Intents is an entity's ordered, bounded queue of intents waiting for
// their tick. It is a fixed ring: no allocation, no pointers.
type Intents struct {
	buf  [QueueLen]Intent
	head uint8
	n    uint8
}

// Len is the number of queued intents.
func (q *Intents) Len() int { return int(q.n) }

// Full reports whether another Push would fail.
func (q *Intents) Full() bool { return q.n == QueueLen }

// Push appends it and reports false if the queue is full.
func (q *Intents) Push(it Intent) bool {
	if q.n == QueueLen {
		return false
	}
	q.buf[(q.head+q.n)%QueueLen] = it
	q.n++
	return true
}

// Peek returns the oldest intent; the queue must not be empty.
func (q *Intents) Peek() *Intent { return &q.buf[q.head] }

// Pop removes the oldest intent; the queue must not be empty.
func (q *Intents) Pop() Intent {
	it := q.buf[q.head]
	q.head = (q.head + 1) % QueueLen
	q.n--
	return it
}

// At returns the i-th oldest queued intent (0 is the head).
func (q *Intents) At(i int) *Intent { return &q.buf[(int(q.head)+i)%QueueLen] }

// SeqAfter reports whether intent seq a comes after b in serial-number
// arithmetic on 32 bits (RFC 1982): 0 < a-b < 2^31, modulo 2^32. The
// protocol's seqs follow it (net/wire has the same rule for clients).
func SeqAfter(a, b uint32) bool {
	d := a - b
	return d != 0 && d < 1<<31
}
