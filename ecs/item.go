package ecs

// ItemID names one item stack for as long as it exists: an Area mints it
// (the Area's ID in the high 32 bits, a counter its blob keeps in the low
// 32), so no two stacks anywhere share one (docs/items.md).
type ItemID uint64

// Stack is one item stack: Count items of the kind Kind (a content item
// code), named ID. The zero Stack is an empty slot.
type Stack struct {
	ID    ItemID
	Kind  uint16
	Count uint16
}

// Empty reports whether the slot holds nothing.
func (s Stack) Empty() bool { return s.Count == 0 }

// InventorySlots is the number of slots of a character's inventory.
const InventorySlots = 20

// Inventory is what a player's character carries: a fixed array of slots,
// so a world stays flat memory. The host fills it from the character's
// stored state when it binds the body and writes it back with every
// snapshot of the Area (systems/items owns the changes). Stash is what
// the character owns but may not carry here (the Area's rules keep it
// out: an arena); it waits, untouched by the tick, until the character
// binds where it may carry it.
type Inventory struct {
	Slots [InventorySlots]Stack
	Stash []Stack
	// Recipes are the codes of the recipes the character knows, sorted:
	// made or learned, kept with its items and never told to another.
	Recipes []uint16
}

// MaxRecipes bounds the recipes a character knows: as many as a content
// may have (content.MaxRecipes).
const MaxRecipes = 1024

// MaxStash bounds a character's stash, in stacks: what does not fit
// stays in the inventory.
const MaxStash = 40

// ContainerSlot is the first slot number that names a slot of the
// container the body faces rather than one of its inventory: an item
// intent's From or To of ContainerSlot+k is the container's slot k.
const ContainerSlot = 64

// InventoryOf returns body e's inventory, or nil for a body without one
// (only players carry things).
func (a *Area) InventoryOf(e Entity) *Inventory { return a.inventoryMap.Get(e) }
