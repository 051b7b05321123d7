package ecs

// EventKind says what an Event reports.
type EventKind uint8

// The event kinds.
const (
	// EventHurt: Entity lost Amount hit points to By (zero when nothing
	// did: a trap, a fall).
	EventHurt EventKind = iota + 1
	// EventDied: Entity's health ran out; By dealt the last hit.
	EventDied
	// EventRespawned: Entity (a player) came back at Cell with full health.
	EventRespawned
	// EventDoor: By opened (Amount 1) or closed (Amount 0) the door on Cell.
	EventDoor
	// EventInventory: Entity's inventory changed (systems/items); the host
	// tells its player. Cell is the container it used, or NoCell.
	EventInventory
	// EventContainer: the contents of the container on Cell changed (By
	// changed them), or By opened it (Amount 1).
	EventContainer
	// EventRecipes: Entity learned a recipe (systems/items); the host
	// tells its player the recipes it knows.
	EventRecipes
	// EventTrade: the trade Ref that Entity is in changed, or ended
	// (systems/items); the host tells Entity's player.
	EventTrade
)

// Event is something that happened in a tick that the host may tell its
// players about: a hit, a death, a door. Events change nothing by
// themselves (the world already holds what they report); systems append
// them with Emit, the host reads Area.Events after the tick, and the Area
// empties the list after AfterTick.
type Event struct {
	Kind   EventKind
	Entity Entity
	By     Entity
	Amount int32
	Cell   Cell
	// Ref names what the event is about where an entity and a square do
	// not: a trade's number.
	Ref uint32
}

// Emit records ev for this tick's AfterTick.
func (a *Area) Emit(ev Event) { a.Events = append(a.Events, ev) }
