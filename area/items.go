package area

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/items"
	"github.com/leyworks/ley/systems/tell"
)

// tellItems tells the players what this tick changed of their things: a
// player whose inventory changed gets it whole, a player who opened a
// container gets its contents, and so does every player next to a
// container whose contents changed; a player whose character learned a
// recipe gets the recipes it knows; both players of a trade that changed
// or ended get its state. It runs after the tick and before
// its answers and snapshot, so a client has the inventory before the
// snapshot whose ack_seq passes the intent that changed it.
func (ha *hostArea) tellItems(a *ecs.Area) {
	for i := range a.Events {
		ev := &a.Events[i]
		switch ev.Kind {
		case ecs.EventInventory:
			if dup(a.Events[:i], ev) {
				continue // told once a tick
			}
			if b := ha.route(ev.Entity); b != nil && b.peer != nil {
				ha.sendInventory(b)
			}
		case ecs.EventRecipes:
			if dup(a.Events[:i], ev) {
				continue
			}
			if b := ha.route(ev.Entity); b != nil && b.peer != nil {
				ha.sendRecipes(b)
			}
		case ecs.EventTrade:
			if dup(a.Events[:i], ev) {
				continue
			}
			if b := ha.route(ev.Entity); b != nil && b.peer != nil {
				ha.sendTrade(b, ev.Ref)
			}
		case ecs.EventContainer:
			if ev.Amount == 1 { // opened
				if b := ha.route(ev.By); b != nil && b.peer != nil {
					ha.sendContainer(b, ev.Cell)
				}
				continue
			}
			if dup(a.Events[:i], ev) {
				continue
			}
			x, y := a.Grid.XY(ev.Cell)
			for _, b := range ha.order {
				if b.peer == nil {
					continue
				}
				if p := ha.positions.Get(b.entity); p != nil && max(p.X-x, x-p.X, p.Y-y, y-p.Y) <= 1 {
					ha.sendContainer(b, ev.Cell)
				}
			}
		}
	}
	ha.eng.Items.Told()
}

// dup reports whether earlier holds an event of ev's kind about the same
// entity, square and reference (a trade), and not an opening: its player
// is told once a tick.
func dup(earlier []ecs.Event, ev *ecs.Event) bool {
	for j := range earlier {
		if e := &earlier[j]; e.Kind == ev.Kind && e.Entity == ev.Entity && e.Cell == ev.Cell && e.Ref == ev.Ref && e.Amount == 0 {
			return true
		}
	}
	return false
}

// sendInventory sends b's player its inventory and stash, whole.
func (ha *hostArea) sendInventory(b *body) {
	if inv := ha.a.InventoryOf(b.entity); inv != nil {
		b.peer.send(tell.Inventory(inv))
	}
}

// sendRecipes sends b's player the recipes its character knows: its own,
// and no other's (the content's recipes are the server's secret).
func (ha *hostArea) sendRecipes(b *body) {
	b.peer.send(tell.Recipes(ha.eng.Items.Known(b.entity)))
}

// sendContainer sends b's player the contents of the container on c (if
// one still stands there).
func (ha *hostArea) sendContainer(b *body, c ecs.Cell) {
	if m := tell.Container(ha.eng.Items, ha.a, c, b.account); m != nil {
		b.peer.send(m)
	}
}

// tradeReasons are the wire's reasons of the ends of a trade.
var tradeReasons = [...]wire.Code{
	items.TradeOpen:      wire.CodeOK,
	items.TradeDone:      wire.CodeOK,
	items.TradeCancelled: wire.CodeTradeCancelled,
	items.TradeFar:       wire.CodeTradeFar,
	items.TradeLeft:      wire.CodeTradeLeft,
	items.TradePortal:    wire.CodeTradePortal,
	items.TradeTakenOver: wire.CodeTradeTakenOver,
	items.TradeChanged:   wire.CodeTradeChanged,
	items.TradeNoRoom:    wire.CodeInventoryFull,
}

// sendTrade sends b's player the state of trade id, from its side.
func (ha *hostArea) sendTrade(b *body, id uint32) {
	t := ha.eng.Items.Trade(id)
	if t == nil {
		return
	}
	me := t.Side(b.entity)
	if me < 0 {
		return
	}
	m := &wire.Trade{ID: t.ID, With: t.Bodies[1-me].ID(), Rev: t.Rev, Mine: offered(t.Sides[me]), Theirs: offered(t.Sides[1-me])}
	if t.Confirmed[me] {
		m.Confirmed |= wire.TradeMine
	}
	if t.Confirmed[1-me] {
		m.Confirmed |= wire.TradeTheirs
	}
	switch t.End {
	case items.TradeOpen:
		m.Status = wire.TradeOpen
	case items.TradeDone:
		m.Status = wire.TradeDone
	default:
		m.Status, m.Reason = wire.TradeVoid, tradeReasons[t.End]
	}
	b.peer.send(m)
}

// offered is a trade's side as the wire carries it.
func offered(side []items.Offer) []wire.Offered {
	out := make([]wire.Offered, len(side))
	for i, o := range side {
		out[i] = wire.Offered{Slot: o.Slot, Stack: wire.Stack{ID: uint64(o.Stack.ID), Kind: o.Stack.Kind, Count: o.Stack.Count}}
	}
	return out
}
