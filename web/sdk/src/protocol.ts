/**
 * The messages of ley's client protocol, version 7 (docs/protocol.md), as
 * TypeScript types: one interface per message type, discriminated by
 * `type`, with the fields in the order the wire carries them.
 *
 * Numbers are JavaScript numbers, except the 64-bit join ids, which are
 * `bigint` (they exceed 2^53). Ticks are uint64 on the wire but numbers
 * here: at 20 ticks a second, 2^53 ticks are 14 million years.
 *
 * @module
 */

import { MalformedError } from "./strict.js";

/** The protocol version this SDK speaks (version 7 added the short snapshot). */
export const PROTOCOL_VERSION = 7;

/** Message type numbers (the `t` of the envelope `[v, t, body]`). */
export const MsgType = {
  hello: 1,
  resume: 2,
  intent: 3,
  leave: 4,
  watch: 5,
  helloAck: 8,
  error: 9,
  rehello: 10,
  intentResult: 11,
  snapshot: 12,
  static: 13,
  presence: 14,
  areaClosing: 15,
  takenOver: 16,
  portalBlocked: 17,
  portalTransferRejected: 18,
  portalMoved: 19,
  areaInfo: 20,
  left: 21,
  inventory: 22,
  container: 23,
  flow: 24,
  recipes: 25,
  trade: 26,
} as const;

/** A message type number. */
export type MsgTypeNumber = (typeof MsgType)[keyof typeof MsgType];

/**
 * Grid directions, clockwise from north. North is -y: squares are numbered
 * from the top left, x to the east, y to the south.
 */
export const Dir = { N: 0, NE: 1, E: 2, SE: 3, S: 4, SW: 5, W: 6, NW: 7 } as const;

/** A direction, 0 (north) to 7 (north-west). */
export type Dir = (typeof Dir)[keyof typeof Dir];

/** The (dx, dy) of each direction, indexed by {@link Dir}. */
export const DIR_DELTA: readonly (readonly [number, number])[] = [
  [0, -1],
  [1, -1],
  [1, 0],
  [1, 1],
  [0, 1],
  [-1, 1],
  [-1, 0],
  [-1, -1],
];

/** Reports whether d is a diagonal direction. */
export function isDiagonal(d: Dir): boolean {
  return (d & 1) === 1;
}

/** The direction of one step by (dx, dy) (each -1, 0 or 1), or undefined for (0, 0). */
export function dirOf(dx: number, dy: number): Dir | undefined {
  const i = DIR_DELTA.findIndex(([x, y]) => x === Math.sign(dx) && y === Math.sign(dy));
  return i < 0 ? undefined : (i as Dir);
}

/**
 * What an intent asks for. Craft crafts at the station next to the body
 * in the intent's dir; Use uses the item of inventory slot `item.from`
 * (a blueprint: it teaches its recipe). Trade opens a trade with the
 * player next to the body in dir; Offer puts `item.count` items of
 * inventory slot `item.from` on the player's side of it (0: takes the
 * slot off); Confirm confirms it as it stands at revision `item.count`;
 * Cancel calls it off. Price prices slot `item.from` (CONTAINER_SLOT + k)
 * of the player's stall next to the body in dir: `target.y` items of the
 * kind `target.x`; Buy buys that slot's stack, which the buyer saw
 * holding `item.count` items, for the price it saw (`target.y` of kind
 * `target.x`). See docs/protocol.md, "Trading" and "Stalls".
 */
export const IntentKind = {
  Step: 0,
  MoveTo: 1,
  Stop: 2,
  Action: 3,
  Place: 4,
  Take: 5,
  MoveItem: 6,
  Craft: 7,
  Use: 8,
  Trade: 9,
  Offer: 10,
  Confirm: 11,
  Cancel: 12,
  Price: 13,
  Buy: 14,
} as const;

/** The first slot number of an item intent that names a slot of the container the body faces. */
export const CONTAINER_SLOT = 64;

