package items

import (
	"github.com/leyworks/ley/ecs"
)

// Trade bounds.
const (
	// TradeReach is how far, in squares (Chebyshev), two trading bodies
	// may stand apart; past it the trade is void (TradeFar).
	TradeReach = 3
	// MaxOffered bounds one side of a trade, in inventory slots.
	MaxOffered = 8
)

// TradeEnd says whether a trade is open, done, or void and why.
type TradeEnd uint8

// The ends of a trade.
const (
	TradeOpen      TradeEnd = iota // under way
	TradeDone                      // the items changed hands
	TradeCancelled                 // a player called it off
	TradeFar                       // a player walked out of reach
	TradeLeft                      // a player disconnected, left or is gone
	TradePortal                    // a player stepped into a portal
	TradeTakenOver                 // a player's session was taken over (or ended by the realm)
	TradeChanged                   // an offer changed after the other confirmed
	TradeNoRoom                    // both confirmed, and an inventory had no room for what it gets
)

// Offer is one entry of a trade's side: Stack.Count items of the stack
// Stack.ID in inventory slot Slot of the player offering it.
type Offer struct {
	Slot  uint8
	Stack ecs.Stack
}

// Trade is a trade between two bodies of the Area: each side's offer,
// each side's confirmation of revision Rev, and how it ended. The
// System owns it; the host reads it (Trade) to tell both players.
type Trade struct {
	ID        uint32
	Bodies    [2]ecs.Entity
	Rev       uint16
	Sides     [2][]Offer
	Confirmed [2]bool
	End       TradeEnd
}

// Side returns which side of t body e is on (0 or 1), or -1.
func (t *Trade) Side(e ecs.Entity) int {
	switch e {
	case t.Bodies[0]:
		return 0
	case t.Bodies[1]:
		return 1
	}
	return -1
}

// tradeOf returns body e's open trade, or nil.
func (s *System) tradeOf(e ecs.Entity) *Trade {
	t := s.trades[s.tradeIDs[e.ID()]]
	if t == nil || t.End != TradeOpen || t.Side(e) < 0 {
		return nil
	}
	return t
}

// OpenTrade returns body e's open trade, or nil. The Trade belongs to
// the System: read it on the Area's goroutine only.
func (s *System) OpenTrade(e ecs.Entity) *Trade { return s.tradeOf(e) }

// Trading reports whether body e is in an open trade.
func (s *System) Trading(e ecs.Entity) bool { return s.tradeOf(e) != nil }

// held reports whether body e's items are held: it is in an open trade
// and has something on offer there. A player who has offered nothing
// keeps the use of its things, so a trade another opens with it cannot
// lock its inventory; what it offers stays as offered.
func (s *System) held(e ecs.Entity) bool {
	t := s.tradeOf(e)
	return t != nil && len(t.Sides[t.Side(e)]) > 0
}

// Trade returns trade id, open or ended since the host was last told
// (Told), or nil.
func (s *System) Trade(id uint32) *Trade { return s.trades[id] }

// Told forgets the trades that ended: the host has told their players.
func (s *System) Told() {
	if len(s.trades) == 0 {
		return // most ticks: no iterator to start over an empty map
	}
	for id, t := range s.trades {
		if t.End != TradeOpen {
			delete(s.trades, id)
		}
	}
	if len(s.trades) == 0 {
		s.trades = nil // made again by the next trade
	}
}

// tell has the host tell both players of t.
func tell(a *ecs.Area, t *Trade) {
	for _, e := range t.Bodies {
		a.Emit(ecs.Event{Kind: ecs.EventTrade, Entity: e, Ref: t.ID})
	}
}

// end ends trade t with why and tells its players; nobody's items move
// (but for TradeDone, which swap has moved).
func (s *System) end(a *ecs.Area, t *Trade, why TradeEnd) {
	t.End = why
	for _, e := range t.Bodies {
		if s.tradeIDs[e.ID()] == t.ID {
			delete(s.tradeIDs, e.ID())
		}
	}
	tell(a, t)
}

