// Package items is an Area's item rule: what players carry, place, take
// back, gather and keep in containers, each move one step of the Area's
// tick and whole or not at all (docs/items.md).
//
// The System installs itself as the Area's item rule (ecs.Area.OnItem):
// the movement system hands it a body's item intents in their turn.
// Placed items stand in the Area's static map ([statics.Map.Place]), so
// movement, path finding, flow fields, sensing and line of sight see them
// in the tick they land, and clients see them through the cells' static
// versions. The action system gathers through it ([System.Gather]).
//
// A placed container whose kind names a station (a cauldron) crafts
// ([ecs.IntentCraft]): its contents, as a multiset, must be exactly one of
// the station's recipes' inputs, and in that step they are destroyed and
// the recipe's outputs minted in their place. The maker learns the recipe
// ([ecs.Inventory].Recipes, kept with the character's state); a blueprint
// teaches one when used ([ecs.IntentUse]). [System.Known] is what the host
// tells the character's own client, and no one else.
//
// A recipe may take time: the station then works, its contents held
// (OutcomeWorking), until the Area has ticked its seconds. A placed kind
// may live: a sapling becomes a tree after its seconds. Their clocks
// (live.go) count the Area's own ticks, so a frozen or unloaded Area
// stands still; the blob keeps the time each has left.
//
// Two players of the Area trade ([ecs.IntentTrade], [ecs.IntentOffer],
// [ecs.IntentConfirm], [ecs.IntentCancel]; trade.go): both confirm one
// revision of both offers and the items change hands in one step, or the
// trade is void and says why ([TradeEnd]); a trader's items are held
// while it lasts, and the host voids it when a player disconnects, is
// taken over or starts a crossing ([System.EndTrade]). A stall (stall.go)
// is a container its owner stocks and prices; others buy a slot's stack
// at its price ([ecs.IntentBuy]) in one step, the owner there or not.
//
// Who may build is the Area's rule ([BuildRule]): anyone, the builders a
// home's owner names, anyone on the plots the map marks (a village), or
// nobody. A rule set may also name the kinds a character carries in
// ([Config].Carry): [System.LoadCharacter] moves the rest to the
// character's stash and gives back what it lets in. A body whose portal
// crossing is being decided (ecs.Player.Settling) changes no items.
//
// Every stack has an id the Area mints ([ecs.ItemID]); the System keeps
// the Area's ledger (the items of each kind it made and unmade), saves
// its part of the Area's blob ([System.Save], [System.Load]) and a
// character's carried and stashed items as the character's state
// ([System.SaveCharacter], [System.LoadCharacter]). The realm's items are
// counted by the director (director/census), from the store and, live,
// from what the hosts' Areas hold.
package items