/** The slots of a character's inventory. */
export const INVENTORY_SLOTS = 20;

/** The most stacks a character's stash holds ({@link Inventory}.stash). */
export const MAX_STASH = 40;

/** An item intent's slots and count: `[from, to, count]`, all 0 for the other kinds. */
export interface ItemSlots {
  from: number;
  to: number;
  count: number;
}

/** The item slots of an intent that moves no item. */
export const NO_ITEM: Readonly<ItemSlots> = { from: 0, to: 0, count: 0 };

/** An intent kind. */
export type IntentKind = (typeof IntentKind)[keyof typeof IntentKind];

/**
 * What an entity of a snapshot is. Static objects (doors, trees, signs...)
 * are not entities: they come with the map of their cell ({@link Static}).
 */
export const EntityKind = { Player: 0, Creature: 1 } as const;

/** Entity flags of snapshot records. */
export const EntityFlag = {
  /** Crossing a portal: its intents are refused PORTAL_IN_PROGRESS meanwhile. */
  Transit: 1 << 0,
  /** A player whose connection dropped, within the resume grace. */
  Away: 1 << 1,
} as const;

/** The rule bits of `area_info.rules`. */
export const Rule = {
  /** Diagonal steps are allowed. */
  Diagonal: 1 << 0,
  /** Players may harm players. */
  PvP: 1 << 1,
  /** Creatures hunt players. */
  CreaturesHunt: 1 << 2,
  /** Line of sight limits what a player is sent. */
  LineOfSight: 1 << 3,
  /** This player may build here (place, take back, gather, use containers). */
  MayBuild: 1 << 4,
} as const;

/**
 * Floor kinds of a static's runs (docs/protocol.md, "static: the map"):
 * the content's floor kinds (content/doc.go), and walls. Codes are stable;
 * a new kind gets a new code.
 */
export const Floor = { Void: 0, Grass: 1, Dirt: 2, Stone: 3, Sand: 4, Wood: 5, Water: 6, Wall: 7 } as const;

/** The name of each floor kind, by code. */
export const FLOOR_NAMES: readonly string[] = ["void", "grass", "dirt", "stone", "sand", "wood", "water", "wall"];

/** Static object kinds: the content's object classes (content/doc.go). Codes are stable. */
export const ObjectKind = { Door: 1, Tree: 2, Sign: 3, Rock: 4, Chest: 5, Portal: 6, Item: 7 } as const;

/** The name of each object kind, by code (0 is none, never sent). */
export const OBJECT_NAMES: readonly string[] = ["none", "door", "tree", "sign", "rock", "chest", "portal", "item"];

/** A door's states (`StaticObject.state`). */
export const DoorState = { Closed: 0, Open: 1 } as const;

/** Snapshot flag bit 0: drop the whole view before applying the records. */
export const SNAPSHOT_RESET = 1;

/** A square of the grid. */
export interface Cell {
  x: number;
  y: number;
}

/** `hello{grant, join_id, versions}` (t = 1): start a session. */
export interface Hello {
  readonly type: "hello";
  grant: string;
  joinId: bigint;
  versions: number[];
}

/** `resume{token, join_id}` (t = 2): continue a session on a new connection. */
export interface Resume {
  readonly type: "resume";
  token: string;
  joinId: bigint;
}

/** `intent{seq, kind, dir, target}` (t = 3): a step, move-to, stop or action. */
export interface Intent {
  readonly type: "intent";
  seq: number;
  kind: number;
  dir: number;
  target: Cell;
  item: ItemSlots;
}

/** `hello_ack` (t = 8): the session is bound to `entity`. */
export interface HelloAck {
  readonly type: "hello_ack";
  joinId: bigint;
  entity: number;
  tick: number;
  area: number;
  resumeToken: string;
  version: number;
}

