package wire

import "strconv"

// Code is a result or reason code carried by [Error], [Rehello],
// [IntentResult], [AreaClosing], [PortalBlocked] and
// [PortalTransferRejected]. It is the single registry of codes on the wire;
// it encodes as a CBOR unsigned integer.
//
// Numeric values are part of the protocol: they are never renumbered or
// reused. A retired code keeps its number and its name; a new code takes the
// next free number and is added to docs/protocol.md in the same change.
type Code uint16

// The code registry. Values are stable; see docs/protocol.md.
const (
	CodeOK                 Code = 0  // success; never sent in an Error
	CodeNotHello           Code = 1  // message before a valid hello
	CodeRehello            Code = 2  // binding lost; send hello again
	CodeBadGrant           Code = 3  // join grant unknown or not for this Area
	CodeGrantExpired       Code = 4  // join grant past its TTL
	CodeSuperseded         Code = 5  // intent replaced by a newer one
	CodeTooFast            Code = 6  // intent beyond the movement budget
	CodeEntityGone         Code = 7  // the bound entity no longer exists
	CodePortalInProgress   Code = 8  // a portal transfer is pending
	CodeTakenOver          Code = 9  // another login took this session over
	CodeAreaClosing        Code = 10 // the Area is shutting down
	CodeMalformed          Code = 11 // message could not be decoded
	CodeTooLarge           Code = 12 // message above the size limit
	CodeRateLimited        Code = 13 // too many messages
	CodeVersionUnsupported Code = 14 // no common protocol version
	CodeBlocked            Code = 15 // move into a wall or occupied cell
	CodeOutOfBounds        Code = 16 // target outside the grid
	CodeNoPath             Code = 17 // no path to the target cell
	CodeTimeout            Code = 18 // an operation did not finish in time
	CodeNotMember          Code = 19 // account is not a member of the Area
	CodeRealmClosed        Code = 20 // the realm door is closed
	CodeRealmFull          Code = 21 // the realm is at its player cap
	CodeInternal           Code = 22 // server fault
	CodeUnknownType        Code = 23 // message type not known or not allowed
	CodeBadToken           Code = 24 // resume token unknown or expired
	CodeNotAllowed         Code = 25 // the Area's rules forbid it
	CodeAreaFull           Code = 26 // the Area holds its maximum of players
	CodeStaleSeq           Code = 27 // intent seq not after the last accepted one
	CodeNothingThere       Code = 28 // an action on a square with nothing to act on
	CodeUnavailable        Code = 29 // the realm cannot do this now (its database is away); try again
	CodeInventoryFull      Code = 30 // no room in the inventory for what the action gives
	CodeNotBuilder         Code = 31 // the Area's rules do not let this player build or gather here
	CodeBudget             Code = 32 // the player's changes for this minute are spent
	CodeCooldown           Code = 33 // the source was gathered too recently
	CodeItemCap            Code = 34 // the Area holds as many placed items as its rules allow
	CodeOccupied           Code = 35 // the square's slot for the item holds something already
	CodeNotEmpty           Code = 36 // a container that holds items cannot be taken back
	CodeSpectator          Code = 37 // a spectator has no body: its intents are never applied
	CodeOffPlot            Code = 38 // building here is allowed only on the map's plots, and this square is on none
	CodeNoRecipe           Code = 39 // the station's contents match none of its recipes
	CodeKnown              Code = 40 // the character knows this recipe already
	CodeTrading            Code = 41 // the player is trading: its items are held until the trade ends
	CodeNotTrading         Code = 42 // the player has no open trade
	CodeBusy               Code = 43 // the other player is trading with someone else
	CodeStale              Code = 44 // the trade or the stall changed since the player saw it
	CodeTradeCancelled     Code = 45 // a trade ended: a player called it off
	CodeTradeFar           Code = 46 // a trade ended: a player walked out of reach
	CodeTradeLeft          Code = 47 // a trade ended: a player disconnected or left the Area
	CodeTradePortal        Code = 48 // a trade ended: a player crossed a portal
	CodeTradeTakenOver     Code = 49 // a trade ended: another login took a player's session over
	CodeTradeChanged       Code = 50 // a trade ended: an offer changed after the other player confirmed
	CodeWorking            Code = 51 // the station is working: its contents are held until it is done
	CodeNotOwner           Code = 52 // only the stall's owner may do this
	CodeNotForSale         Code = 53 // the stall's slot has no price
	CodeCantPay            Code = 54 // the buyer does not carry the price

	numCodes = 55
)