// EndTrade voids body e's open trade, if any, with why: the host calls
// it when e's connection drops or is taken over, or e starts a crossing.
func (s *System) EndTrade(a *ecs.Area, e ecs.Entity, why TradeEnd) {
	if t := s.tradeOf(e); t != nil {
		s.end(a, t, why)
	}
}

// openTrade opens a trade between body e and the player on the square it
// faces in it.Dir.
func (s *System) openTrade(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	if s.inventories.Get(e) == nil {
		return ecs.OutcomeEntityGone
	}
	if s.Trading(e) {
		return ecs.OutcomeTrading
	}
	c, o := s.facing(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	other, ok := a.EntityAt(c)
	if !ok || other == e || s.inventories.Get(other) == nil {
		return ecs.OutcomeNothingThere
	}
	if pl := s.players.Get(other); pl == nil || pl.Away || pl.Settling || a.InTransit(other) {
		return ecs.OutcomeNotAllowed
	}
	if s.Trading(other) {
		return ecs.OutcomeBusy
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	s.lastTrade++
	t := &Trade{ID: s.lastTrade, Bodies: [2]ecs.Entity{e, other}}
	if s.trades == nil {
		s.trades = make(map[uint32]*Trade)
	}
	s.trades[t.ID] = t
	s.tradeIDs[e.ID()], s.tradeIDs[other.ID()] = t.ID, t.ID
	a.Face(e, it.Dir)
	tell(a, t)
	return ecs.OutcomeApplied
}

// offer puts it.Count items of inventory slot it.From on body e's side of
// its trade (it.Count 0: takes the slot off). A change after the other
// side confirmed voids the trade; one after e's own confirmation drops it.
func (s *System) offer(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	t := s.tradeOf(e)
	if t == nil {
		return ecs.OutcomeNotTrading
	}
	inv := s.inventories.Get(e)
	if it.From >= ecs.InventorySlots {
		return ecs.OutcomeInvalid
	}
	st := inv.Slots[it.From]
	i := t.Side(e)
	side := t.Sides[i]
	at := -1
	for j := range side {
		if side[j].Slot == it.From {
			at = j
		}
	}
	switch {
	case it.Count == 0 && at < 0:
		return ecs.OutcomeNothingThere // nothing of that slot on offer
	case it.Count > 0 && st.Empty():
		return ecs.OutcomeNothingThere
	case it.Count > st.Count:
		return ecs.OutcomeInvalid
	case it.Count > 0 && at < 0 && len(side) >= MaxOffered:
		return ecs.OutcomeInvalid
	}
	if t.Confirmed[1-i] {
		s.end(a, t, TradeChanged)
		return ecs.OutcomeApplied // the offer was the player's to change; the trade is void
	}
	switch {
	case it.Count == 0:
		t.Sides[i] = append(side[:at], side[at+1:]...)
	case at >= 0:
		side[at].Stack = ecs.Stack{ID: st.ID, Kind: st.Kind, Count: it.Count}
	default:
		t.Sides[i] = append(side, Offer{Slot: it.From, Stack: ecs.Stack{ID: st.ID, Kind: st.Kind, Count: it.Count}})
	}
	t.Rev++
	t.Confirmed[i] = false
	tell(a, t)
	return ecs.OutcomeApplied
}

// confirm confirms body e's trade at revision it.Count; when both sides
// have confirmed, the items change hands (swap).
func (s *System) confirm(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	t := s.tradeOf(e)
	if t == nil {
		return ecs.OutcomeNotTrading
	}
	if it.Count != t.Rev {
		return ecs.OutcomeStale
	}
	if len(t.Sides[0]) == 0 && len(t.Sides[1]) == 0 {
		return ecs.OutcomeNothingThere
	}
	t.Confirmed[t.Side(e)] = true
	if !t.Confirmed[0] || !t.Confirmed[1] {
		tell(a, t)
		return ecs.OutcomeApplied
	}
	for _, b := range t.Bodies {
		// A body whose crossing is under way or settling has had its
		// state sent on: its items must not change here (the host voids
		// its trade as the crossing starts; this is the second fence).
		if transitVoid() && (a.InTransit(b) || s.settling(b)) {
			s.end(a, t, TradePortal)
			return ecs.OutcomeApplied
		}
	}
	s.end(a, t, s.swap(a, t))
	return ecs.OutcomeApplied
}

// swap moves both sides of t into the other's inventory, in this one
// step, and reports TradeDone; or, when either inventory has no room for
// what it gets (or an offer no longer matches its slot, which the hold
// on a trader's items rules out), moves nothing and reports why. Whole
// stacks keep their ids; part of one gets a new id. Nothing is made or
// destroyed, so the ledger does not change.
func (s *System) swap(a *ecs.Area, t *Trade) TradeEnd {
	var inv [2]*ecs.Inventory
	var slots [2][ecs.InventorySlots]ecs.Stack
	for i, e := range t.Bodies {
		if inv[i] = s.inventories.Get(e); inv[i] == nil {
			return TradeLeft
		}
		slots[i] = inv[i].Slots
	}
	var moving [2][MaxOffered]ecs.Stack
	for i := range 2 {
		for j, o := range t.Sides[i] {
			st := &slots[i][o.Slot]
			if tradeHold() && (st.ID != o.Stack.ID || st.Kind != o.Stack.Kind || st.Count < o.Stack.Count) {
				return TradeChanged
			}
			if o.Stack.Count == st.Count {
				moving[i][j] = *st
				*st = ecs.Stack{}
			} else {
				moving[i][j] = ecs.Stack{Kind: st.Kind, Count: o.Stack.Count} // minted as it lands
				st.Count -= o.Stack.Count
			}
		}
	}
	m := minter{area: a.ID, next: s.next}
	for i := range 2 {
		for j := range t.Sides[i] {
			mv := moving[i][j]
			if !s.add(slots[1-i][:], mv.Kind, mv.Count, mv.ID, &m) {
				if !swapWhole() { // the hole the fence closes: what was taken out stays out
					inv[0].Slots, inv[1].Slots = slots[0], slots[1]
				}
				return TradeNoRoom
			}
		}
	}
	s.next = m.next
	for i, e := range t.Bodies {
		inv[i].Slots = slots[i]
		changed(a, e, ecs.NoCell)
	}
	return TradeDone
}

// cancel calls body e's trade off.
func (s *System) cancel(a *ecs.Area, e ecs.Entity) ecs.Outcome {
	t := s.tradeOf(e)
	if t == nil {
		return ecs.OutcomeNotTrading
	}
	s.end(a, t, TradeCancelled)
	return ecs.OutcomeApplied
}

// watchTrades voids the open trades whose bodies no longer can trade: one
// gone, away (its connection dropped), crossing a portal, or out of
// reach. It runs after the intents of every tick.
func (s *System) watchTrades(a *ecs.Area) {
	for _, t := range s.trades {
		if t.End != TradeOpen {
			continue
		}
		why := TradeOpen
		var pos [2]*ecs.Position
		for i, e := range t.Bodies {
			var pl *ecs.Player
			if a.Alive(e) {
				pl = s.players.Get(e)
			}
			switch {
			case pl == nil || pl.Away:
				why = TradeLeft
			case pl.Settling || a.InTransit(e):
				why = TradePortal
			}
			if why != TradeOpen {
				break
			}
			pos[i] = s.positions.Get(e)
		}
		if why == TradeOpen && (pos[0] == nil || pos[1] == nil ||
			max(pos[0].X-pos[1].X, pos[1].X-pos[0].X, pos[0].Y-pos[1].Y, pos[1].Y-pos[0].Y) > TradeReach) {
			why = TradeFar
		}
		if why != TradeOpen {
			s.end(a, t, why)
		}
	}
}