/** `error{code, ref_seq, join_id, detail}` (t = 9). */
export interface ErrorMessage {
  readonly type: "error";
  code: number;
  refSeq: number;
  joinId: bigint;
  detail: string;
}

/** `rehello{code, detail}` (t = 10): the session ended; the close follows. */
export interface Rehello {
  readonly type: "rehello";
  code: number;
  detail: string;
}

/** `intent_result{seq, code}` (t = 11): one intent was refused. */
export interface IntentResult {
  readonly type: "intent_result";
  seq: number;
  code: number;
}

/** `snapshot{tick, ack_seq, flags, records}` (t = 12), latest-wins. */
export interface Snapshot {
  readonly type: "snapshot";
  tick: number;
  ackSeq: number;
  flags: number;
  /** The records, a byte layout of their own (see records.ts). */
  records: Uint8Array;
}

/**
 * A short snapshot (docs/protocol.md, "Short snapshots"), as it comes:
 * not an envelope but one CBOR byte string holding the low bytes of the
 * tick and of ack_seq, then the records. It is
 * `snapshot{tick, ack_seq, 0, records}`, where tick and ack_seq are the
 * closest at or above those of the snapshot the connection received
 * before it (of either form) with these low bytes:
 * {@link expandShortSnapshot} makes that snapshot of it. A short snapshot
 * with no snapshot before it on its connection is malformed.
 */
export interface ShortSnapshot {
  readonly type: "short_snapshot";
  /** The tick's low byte. */
  tick8: number;
  /** ack_seq's low byte. */
  ack8: number;
  /** The records, as a snapshot's (see records.ts). */
  records: Uint8Array;
}

/** The tick and ack_seq of the snapshot a short snapshot counts from. */
export interface SnapshotBase {
  tick: number;
  ackSeq: number;
}

/**
 * expandShortSnapshot returns the snapshot s stands for, given last, the
 * snapshot its connection received before it (of either form):
 * `tick = last.tick + ((tick8 - last.tick) mod 256)`, and ack_seq alike
 * on 32 bits (seqs wrap: after 4294967295 comes 0), flags 0, s's records
 * (not copied). It throws a MalformedError for a tick past 2^53 - 1.
 */
export function expandShortSnapshot(last: SnapshotBase, s: ShortSnapshot): Snapshot {
  const tick = last.tick + ((s.tick8 - (last.tick % 256) + 256) % 256);
  if (!Number.isSafeInteger(tick)) throw new MalformedError(`short snapshot: tick ${tick} past 2^53 - 1`);
  const ackSeq = (last.ackSeq + ((s.ack8 - (last.ackSeq & 0xff) + 256) & 0xff)) >>> 0;
  return { type: "snapshot", tick, ackSeq, flags: 0, records: s.records };
}

/** A static object of a cell: `[id, kind, x, y, state, text, item]`, one per slot of a square at most. */
export interface StaticObject {
  /** Stable for the Area while it stands (a map object's id in its Tiled map; a placed item's is 2^30 or more). */
  id: number;
  /** An {@link ObjectKind}. */
  kind: number;
  x: number;
  y: number;
  /** A door's {@link DoorState}; 0 for the others. */
  state: number;
  /** A sign's words (at most 200 bytes); "" for the others. */
  text: string;
  /** A placed item's kind (an {@link ItemKind} code); 0 for the map's own objects. */
  item: number;
}

/** `static{cell, version, floor, objects}` (t = 13): the map of one cell. */
export interface Static {
  readonly type: "static";
  cell: number;
  version: number;
  /** Runs over the cell's squares, row by row: kind, count, kind, count... */
  floor: number[];
  objects: StaticObject[];
}

/** One bound player of a presence list. */
export interface PresencePlayer {
  entity: number;
  name: string;
}

/** `presence{area, players}` (t = 14): replaces the list of bound players. */
export interface Presence {
  readonly type: "presence";
  area: number;
  players: PresencePlayer[];
}