var codeNames = [numCodes]string{
	"OK", "NOT_HELLO", "REHELLO", "BAD_GRANT", "GRANT_EXPIRED", "SUPERSEDED",
	"TOO_FAST", "ENTITY_GONE", "PORTAL_IN_PROGRESS", "TAKEN_OVER",
	"AREA_CLOSING", "MALFORMED", "TOO_LARGE", "RATE_LIMITED",
	"VERSION_UNSUPPORTED", "BLOCKED", "OUT_OF_BOUNDS", "NO_PATH", "TIMEOUT",
	"NOT_MEMBER", "REALM_CLOSED", "REALM_FULL", "INTERNAL", "UNKNOWN_TYPE",
	"BAD_TOKEN", "NOT_ALLOWED", "AREA_FULL", "STALE_SEQ", "NOTHING_THERE",
	"UNAVAILABLE", "INVENTORY_FULL", "NOT_BUILDER", "BUDGET", "COOLDOWN",
	"ITEM_CAP", "OCCUPIED", "NOT_EMPTY", "SPECTATOR", "OFF_PLOT",
	"NO_RECIPE", "KNOWN", "TRADING", "NOT_TRADING", "BUSY", "STALE",
	"TRADE_CANCELLED", "TRADE_FAR", "TRADE_LEFT", "TRADE_PORTAL",
	"TRADE_TAKEN_OVER", "TRADE_CHANGED", "WORKING", "NOT_OWNER",
	"NOT_FOR_SALE", "CANT_PAY",
}

var codeMeanings = [numCodes]string{
	"success",
	"a message other than hello or resume arrived before a valid hello",
	"the peer's binding was lost; send hello (or resume) again",
	"the join grant is unknown, already used, or not for this Area",
	"the join grant is past its time to live",
	"the intent was replaced by a newer intent before it was applied",
	"the intent exceeds the movement budget for this tick",
	"the peer's entity no longer exists",
	"a portal transfer is in progress; intents are not accepted",
	"another login of the same account took this session over",
	"the Area is shutting down",
	"the message could not be decoded",
	"the message exceeds the size limit",
	"the peer sends messages faster than allowed",
	"client and server share no protocol version",
	"the move targets a wall or an occupied cell",
	"the target cell is outside the grid",
	"no path leads to the target cell",
	"the operation did not complete in time",
	"the account is not a member of the Area",
	"the realm is closed to new joins",
	"the realm is at its player cap",
	"an internal server error occurred",
	"the message type is unknown or not allowed in this direction",
	"the resume token is unknown or expired",
	"the Area's rules forbid this (a diagonal step where none are allowed)",
	"the Area already holds its maximum of players",
	"the intent's seq is not after the last one this session accepted (serial order); it was not applied",
	"the action's square holds nothing to act on (no door, no creature, no player that may be hurt)",
	"the realm cannot do this right now (its database is unavailable); nothing changed: try again in a moment",
	"the inventory (or container) has no room for it; nothing changed",
	"the Area's rules do not let this player build or gather here (a home: its owner and the builders it named; an arena: nobody)",
	"the player's changes for this minute (building, gathering) are spent; nothing changed",
	"the tree or rock was gathered too recently; nothing changed",
	"the Area holds as many placed items as its rules allow; nothing changed",
	"the square's slot for the item holds something already (an item, a map object, a body) or is no ground to build on; nothing changed",
	"a container that still holds items cannot be taken back; nothing changed",
	"the peer is a spectator: it has no body, so an intent from it is never applied",
	"this Area allows building only on the plots its map marks, and the square is on none; nothing changed",
	"the station's contents, taken as a whole, match none of its recipes; nothing changed",
	"the character knows this recipe already; nothing changed (the blueprint is kept)",
	"the player has an open trade: its inventory is held until the trade is done or void; nothing changed",
	"the player has no open trade to offer into, confirm or cancel",
	"the other player is trading with someone else already",
	"the trade or the stall is not what the player saw (a newer revision, price or stack); nothing changed",
	"the trade is void: one of its players called it off; nobody's items moved",
	"the trade is void: one of its players walked out of reach; nobody's items moved",
	"the trade is void: one of its players disconnected or left the Area; nobody's items moved",
	"the trade is void: one of its players stepped into a portal; nobody's items moved",
	"the trade is void: another login took a player's session over; nobody's items moved",
	"the trade is void: an offer changed after the other player had confirmed it; nobody's items moved",
	"the station is working on a recipe: its contents are held until it is done; nothing changed",
	"only the stall's owner may stock it, price it or take it back; nothing changed",
	"that slot of the stall has no price: it is not for sale",
	"the buyer does not carry the price; nothing changed hands",
}

// String returns the code's registry name, such as "NOT_HELLO", or
// "CODE(n)" for a number not in the registry. It does not allocate for known
// codes.
func (c Code) String() string {
	if int(c) < numCodes {
		return codeNames[c]
	}
	return "CODE(" + strconv.Itoa(int(c)) + ")"
}

// Meaning returns a one-line description of the code, or "unknown code" for
// a number not in the registry.
func (c Code) Meaning() string {
	if int(c) < numCodes {
		return codeMeanings[c]
	}
	return "unknown code"
}

// Known reports whether c is in this version's registry. A peer must treat
// an unknown code like [CodeInternal] and keep its number for logs.
func (c Code) Known() bool { return int(c) < numCodes }
