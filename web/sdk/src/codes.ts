/**
 * The one registry of codes the protocol carries in `error.code`,
 * `rehello.code`, `intent_result.code` and every `reason`
 * (docs/protocol.md, "Codes"). Numbers are stable and never reused.
 *
 * @module
 */

/** The codes, by name. */
export const Code = {
  OK: 0,
  NOT_HELLO: 1,
  REHELLO: 2,
  BAD_GRANT: 3,
  GRANT_EXPIRED: 4,
  SUPERSEDED: 5,
  TOO_FAST: 6,
  ENTITY_GONE: 7,
  PORTAL_IN_PROGRESS: 8,
  TAKEN_OVER: 9,
  AREA_CLOSING: 10,
  MALFORMED: 11,
  TOO_LARGE: 12,
  RATE_LIMITED: 13,
  VERSION_UNSUPPORTED: 14,
  BLOCKED: 15,
  OUT_OF_BOUNDS: 16,
  NO_PATH: 17,
  TIMEOUT: 18,
  NOT_MEMBER: 19,
  REALM_CLOSED: 20,
  REALM_FULL: 21,
  INTERNAL: 22,
  UNKNOWN_TYPE: 23,
  BAD_TOKEN: 24,
  NOT_ALLOWED: 25,
  AREA_FULL: 26,
  STALE_SEQ: 27,
  NOTHING_THERE: 28,
  UNAVAILABLE: 29,
  INVENTORY_FULL: 30,
  NOT_BUILDER: 31,
  BUDGET: 32,
  COOLDOWN: 33,
  ITEM_CAP: 34,
  OCCUPIED: 35,
  NOT_EMPTY: 36,
  SPECTATOR: 37,
  OFF_PLOT: 38,
  NO_RECIPE: 39,
  KNOWN: 40,
  TRADING: 41,
  NOT_TRADING: 42,
  BUSY: 43,
  STALE: 44,
  TRADE_CANCELLED: 45,
  TRADE_FAR: 46,
  TRADE_LEFT: 47,
  TRADE_PORTAL: 48,
  TRADE_TAKEN_OVER: 49,
  TRADE_CHANGED: 50,
  WORKING: 51,
  NOT_OWNER: 52,
  NOT_FOR_SALE: 53,
  CANT_PAY: 54,
} as const;

/** A code's name. */
export type CodeName = keyof typeof Code;

const names: readonly CodeName[] = Object.keys(Code) as CodeName[];

const meanings: Readonly<Record<CodeName, string>> = {
  OK: "success",
  NOT_HELLO: "a message other than hello or resume arrived before a valid hello",
  REHELLO: "the binding was lost; hello again",
  BAD_GRANT: "the join grant is unknown, already used, or not for this Area",
  GRANT_EXPIRED: "the join grant is past its time to live",
  SUPERSEDED: "a newer intent replaced it before it was applied",
  TOO_FAST: "faster than the movement budget allows",
  ENTITY_GONE: "the player's body no longer exists",
  PORTAL_IN_PROGRESS: "a portal crossing is in progress",
  TAKEN_OVER: "another login took this session over",
  AREA_CLOSING: "the Area is closing",
  MALFORMED: "the message could not be decoded",
  TOO_LARGE: "the message is too large",
  RATE_LIMITED: "too many messages",
  VERSION_UNSUPPORTED: "client and server share no protocol version",
  BLOCKED: "a wall or a body is in the way",
  OUT_OF_BOUNDS: "outside the Area",
  NO_PATH: "no path leads there",
  TIMEOUT: "it did not complete in time",
  NOT_MEMBER: "not a member of that Area",
  REALM_CLOSED: "the realm is closed",
  REALM_FULL: "the realm is full",
  INTERNAL: "an internal server error",
  UNKNOWN_TYPE: "the message type is unknown or not allowed",
  BAD_TOKEN: "the resume token is unknown or expired",
  NOT_ALLOWED: "the Area's rules forbid it",
  AREA_FULL: "the Area is full",
  STALE_SEQ: "the intent's seq is not after the last one accepted",
  NOTHING_THERE: "there is nothing there to act on",
  UNAVAILABLE: "the realm cannot do this right now; try again in a moment",
  INVENTORY_FULL: "there is no room for it",
  NOT_BUILDER: "you may not build or gather here",
  BUDGET: "you have changed enough for this minute",
  COOLDOWN: "this was gathered too recently",
  ITEM_CAP: "this Area holds as many things as it may",
  OCCUPIED: "something is in the way",
  NOT_EMPTY: "empty it first",
  SPECTATOR: "a spectator has no body: its intents are never applied",
  OFF_PLOT: "you may build here only on the plots the map marks",
  NO_RECIPE: "the station's contents match none of its recipes",
  KNOWN: "the character knows this recipe already",
  TRADING: "you are trading: what you carry is held until the trade ends",
  NOT_TRADING: "you have no open trade",
  BUSY: "the other player is trading with someone else",
  STALE: "it changed since you saw it: look again",
  TRADE_CANCELLED: "the trade was called off",
  TRADE_FAR: "the trade ended: a player walked out of reach",
  TRADE_LEFT: "the trade ended: a player left",
  TRADE_PORTAL: "the trade ended: a player stepped into a portal",
  TRADE_TAKEN_OVER: "the trade ended: another login took a player's session over",
  TRADE_CHANGED: "the trade ended: an offer changed after the other player had confirmed",
  WORKING: "the station is working: what it holds stays until it is done",
  NOT_OWNER: "only the stall's owner may do this",
  NOT_FOR_SALE: "that is not for sale",
  CANT_PAY: "you do not carry the price",
};

/**
 * codeName returns the name of code n. An unknown number is treated like
 * INTERNAL, as the protocol asks, and named `INTERNAL(n)` so logs keep
 * the number.
 */
export function codeName(n: number): string {
  const name = names[n];
  return name !== undefined && Code[name] === n ? name : `INTERNAL(${n})`;
}

/** codeMeaning returns a sentence for people about code n. */
export function codeMeaning(n: number): string {
  const name = names[n];
  return name !== undefined && Code[name] === n ? meanings[name] : meanings.INTERNAL;
}