/** `area_closing{reason, grace_ms}` (t = 15). */
export interface AreaClosing {
  readonly type: "area_closing";
  reason: number;
  graceMs: number;
}

/** `leave{}` (t = 4): the player quits; the body leaves the Area at once. */
export interface Leave {
  readonly type: "leave";
}

/**
 * `watch{entity}` (t = 5), spectators only: entity 0 watches the whole
 * Area, a player's entity that player's point of view (its interest, its
 * line of sight). See docs/protocol.md, "Spectators".
 */
export interface Watch {
  readonly type: "watch";
  entity: number;
}

/** A {@link Flow} square's value for the target's own square. */
export const FLOW_TARGET = 8;
/** A {@link Flow} square's value for a square with no way to the target within the reach. */
export const FLOW_UNREACHED = 255;
/** The most squares a side of a {@link Flow}'s window. */
export const MAX_FLOW_SIDE = 256;

/**
 * `flow{creature, target, x, y, w, h, dirs}` (t = 22), to a spectator
 * watching a creature: the flow field it follows, that of the body it
 * hunts (`target`; 0: nobody, and the window is empty), over the window
 * of w x h squares from (x, y). `dirs` holds a byte a square, row by row:
 * a {@link Dir} (the first step towards the target), {@link FLOW_TARGET}
 * or {@link FLOW_UNREACHED}.
 */
export interface Flow {
  readonly type: "flow";
  creature: number;
  target: number;
  x: number;
  y: number;
  w: number;
  h: number;
  dirs: Uint8Array;
}

/** `left{}` (t = 21): answers `leave`; the close follows. */
export interface Left {
  readonly type: "left";
}

/** `taken_over{}` (t = 16): another login took the session over. */
export interface TakenOver {
  readonly type: "taken_over";
}

/** `portal_blocked{reason}` (t = 17). */
export interface PortalBlocked {
  readonly type: "portal_blocked";
  reason: number;
}

/** `portal_transfer_rejected{reason}` (t = 18). */
export interface PortalTransferRejected {
  readonly type: "portal_transfer_rejected";
  reason: number;
}

/** `portal_moved{area, ws_url, grant, join_id}` (t = 19): connect there. */
export interface PortalMoved {
  readonly type: "portal_moved";
  area: number;
  wsUrl: string;
  grant: string;
  joinId: bigint;
}

/** One creature kind of an Area: its name and full health. */
export interface CreatureKind {
  name: string;
  hp: number;
}

/**
 * What an item of a kind does: {@link ItemKind}.flags bits. Blocks,
 * BlocksSight and Door are what it does placed; Teaches, what using it
 * does (a blueprint: it teaches a recipe: `Session.use`); Stall, placed,
 * it is a stall: its owner sells what it holds (`Session.price`,
 * `Session.buy`).
 */
export const ItemFlag = { Blocks: 1, BlocksSight: 2, Door: 4, Teaches: 8, Stall: 16 } as const;

/** Where an item kind sits when placed: {@link ItemKind}.slot. */
export const ItemSlot = { None: 0, Floor: 1, Occupant: 2 } as const;

/** One kind of item: `[code, name, label, stack, slot, flags, look, container, station, becomes, grows]`. */
export interface ItemKind {
  code: number;
  name: string;
  label: string;
  /** The most one slot holds. */
  stack: number;
  /** An {@link ItemSlot}: 0 if it cannot be placed. */
  slot: number;
  /** {@link ItemFlag} bits: what it does placed. */
  flags: number;
  /** What a client draws for it placed. */
  look: number;
  /** The slots it holds placed (a chest); 0 for no container. */
  container: number;
  /**
   * The crafting station it is placed (a cauldron: its container's
   * contents are crafted with a craft intent); "" when it is none.
   */
  station: string;
  /**
   * A kind that lives: placed, it becomes the kind of this code after
   * {@link ItemKind.grows} seconds of its Area's live time (a sapling
   * becomes a tree); 0 for a kind that does not.
   */
  becomes: number;
  /** The seconds of its Area's live time a placed one takes to become {@link ItemKind.becomes}; 0 for a kind that does not live. */
  grows: number;
}

