package items

import "github.com/leyworks/ley/ecs"

// What the tests of package items_test read of a System, compiled only
// into test binaries: the product counts items from the store
// (director/census), never from a running Area's memory.

// Place says where a stack is, for Each.
type Place uint8

// The places of a stack in an Area.
const (
	InWorld     Place = iota + 1 // placed on a square
	InContainer                  // in a placed container
	OnBody                       // in a body's inventory
)

// Each calls fn for every stack the Area holds: placed, in containers and
// in its bodies' inventories (e is the body, for OnBody).
func (s *System) Each(a *ecs.Area, fn func(p Place, e ecs.Entity, st ecs.Stack)) {
	for _, o := range s.Map.Objects() {
		if o.Item == 0 {
			continue
		}
		fn(InWorld, ecs.Entity{}, ecs.Stack{ID: o.Stack, Kind: o.Item, Count: 1})
		for _, st := range s.containers[o.ID] {
			if !st.Empty() {
				fn(InContainer, ecs.Entity{}, st)
			}
		}
	}
	q := ecs.NewFilter1[ecs.Inventory]().Query(&a.World)
	for q.Next() {
		inv := q.Get()
		for _, st := range inv.Slots {
			if !st.Empty() {
				fn(OnBody, q.Entity(), st)
			}
		}
	}
}

// Ledger returns the items of each kind the Area ever made (created) and
// unmade (destroyed), fresh maps.
func (s *System) Ledger() (created, destroyed map[uint16]uint64) {
	created, destroyed = make(map[uint16]uint64, len(s.created)), make(map[uint16]uint64, len(s.destroyed))
	for k, v := range s.created {
		created[k] = v
	}
	for k, v := range s.destroyed {
		destroyed[k] = v
	}
	return created, destroyed
}

// Create mints count items of kind into body e's inventory, counted as
// created in the Area's ledger (a grant of the content or an operator).
// It reports false, and changes nothing, when they do not fit.
func (s *System) Create(a *ecs.Area, e ecs.Entity, kind, count uint16) bool {
	inv := s.inventories.Get(e)
	if inv == nil || s.kinds[kind] == nil {
		return false
	}
	slots := inv.Slots
	m := minter{area: a.ID, next: s.next}
	if !s.add(slots[:], kind, count, 0, &m) {
		return false
	}
	inv.Slots, s.next = slots, m.next
	s.created[kind] += uint64(count)
	changed(a, e, ecs.NoCell)
	return true
}
