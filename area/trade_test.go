package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/persist/blob"
)

// grantState registers a grant for account in area 1, on (x, y), whose
// character carries stacks (slot by slot), and returns its token.
func grantState(t *testing.T, d *director, account uint64, x, y int32, stacks ...blob.Stack) string {
	t.Helper()
	st, err := blob.EncodeCharacter(&blob.Character{Version: blob.CharacterVersion, Inventory: stacks})
	if err != nil {
		t.Fatal(err)
	}
	tok := "g-" + string(rune('a'+account%26))
	d.send(&control.Grant{Area: 1, Token: tok, JoinID: account, TTLMS: 60000, Name: tok,
		Character: control.Character{Account: account, X: x, Y: y, Placed: true, State: st}})
	if a := expect[*control.GrantAck](d, 5*time.Second); a.Error != "" {
		t.Fatalf("grant refused: %s", a.Error)
	}
	return tok
}

// kindCode returns the shipped item kind called name's code.
func kindCode(t *testing.T, name string) uint16 {
	t.Helper()
	k, ok := content.Default().Item(name)
	if !ok {
		t.Fatalf("no item %q", name)
	}
	return k.Code
}

// expectTrade returns the next trade message of cl.
func expectTrade(cl *client) *wire.Trade {
	cl.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if m, ok := cl.next(time.Until(deadline)).(*wire.Trade); ok {
			return m
		}
	}
}

// holds reports how many items of kind a character state's inventory holds.
func holds(t *testing.T, state []byte, kind uint16) int {
	t.Helper()
	ch, err := blob.DecodeCharacter(state)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, st := range ch.Inventory {
		if st.Kind == kind {
			n += int(st.Count)
		}
	}
	return n
}

// TestTradeOverTheWire: two players trade through the protocol: both are
// told each change from their own side, the swap comes as both
// inventories and a last trade{done}, and the first snapshot holding
// either character after the swap holds both after it: a crash cannot
// store one side of a trade. A dropped connection voids the next trade,
// and the other player is told why.
func TestTradeOverTheWire(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	if err := d.SpawnTemplate(1, 16, 16, "village", build.TemplateEmpty); err != nil {
		t.Fatal(err)
	}
	plank, stone := kindCode(t, "plank"), kindCode(t, "stone")
	ada, bo := dial(t, h), dial(t, h)
	ada.hello(grantState(t, d, 100, 5, 5, blob.Stack{ID: 9<<32 | 1, Kind: plank, Count: 10}), 100)
	bo.hello(grantState(t, d, 101, 6, 5, blob.Stack{ID: 9<<32 | 2, Kind: stone, Count: 5}), 101)
	expectMsg[*wire.Recipes](ada, 5*time.Second)
	expectMsg[*wire.Recipes](bo, 5*time.Second)

	ada.send(&wire.Intent{Seq: 1, Kind: wire.IntentTrade, Dir: wire.DirE})
	ta, tb := expectTrade(ada), expectTrade(bo)
	if ta.ID != tb.ID || ta.With != bo.entity || tb.With != ada.entity || ta.Status != wire.TradeOpen || ta.Rev != 0 {
		t.Fatalf("opened: ada is told %+v, bo %+v", ta, tb)
	}
	ada.send(&wire.Intent{Seq: 2, Kind: wire.IntentOffer, Item: wire.ItemSlots{From: 0, Count: 4}})
	expectTrade(ada)
	tb = expectTrade(bo)
	if len(tb.Theirs) != 1 || tb.Theirs[0].Stack.Kind != plank || tb.Theirs[0].Stack.Count != 4 || len(tb.Mine) != 0 || tb.Rev != 1 {
		t.Fatalf("bo is told %+v; want ada's 4 planks on her side, revision 1", tb)
	}
	bo.send(&wire.Intent{Seq: 1, Kind: wire.IntentOffer, Item: wire.ItemSlots{From: 0, Count: 5}})
	expectTrade(bo)
	expectTrade(ada)
	ada.send(&wire.Intent{Seq: 3, Kind: wire.IntentConfirm, Item: wire.ItemSlots{Count: 1}})
	if r := expectMsg[*wire.IntentResult](ada, 5*time.Second); r.Seq != 3 || r.Code != wire.CodeStale {
		t.Fatalf("confirming revision 1 of 2: %+v; want STALE", r)
	}
	ada.send(&wire.Intent{Seq: 4, Kind: wire.IntentConfirm, Item: wire.ItemSlots{Count: 2}})
	if tb = expectTrade(bo); tb.Confirmed != wire.TradeTheirs {
		t.Fatalf("bo is told %+v; want ada's confirmation", tb)
	}
	bo.send(&wire.Intent{Seq: 2, Kind: wire.IntentConfirm, Item: wire.ItemSlots{Count: 2}})
	for _, cl := range []*client{ada, bo} {
		inv := expectMsg[*wire.Inventory](cl, 5*time.Second)
		if tr := expectTrade(cl); tr.Status != wire.TradeDone {
			t.Fatalf("after both confirmed: %+v; want done", tr)
		}
		n := 0
		for _, st := range inv.Slots {
			if st.Kind == stone || st.Kind == plank {
				n += int(st.Count)
			}
		}
		if n != 11 && n != 4 { // ada: 6 planks and 5 stone; bo: 4 planks
			t.Fatalf("inventory after the trade: %+v", inv.Slots[:3])
		}
	}
	// The store's view: the first snapshot that shows either side moved
	// shows both.
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		var a, b []byte
		for _, c := range s.Characters {
			switch c.Account {
			case 100:
				a = c.State
			case 101:
				b = c.State
			}
		}
		if a == nil || b == nil {
			t.Fatalf("a snapshot of the Area lacks a trader: %d characters", len(s.Characters))
		}
		adaMoved, boMoved := holds(t, a, stone) == 5, holds(t, b, plank) == 4
		if adaMoved != boMoved {
			t.Fatalf("snapshot %d holds one side of the trade: ada %v, bo %v", s.Seq, adaMoved, boMoved)
		}
		if adaMoved && holds(t, a, plank) == 6 && holds(t, b, stone) == 0 {
			break
		}
	}
	// A second trade, void when bo's connection drops.
	ada.send(&wire.Intent{Seq: 5, Kind: wire.IntentTrade, Dir: wire.DirE})
	expectTrade(ada)
	expectTrade(bo)
	bo.c.Close(1000, "")
	if tr := expectTrade(ada); tr.Status != wire.TradeVoid || tr.Reason != wire.CodeTradeLeft {
		t.Fatalf("after bo dropped: %+v; want void, TRADE_LEFT", tr)
	}
}