/** One slot of an inventory or a container: `[id, kind, count]`, all 0 when empty. */
export interface Stack {
  /** The stack's id, unique in the realm (64 bits). */
  id: bigint;
  kind: number;
  count: number;
}

/** `inventory{slots, stash}` (t = 22): what the player's character carries, whole. */
export interface Inventory {
  readonly type: "inventory";
  slots: Stack[];
  /**
   * What waits for the character outside this Area (at most
   * {@link MAX_STASH} stacks): what its rules did not let it carry in (an
   * arena), given back when it binds in an Area that allows it.
   */
  stash: Stack[];
}

/** `[kind, count]`: count items of an {@link ItemKind} code (a recipe's line, a stall's price). */
export interface Amount {
  kind: number;
  count: number;
}

/** {@link Container}.flags bits. */
export const ContainerFlag = {
  /** The player owns it: a stall's owner (who stocks it, prices it and takes the till). */
  Owned: 1,
} as const;

/**
 * `container{x, y, slots, prices, flags, ready}` (t = 23): the contents of
 * the container placed on (x, y), sent to a player who opened it and to
 * every player next to it whenever they change. A stall's has `prices`,
 * one a slot (`{kind: 0, count: 0}`: not for sale), and
 * {@link ContainerFlag}.Owned for its owner; any other container's prices
 * are empty. A working station's `ready` is the Area tick its recipe is
 * done at (the snapshots' tick counts the same ticks); 0 when idle.
 */
export interface Container {
  readonly type: "container";
  x: number;
  y: number;
  slots: Stack[];
  /** A stall's asks, one a slot (at most as many as slots); empty for any other container. */
  prices: Amount[];
  /** {@link ContainerFlag} bits. */
  flags: number;
  /** The Area tick a working station is done at; 0 when idle. */
  ready: number;
}

/** The most stacks one side of a {@link Trade} holds. */
export const MAX_OFFERED = 8;

/** One stack of a trade's side: `[slot, stack]`, the offering player's inventory slot and the stack on offer (its count: how many of it). */
export interface Offered {
  /** The offering player's inventory slot. */
  slot: number;
  /** The stack's id and kind, and the count on offer. */
  stack: Stack;
}

/** {@link Trade}.status: open, done (the items changed hands), or void (nobody's items moved; `reason` says why). */
export const TradeStatus = { Open: 0, Done: 1, Void: 2 } as const;

/** {@link Trade}.confirmed bits: the player's own confirmation of the current revision, and the other player's. */
export const TradeConfirmed = { Mine: 1, Theirs: 2 } as const;

/**
 * `trade{id, with, rev, mine, theirs, confirmed, status, reason}` (t =
 * 26): a trade the player is in, whole, from its own side: sent whenever
 * it changed, and once more when it ended (status done or void). `with`
 * is the other player's entity; `rev` counts the trade's changes (a
 * confirm names the revision it confirms); `mine` and `theirs` are the
 * two offers, at most {@link MAX_OFFERED} stacks each. See
 * docs/protocol.md, "Trading".
 */
export interface Trade {
  readonly type: "trade";
  id: number;
  with: number;
  rev: number;
  mine: Offered[];
  theirs: Offered[];
  /** {@link TradeConfirmed} bits. */
  confirmed: number;
  /** A {@link TradeStatus}. */
  status: number;
  /** Why a void trade ended (a code: TRADE_CANCELLED, TRADE_FAR, INVENTORY_FULL...); OK otherwise. */
  reason: number;
}

/** The most recipes a {@link Recipes} message lists. */
export const MAX_RECIPES = 1024;

/** The most lines a {@link Recipe}'s inputs hold, and its outputs. */
export const MAX_RECIPE_ITEMS = 8;

