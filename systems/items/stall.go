package items

import (
	"github.com/leyworks/ley/ecs"
)

// Price is a stall's ask for the stack of one of its slots: Count items of
// kind Kind. The zero Price is no ask: the slot is not for sale.
type Price struct{ Kind, Count uint16 }

// stall is what a placed stall is beyond its container: whose it is (an
// account) and what it asks for each slot.
type stall struct {
	owner  uint64
	prices []Price // one per slot of its container
}

// account returns the account of body e's player, or 0 for a body that
// is no player.
func (s *System) account(e ecs.Entity) uint64 {
	if pl := s.players.Get(e); pl != nil {
		return pl.Account
	}
	return 0
}

// mayStock says whether body e may change the contents of the container
// obj: anyone who may build, but a stall only its owner.
func (s *System) mayStock(e ecs.Entity, obj uint32) ecs.Outcome {
	if st := s.stalls[obj]; st != nil {
		if s.account(e) != st.owner {
			return ecs.OutcomeNotOwner
		}
		return ecs.OutcomeApplied
	}
	return s.mayBuild(e)
}

// offSale takes container slots n and m (item intent slot numbers) of
// the stall obj off sale: a slot whose stack changed asks nothing until
// its owner prices it again, so a buyer never pays the old price for a
// new stack.
func (s *System) offSale(obj uint32, slots ...uint8) {
	st := s.stalls[obj]
	if st == nil {
		return
	}
	for _, n := range slots {
		if n >= ecs.ContainerSlot && int(n-ecs.ContainerSlot) < len(st.prices) {
			st.prices[n-ecs.ContainerSlot] = Price{}
		}
	}
}

// facingStall returns the stall body e faces in dir, its square and its
// object ID.
func (s *System) facingStall(a *ecs.Area, e ecs.Entity, d ecs.Dir) (*stall, ecs.Cell, uint32, ecs.Outcome) {
	c, o := s.facing(a, e, d)
	if o != ecs.OutcomeApplied {
		return nil, c, 0, o
	}
	obj := s.Map.At(c)
	if obj == nil || obj.Item == 0 || s.stalls[obj.ID] == nil {
		return nil, c, 0, ecs.OutcomeNothingThere
	}
	return s.stalls[obj.ID], c, obj.ID, ecs.OutcomeApplied
}

// price sets the price of slot it.From (ContainerSlot+k) of the stall
// body e faces: it.Y items of kind it.X, or (it.Y 0) none. Only the
// stall's owner may.
func (s *System) price(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	st, c, obj, o := s.facingStall(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	if s.account(e) != st.owner {
		return ecs.OutcomeNotOwner
	}
	if it.From < ecs.ContainerSlot || int(it.From-ecs.ContainerSlot) >= len(st.prices) {
		return ecs.OutcomeInvalid
	}
	var p Price
	if it.Y != 0 {
		if it.X <= 0 || it.X > 0xffff || it.Y < 0 {
			return ecs.OutcomeInvalid
		}
		k := s.kinds[uint16(it.X)]
		if k == nil || it.Y > int32(k.Stack) {
			return ecs.OutcomeInvalid // the price must fit one stack: it goes into the slot
		}
		if s.containers[obj][it.From-ecs.ContainerSlot].Empty() {
			return ecs.OutcomeNothingThere
		}
		p = Price{Kind: uint16(it.X), Count: uint16(it.Y)}
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	st.prices[it.From-ecs.ContainerSlot] = p
	a.Emit(ecs.Event{Kind: ecs.EventContainer, By: e, Cell: c})
	return ecs.OutcomeApplied
}

// buy buys the stack of slot it.From (ContainerSlot+k) of the stall body
// e faces, which e expects to hold it.Count items and to ask it.Y of kind
// it.X: in one step the price leaves e's inventory into the slot (the
// till, off sale) and the stack goes into e's inventory, whole, or
// nothing changes. The stall's owner need not be there.
func (s *System) buy(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	st, c, obj, o := s.facingStall(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	if s.account(e) == st.owner {
		return ecs.OutcomeNotAllowed // one's own stall is stocked, not bought from
	}
	if it.From < ecs.ContainerSlot || int(it.From-ecs.ContainerSlot) >= len(st.prices) {
		return ecs.OutcomeInvalid
	}
	k := int(it.From - ecs.ContainerSlot)
	lot, p := s.containers[obj][k], st.prices[k]
	if lot.Empty() || p.Count == 0 {
		return ecs.OutcomeNotForSale
	}
	if lot.Count != it.Count || int32(p.Kind) != it.X || int32(p.Count) != it.Y {
		return ecs.OutcomeStale
	}
	// Into a copy: the price out, the lot in; then the till.
	slots := inv.Slots
	till, ok := pay(slots[:], p)
	if !ok {
		return ecs.OutcomeCantPay
	}
	m := minter{area: a.ID, next: s.next}
	if !s.add(slots[:], lot.Kind, lot.Count, lot.ID, &m) {
		if m.out {
			return ecs.OutcomeItemCap
		}
		return ecs.OutcomeInventoryFull
	}
	if till.ID == 0 {
		if till.ID = m.mint(); m.out {
			return ecs.OutcomeItemCap
		}
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	inv.Slots, s.next = slots, m.next
	s.containers[obj][k] = till
	st.prices[k] = Price{}
	a.Face(e, it.Dir)
	changed(a, e, c)
	return ecs.OutcomeApplied
}

// pay takes price p out of slots, from the last stacks of its kind
// first, and returns it as one stack: keeping the id of the stack it
// took, when one stack held exactly the price, else with id 0 (to be
// minted). ok is false when slots hold fewer than p.Count of p.Kind;
// slots are then partly changed, so callers pay from a copy.
func pay(slots []ecs.Stack, p Price) (till ecs.Stack, ok bool) {
	till = ecs.Stack{Kind: p.Kind, Count: p.Count}
	need := p.Count
	for i := len(slots) - 1; i >= 0 && need > 0; i-- {
		st := &slots[i]
		if st.Empty() || st.Kind != p.Kind {
			continue
		}
		if st.Count == p.Count && need == p.Count {
			till.ID = st.ID // the whole price in one stack: it moves as it is
		}
		n := min(need, st.Count)
		need -= n
		if st.Count -= n; st.Count == 0 {
			*st = ecs.Stack{}
		}
	}
	return till, need == 0
}

// Stall returns the owner (an account) and the prices of the stall on
// square c, one per slot of its container; ok is false when no stall
// stands there. The slice aliases the System.
func (s *System) Stall(c ecs.Cell) (owner uint64, prices []Price, ok bool) {
	obj := s.Map.At(c)
	if obj == nil || obj.Item == 0 {
		return 0, nil, false
	}
	st := s.stalls[obj.ID]
	if st == nil {
		return 0, nil, false
	}
	return st.owner, st.prices, true
}