// TestStallSellsWhileItsOwnerIsAway: a stall's owner stocks and prices
// it and leaves; another player is shown the stall's prices, buys, and
// the store holds the stack with the buyer and the price in the stall.
func TestStallSellsWhileItsOwnerIsAway(t *testing.T) {
	h, d := testHost(t, func(c *Config) { c.PersistEvery = 100 * time.Millisecond })
	if err := d.SpawnTemplate(1, 16, 16, "village", build.TemplateEmpty); err != nil {
		t.Fatal(err)
	}
	plank, stone, stall := kindCode(t, "plank"), kindCode(t, "stone"), kindCode(t, "stall")
	owner := dial(t, h)
	owner.hello(grantState(t, d, 100, 5, 5, blob.Stack{ID: 9<<32 | 1, Kind: stall, Count: 1}, blob.Stack{ID: 9<<32 | 2, Kind: plank, Count: 8}), 100)
	owner.send(&wire.Intent{Seq: 1, Kind: wire.IntentPlace, Dir: wire.DirE})
	owner.send(&wire.Intent{Seq: 2, Kind: wire.IntentMoveItem, Dir: wire.DirE, Item: wire.ItemSlots{From: 1, To: wire.ContainerSlot}})
	owner.send(&wire.Intent{Seq: 3, Kind: wire.IntentPrice, Dir: wire.DirE, Target: wire.Cell{X: int32(stone), Y: 3}, Item: wire.ItemSlots{From: wire.ContainerSlot}})
	for { // a change of a container is shown to the players beside it: here its owner
		c := expectMsg[*wire.Container](owner, 5*time.Second)
		if len(c.Prices) == 4 && c.Prices[0] == (wire.Amount{Kind: stone, Count: 3}) && c.Flags&wire.ContainerOwned != 0 {
			break
		}
	}
	owner.send(&wire.Leave{})
	expectMsg[*wire.Left](owner, 5*time.Second)

	buyer := dial(t, h)
	buyer.hello(grantState(t, d, 101, 7, 5, blob.Stack{ID: 9<<32 | 3, Kind: stone, Count: 5}), 101)
	buyer.send(&wire.Intent{Seq: 1, Kind: wire.IntentAction, Dir: wire.DirW})
	c := expectMsg[*wire.Container](buyer, 5*time.Second)
	if c.Flags&wire.ContainerOwned != 0 || c.Prices[0] != (wire.Amount{Kind: stone, Count: 3}) || c.Slots[0].Count != 8 {
		t.Fatalf("the buyer is shown %+v; want 8 planks for 3 stone, not its own", c)
	}
	buyer.send(&wire.Intent{Seq: 2, Kind: wire.IntentBuy, Dir: wire.DirW, Target: wire.Cell{X: int32(stone), Y: 3},
		Item: wire.ItemSlots{From: wire.ContainerSlot, Count: 8}})
	for {
		s := expect[*control.Snapshot](d, 5*time.Second)
		var mine []byte
		for _, ch := range s.Characters {
			if ch.Account == 101 {
				mine = ch.State
			}
		}
		if mine == nil || holds(t, mine, plank) != 8 {
			continue
		}
		if holds(t, mine, stone) != 2 {
			t.Fatalf("the buyer holds %d stone after paying 3 of 5", holds(t, mine, stone))
		}
		b, err := blob.Decode(s.Blob, 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Placed) != 1 || b.Placed[0].Owner != 100 || b.Placed[0].Contents[0].Kind != stone || b.Placed[0].Contents[0].Count != 3 {
			t.Fatalf("the snapshot that holds the purchase holds the stall %+v; want the owner's, 3 stone in its till", b.Placed)
		}
		return
	}
}