/** One line of a recipe's inputs or outputs: `[kind, count]`, count items of an {@link ItemKind} code. */
export type RecipeItem = Amount;

/**
 * A recipe the character knows: `[code, name, station, inputs, outputs,
 * seconds]`. A station's container holding exactly `inputs` (as a
 * multiset of kinds and counts) is crafted into `outputs`, at once or
 * after `seconds` of its Area's live time (the station works meanwhile:
 * {@link Container}.ready). Each lists at most {@link MAX_RECIPE_ITEMS}
 * lines, sorted by kind.
 */
export interface Recipe {
  /** Its stable code. */
  code: number;
  name: string;
  /** The station it is made at (an {@link ItemKind}.station). */
  station: string;
  inputs: RecipeItem[];
  outputs: RecipeItem[];
  /** The seconds of its Area's live time it takes; 0: at once. */
  seconds: number;
}

/**
 * `recipes{known}` (t = 25): every recipe the character knows (at most
 * {@link MAX_RECIPES}, sorted by code), whole: on every bind, and again
 * after a tick in which it learned one. Recipes it does not know are
 * never sent.
 */
export interface Recipes {
  readonly type: "recipes";
  known: Recipe[];
}

/** A rectangle of squares where players may build: `[x, y, w, h]`, w x h squares from (x, y). */
export interface Plot {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** `area_info` (t = 20): the Area's size, cells, pacing, rules and kinds of bodies. */
export interface AreaInfo {
  readonly type: "area_info";
  area: number;
  kind: string;
  w: number;
  h: number;
  cellSize: number;
  tickHz: number;
  snapshotHz: number;
  stepMs: number;
  queueLen: number;
  interestRadius: number;
  resumeGraceMs: number;
  /** {@link Rule} bits. */
  rules: number;
  /** A player's full health. */
  playerHp: number;
  /** The Area's creature kinds: an entity's `look` k > 0 is `creatures[k - 1]`. */
  creatures: CreatureKind[];
  /** The realm's item kinds. */
  items: ItemKind[];
  /**
   * Where building is allowed when the Area's rules allow it only on its
   * map's plots (a village; elsewhere refused OFF_PLOT); empty where they
   * do not (a home, an arena), and {@link Rule}.MayBuild alone says.
   */
  plots: Plot[];
}

/** A message a client sends. */
export type ClientMessage = Hello | Resume | Intent | Leave | Watch;

/** A message a server sends. */
export type ServerMessage =
  | HelloAck
  | ErrorMessage
  | Rehello
  | IntentResult
  | Snapshot
  | ShortSnapshot
  | Static
  | Presence
  | AreaClosing
  | TakenOver
  | PortalBlocked
  | PortalTransferRejected
  | PortalMoved
  | AreaInfo
  | Left
  | Inventory
  | Container
  | Flow
  | Recipes
  | Trade;

/** Any message of the protocol. */
export type Message = ClientMessage | ServerMessage;

/** The protocol name of each message's `type`, by type number. */
export const TYPE_NAMES: Readonly<Record<MsgTypeNumber, Message["type"]>> = {
  1: "hello",
  2: "resume",
  3: "intent",
  4: "leave",
  5: "watch",
  8: "hello_ack",
  9: "error",
  10: "rehello",
  11: "intent_result",
  12: "snapshot",
  13: "static",
  14: "presence",
  15: "area_closing",
  16: "taken_over",
  17: "portal_blocked",
  18: "portal_transfer_rejected",
  19: "portal_moved",
  20: "area_info",
  21: "left",
  22: "inventory",
  23: "container",
  24: "flow",
  25: "recipes",
  26: "trade",
};

/** isServerMessage reports whether m is a message a server sends. */
export function isServerMessage(m: Message): m is ServerMessage {
  return m.type !== "hello" && m.type !== "resume" && m.type !== "intent" && m.type !== "leave" && m.type !== "watch";
}
