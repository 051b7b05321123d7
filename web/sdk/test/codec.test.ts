/**
 * The codec against the golden files of net/wire/testdata: each decodes to
 * the value docs/protocol.md shows and encodes back byte for byte; and
 * the decoding rules refuse what they must.
 */

import {
  type AreaInfo,
  CONTAINER_SLOT,
  Code,
  ContainerFlag,
  Dir,
  DoorState,
  EntityKind,
  Floor,
  IntentKind,
  ItemFlag,
  type ItemKind,
  type Message,
  type Stack,
  MalformedError,
  ObjectKind,
  TradeConfirmed,
  TradeStatus,
  codeMeaning,
  codeName,
  decodeMessage,
  encodeMessage,
  expandShortSnapshot,
  readRecords,
  type ShortSnapshot,
} from "../src/index.js";
import { eq, hex, ok, test, throws, unhex } from "./harness.js";

const EMPTY: Stack = { id: 0n, kind: 0, count: 0 };
const NO_PRICE = { kind: 0, count: 0 };

/** slots is n slots beginning with first (the rest empty). */
function slots(n: number, ...first: Stack[]): Stack[] {
  return Array.from({ length: n }, (_, i) => first[i] ?? EMPTY);
}

/** The value of each golden file, as docs/protocol.md's worked examples give it. */
const goldens: Record<string, Message> = {
  hello: { type: "hello", grant: "g-7f3a9c", joinId: 42n, versions: [7] },
  resume: { type: "resume", token: "r-51e0", joinId: 43n },
  intent: { type: "intent", seq: 7, kind: 6, dir: 2, target: { x: 0, y: 0 }, item: { from: 2, to: 69, count: 4 } },
  hello_ack: { type: "hello_ack", joinId: 42n, entity: 1001, tick: 86400, area: 5, resumeToken: "r-51e0", version: 7 },
  area_info: {
    type: "area_info",
    area: 5,
    kind: "village",
    w: 64,
    h: 48,
    cellSize: 8,
    tickHz: 20,
    snapshotHz: 10,
    stepMs: 200,
    queueLen: 8,
    interestRadius: 24,
    resumeGraceMs: 30000,
    rules: 1,
    playerHp: 100,
    creatures: [{ name: "deer", hp: 15 }],
    items: [
      { code: 6, name: "chest", label: "Chest", stack: 1, slot: 2, flags: 1, look: 6, container: 16, station: "", becomes: 0, grows: 0 },
      { code: 13, name: "wood", label: "Wood", stack: 99, slot: 0, flags: 0, look: 0, container: 0, station: "", becomes: 0, grows: 0 },
      { code: 17, name: "cauldron", label: "Cauldron", stack: 1, slot: 2, flags: 1, look: 17, container: 4, station: "cauldron", becomes: 0, grows: 0 },
      { code: 18, name: "blueprint_table", label: "Table blueprint", stack: 1, slot: 0, flags: 8, look: 0, container: 0, station: "", becomes: 0, grows: 0 },
      { code: 20, name: "sapling", label: "Sapling", stack: 10, slot: 2, flags: 1, look: 20, container: 0, station: "", becomes: 21, grows: 120 },
    ],
    plots: [{ x: 10, y: 4, w: 6, h: 5 }],
  },
  error: { type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: 42n, detail: "grant unknown" },
  rehello: { type: "rehello", code: Code.REHELLO, detail: "binding lost" },
  intent_result: { type: "intent_result", seq: 7, code: Code.BLOCKED },
  snapshot: { type: "snapshot", tick: 86402, ackSeq: 7, flags: 0, records: unhex("0209100c01011104060f001203") },
  snapshot_short: { type: "short_snapshot", tick8: 140, ack8: 8, records: unhex("0409") },
  static: {
    type: "static",
    cell: 9,
    version: 3,
    floor: [Floor.Grass, 12, Floor.Wall, 2, Floor.Stone, 50],
    objects: [
      { id: 7, kind: ObjectKind.Door, x: 8, y: 9, state: DoorState.Open, text: "", item: 0 },
      { id: 8, kind: ObjectKind.Sign, x: 10, y: 9, state: 0, text: "Inn", item: 0 },
      { id: 2 ** 30 + 4, kind: ObjectKind.Item, x: 11, y: 9, state: 0, text: "", item: 6 },
    ],
  },
  presence: { type: "presence", area: 5, players: [{ entity: 1001, name: "ada" }, { entity: 1002, name: "bo" }] },
  area_closing: { type: "area_closing", reason: Code.AREA_CLOSING, graceMs: 5000 },
  taken_over: { type: "taken_over" },
  portal_blocked: { type: "portal_blocked", reason: Code.TIMEOUT },
  portal_transfer_rejected: { type: "portal_transfer_rejected", reason: Code.NOT_MEMBER },
  portal_moved: { type: "portal_moved", area: 6, wsUrl: "wss://h2.example/ws", grant: "g-0b11", joinId: 44n },
  leave: { type: "leave" },
  watch: { type: "watch", entity: 1001 },
  flow: { type: "flow", creature: 12, target: 1001, x: 16, y: 3, w: 3, h: 2, dirs: new Uint8Array([2, 2, 8, 1, 0, 255]) },
  left: { type: "left" },
  inventory: {
    type: "inventory",
    slots: slots(20, { id: (7n << 32n) | 1n, kind: 13, count: 12 }, EMPTY, { id: (7n << 32n) | 9n, kind: 6, count: 1 }),
    stash: [{ id: (3n << 32n) | 2n, kind: 14, count: 5 }],
  },
  container: {
    type: "container",
    x: 11,
    y: 9,
    slots: slots(4, { id: (7n << 32n) | 4n, kind: 15, count: 8 }),
    prices: [{ kind: 14, count: 3 }, NO_PRICE, NO_PRICE, NO_PRICE],
    flags: ContainerFlag.Owned,
    ready: 0,
  },
  recipes: {
    type: "recipes",
    known: [
      { code: 1, name: "planks", station: "cauldron", inputs: [{ kind: 13, count: 2 }], outputs: [{ kind: 15, count: 4 }], seconds: 0 },
      { code: 5, name: "brick", station: "furnace", inputs: [{ kind: 14, count: 2 }], outputs: [{ kind: 23, count: 1 }], seconds: 10 },
    ],
  },
  trade: {
    type: "trade",
    id: 3,
    with: 1002,
    rev: 4,
    mine: [{ slot: 2, stack: { id: (7n << 32n) | 9n, kind: 15, count: 4 } }],
    theirs: [{ slot: 0, stack: { id: (3n << 32n) | 2n, kind: 14, count: 5 } }],
    confirmed: TradeConfirmed.Theirs,
    status: TradeStatus.Open,
    reason: Code.OK,
  },
};

test("golden files: every one has an expected value, and every expected value a file", (fx) => {
  eq(Object.keys(fx.golden).sort(), Object.keys(goldens).sort(), "golden files");
});

test("golden files decode to the documented values", (fx) => {
  for (const [name, h] of Object.entries(fx.golden)) {
    const want = goldens[name];
    if (want === undefined) continue; // the test above reports it
    eq(decodeMessage(unhex(h)), want, `decode ${name}`);
  }
});

test("golden files re-encode byte for byte", (fx) => {
  for (const [name, want] of Object.entries(goldens)) {
    const h = fx.golden[name];
    if (h === undefined) continue;
    eq(hex(encodeMessage(want)), h, `encode ${name}`);
  }
});

test("the golden snapshot's records decode as documented", () => {
  const m = goldens["snapshot"];
  ok(m !== undefined && m.type === "snapshot", "snapshot golden");
  if (m?.type !== "snapshot") return;
  eq(
    readRecords(m.records),
    [
      { op: "step", dir: 2, id: 9 },
      { op: "enter", entity: { id: 12, kind: EntityKind.Creature, look: 1, x: 17, y: 4, facing: Dir.W, hp: 15, flags: 0 } },
      { op: "forget", cell: 3 },
    ],
    "records",
  );
});

test("the golden short snapshot, after the golden snapshot, is tick 86412, ack_seq 8, a step s of 9", (fx) => {
  const whole = decodeMessage(unhex(fx.golden["snapshot"] ?? ""));
  const short = decodeMessage(unhex(fx.golden["snapshot_short"] ?? ""));
  ok(whole.type === "snapshot" && short.type === "short_snapshot", `types ${whole.type}, ${short.type}`);
  if (whole.type !== "snapshot" || short.type !== "short_snapshot") return;
  const s = expandShortSnapshot(whole, short);
  eq(s, { type: "snapshot", tick: 86412, ackSeq: 8, flags: 0, records: unhex("0409") }, "expanded");
  eq(readRecords(s.records), [{ op: "step", dir: Dir.S, id: 9 }], "records");
});

test("a short snapshot decodes from its byte string, and encodes back", () => {
  const b = unhex("448c080409");
  const m = decodeMessage(b);
  eq(m, { type: "short_snapshot", tick8: 140, ack8: 8, records: unhex("0409") }, "decode");
  if (m.type !== "short_snapshot") return;
  ok(m.records.buffer === b.buffer, "the records share the frame's memory");
  eq(hex(encodeMessage(m)), "448c080409", "encode");
  eq(expandShortSnapshot({ tick: 86402, ackSeq: 7 }, m), { type: "snapshot", tick: 86412, ackSeq: 8, flags: 0, records: unhex("0409") }, "expanded");
  // A keep-alive: no records. The head grows with the records, always in its shortest form.
  const sizes: [number, string][] = [[0, "42"], [21, "57"], [22, "5818"], [253, "58ff"], [254, "590100"], [65533, "59ffff"], [65534, "5a00010000"]];
  for (const [n, head] of sizes) {
    const s: ShortSnapshot = { type: "short_snapshot", tick8: 1, ack8: 2, records: new Uint8Array(n).fill(0x09) };
    const e = encodeMessage(s);
    eq(hex(e.subarray(0, head.length / 2 + 2)), head + "0102", `${n} bytes of records: head`);
    eq(e.length, head.length / 2 + 2 + n, `${n} bytes of records: length`);
    eq(decodeMessage(e), s, `${n} bytes of records: round trip`);
  }
  throws(() => encodeMessage({ type: "short_snapshot", tick8: 256, ack8: 0, records: new Uint8Array() }), RangeError, "tick8 256");
  // Length heads longer than they need are accepted, as every integer's (and re-encode short).
  eq(decodeMessage(unhex("58020102")), { type: "short_snapshot", tick8: 1, ack8: 2, records: new Uint8Array() }, "a one-byte length head for 2");
  eq(decodeMessage(unhex("5900050102030405")), { type: "short_snapshot", tick8: 1, ack8: 2, records: unhex("030405") }, "a two-byte length head for 5");
});

test("a short snapshot counts on from the last snapshot, wrapping its low bytes", () => {
  const s = (tick8: number, ack8: number): ShortSnapshot => ({ type: "short_snapshot", tick8, ack8, records: new Uint8Array() });
  const cases: [string, { tick: number; ackSeq: number }, ShortSnapshot, number, number][] = [
    ["the same tick and ack", { tick: 86402, ackSeq: 7 }, s(130, 7), 86402, 7],
    ["one tick on", { tick: 0, ackSeq: 0 }, s(1, 0), 1, 0],
    ["the tick's low byte wraps", { tick: 250, ackSeq: 0 }, s(4, 0), 260, 0],
    ["255 on", { tick: 256, ackSeq: 1 }, s(255, 0), 511, 256],
    ["the ack's low byte wraps", { tick: 1, ackSeq: 255 }, s(1, 0), 1, 256],
    ["past 2^32 ticks", { tick: 2 ** 32 + 250, ackSeq: 3 }, s(2, 5), 2 ** 32 + 258, 5],
    ["up to 2^53 - 1 ticks", { tick: Number.MAX_SAFE_INTEGER - 5, ackSeq: 0 }, s(0xff, 0), Number.MAX_SAFE_INTEGER, 0],
    ["the ack's 32 bits wrap, as seqs do", { tick: 9, ackSeq: 0xffffffff }, s(9, 1), 9, 1],
    ["ack 2^32 - 1", { tick: 9, ackSeq: 0xfffffff0 }, s(9, 0xff), 9, 0xffffffff],
  ];
  for (const [name, last, m, tick, ackSeq] of cases) {
    eq(expandShortSnapshot(last, m), { type: "snapshot", tick, ackSeq, flags: 0, records: new Uint8Array() }, name);
  }
  throws(() => expandShortSnapshot({ tick: Number.MAX_SAFE_INTEGER, ackSeq: 0 }, s(0, 0)), MalformedError, "a tick past 2^53 - 1");
});

test("short snapshots outside the rules are refused", () => {
  const cases: [string, string][] = [
    ["no content", "40"],
    ["one byte of content", "4105"],
    ["an indefinite length", "5f42010203ff"],
    ["a reserved head", "5c"],
    ["a byte string longer than the frame", "45010203"],
    ["a truncated length head", "58"],
    ["trailing bytes after the byte string", "4301020300"],
    ["a second byte string after it", "420102420304"],
  ];
  for (const [name, h] of cases) {
    const e = throws(() => decodeMessage(unhex(h)), MalformedError, name);
    eq(e.code, Code.MALFORMED, `${name}: code`);
  }
  const big = new Uint8Array((1 << 20) + 1);
  big.set([0x5a, 0x00, 0x10, 0x00, 0x00]);
  throws(() => decodeMessage(big), MalformedError, "a short snapshot over 1 MiB");
});

test("join ids past 2^53 survive both ways", () => {
  const joinId = 18446744073709551615n; // 2^64 - 1
  const m: Message = { type: "hello", grant: "g", joinId, versions: [2] };
  const b = encodeMessage(m);
  eq(hex(b.subarray(0, 6)), "830701836167", "head");
  eq(hex(b.subarray(6, 15)), "1bffffffffffffffff", "join id in 8 bytes");
  eq(decodeMessage(b), m, "round trip");
  const mid: Message = { type: "resume", token: "t", joinId: 2n ** 40n };
  eq(hex(encodeMessage(mid)), "830702826174" + "1b0000010000000000", "2^40 in 8 bytes");
  const small: Message = { type: "resume", token: "t", joinId: 5n };
  eq(hex(encodeMessage(small)), "830702826174" + "05", "a small join id in one byte");
});

test("longer integer forms are accepted", () => {
  // intent_result{seq: 7, code: BLOCKED} with seq as a 64-bit head.
  eq(decodeMessage(unhex("83070b821b00000000000000070f")), { type: "intent_result", seq: 7, code: Code.BLOCKED }, "decode");
});

test("the decoding rules refuse what is outside the schema", () => {
  const cases: [string, string, number][] = [
    ["empty", "", Code.MALFORMED],
    ["not an array", "02", Code.MALFORMED],
    ["envelope of 2", "820210", Code.MALFORMED],
    ["indefinite array", "9f021080ff", Code.MALFORMED],
    ["a map", "a0", Code.MALFORMED],
    ["a tag", "c283040b82070f", Code.MALFORMED],
    ["a float", "83070b82f93c000f", Code.MALFORMED],
    ["null", "830710f6", Code.MALFORMED],
    ["trailing bytes", "8307108000", Code.MALFORMED],
    ["truncated", "83070b8207", Code.MALFORMED],
    ["byte string past the end", "83070c84010000" + "4502", Code.MALFORMED],
    ["invalid UTF-8", "83070a820262c328", Code.MALFORMED],
    ["wrong field count", "83070b83070f00", Code.MALFORMED],
    ["wrong field type", "83070b8261070f", Code.MALFORMED],
    ["field out of range", "83070b82071a00010000", Code.MALFORMED],
    ["a negative seq", "83070b82200f", Code.MALFORMED],
    ["unknown type", "8307078100", Code.UNKNOWN_TYPE],
    ["another version", "83030b82070f", Code.VERSION_UNSUPPORTED],
    ["version 6, retired", "83060b82070f", Code.VERSION_UNSUPPORTED],
  ];
  for (const [name, h, code] of cases) {
    const e = throws(() => decodeMessage(unhex(h)), MalformedError, name);
    eq(e.code, code, `${name}: code`);
  }
});

test("hello_ack and error decode whatever their envelope's version", () => {
  const m = decodeMessage(unhex("830109840300182a60"));
  eq(m, { type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: 42n, detail: "" }, "error of version 1");
});

test("a text field over 1024 bytes is refused", () => {
  const long = "x".repeat(1025);
  const b = encodeMessage({ type: "rehello", code: 2, detail: long });
  throws(() => decodeMessage(b), MalformedError, "1025 bytes");
  const fine = encodeMessage({ type: "rehello", code: 2, detail: long.slice(1) });
  eq(decodeMessage(fine), { type: "rehello", code: 2, detail: long.slice(1) }, "1024 bytes");
});

test("a message over 1 MiB is refused before decoding", () => {
  const b = new Uint8Array((1 << 20) + 1);
  throws(() => decodeMessage(b), MalformedError, "1 MiB + 1");
});

test("arrays nested too deep are refused", () => {
  throws(() => decodeMessage(unhex("830714" + "81".repeat(12) + "00")), MalformedError, "12 levels");
});

test("encoding refuses fields out of range", () => {
  throws(() => encodeMessage({ type: "intent", seq: 2 ** 32, kind: 0, dir: 0, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } }), RangeError, "seq 2^32");
  throws(() => encodeMessage({ type: "intent", seq: 1, kind: 0, dir: 0, target: { x: 2 ** 31, y: 0 }, item: { from: 0, to: 0, count: 0 } }), RangeError, "x 2^31");
  throws(() => encodeMessage({ type: "hello", grant: "g", joinId: -1n, versions: [2] }), RangeError, "join id -1");
});

/** Two recipes as a character may know them: planks and a table, both made at a cauldron. */
const KNOWN_RECIPES: Message = {
  type: "recipes",
  known: [
    { code: 1, name: "planks", station: "cauldron", inputs: [{ kind: 13, count: 2 }], outputs: [{ kind: 15, count: 4 }], seconds: 0 },
    {
      code: 3,
      name: "table",
      station: "cauldron",
      inputs: [
        { kind: 14, count: 1 },
        { kind: 15, count: 4 },
      ],
      outputs: [{ kind: 2, count: 1 }],
      seconds: 0,
    },
  ],
};

/** An item kind of the shipped content's shape; fields not given are 0 or "". */
function kind(k: Partial<ItemKind> & Pick<ItemKind, "code" | "name" | "label">): ItemKind {
  return { stack: 1, slot: 0, flags: 0, look: 0, container: 0, station: "", becomes: 0, grows: 0, ...k };
}

const NOTHING = { from: 0, to: 0, count: 0 };
const AT = { x: 0, y: 0 };

/**
 * Messages of the new fields and kinds, encoded by the Go reference
 * (net/wire) in the fixtures: each decodes to the value here and
 * re-encodes byte for byte.
 */
const more: Record<string, Message> = {
  action: { type: "intent", seq: 8, kind: IntentKind.Action, dir: Dir.E, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } },
  nothing_there: { type: "intent_result", seq: 8, code: Code.NOTHING_THERE },
  craft: { type: "intent", seq: 9, kind: IntentKind.Craft, dir: Dir.S, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } },
  use: { type: "intent", seq: 10, kind: IntentKind.Use, dir: 0, target: { x: 0, y: 0 }, item: { from: 11, to: 0, count: 0 } },
  no_recipe: { type: "intent_result", seq: 9, code: Code.NO_RECIPE },
  known: { type: "intent_result", seq: 10, code: Code.KNOWN },
  no_recipes: { type: "recipes", known: [] },
  two_recipes: KNOWN_RECIPES,
  slow_recipe: {
    type: "recipes",
    known: [
      { code: 5, name: "brick", station: "furnace", inputs: [{ kind: 14, count: 2 }], outputs: [{ kind: 23, count: 1 }], seconds: 10 },
      { code: 65535, name: "age", station: "s", inputs: [{ kind: 1, count: 1 }], outputs: [{ kind: 2, count: 1 }], seconds: 2 ** 32 - 1 },
    ],
  },
  trade_intent: { type: "intent", seq: 11, kind: IntentKind.Trade, dir: Dir.W, target: AT, item: NOTHING },
  offer: { type: "intent", seq: 12, kind: IntentKind.Offer, dir: 0, target: AT, item: { from: 3, to: 0, count: 2 } },
  offer_off: { type: "intent", seq: 13, kind: IntentKind.Offer, dir: 0, target: AT, item: { from: 3, to: 0, count: 0 } },
  confirm: { type: "intent", seq: 14, kind: IntentKind.Confirm, dir: 0, target: AT, item: { from: 0, to: 0, count: 300 } },
  cancel: { type: "intent", seq: 15, kind: IntentKind.Cancel, dir: 0, target: AT, item: NOTHING },
  price: { type: "intent", seq: 16, kind: IntentKind.Price, dir: Dir.N, target: { x: 14, y: 3 }, item: { from: CONTAINER_SLOT + 1, to: 0, count: 0 } },
  buy: { type: "intent", seq: 17, kind: IntentKind.Buy, dir: Dir.N, target: { x: 14, y: 3 }, item: { from: CONTAINER_SLOT + 1, to: 0, count: 8 } },
  stale: { type: "intent_result", seq: 17, code: Code.STALE },
  cant_pay: { type: "intent_result", seq: 17, code: Code.CANT_PAY },
  trade_opened: { type: "trade", id: 7, with: 1001, rev: 0, mine: [], theirs: [], confirmed: 0, status: TradeStatus.Open, reason: Code.OK },
  trade_done: {
    type: "trade",
    id: 7,
    with: 1001,
    rev: 2,
    mine: [{ slot: 19, stack: { id: (1n << 40n) | 5n, kind: 1, count: 2 } }],
    theirs: [
      { slot: 0, stack: { id: 9n, kind: 14, count: 5 } },
      { slot: 4, stack: { id: 10n, kind: 13, count: 1 } },
    ],
    confirmed: TradeConfirmed.Mine | TradeConfirmed.Theirs,
    status: TradeStatus.Done,
    reason: Code.OK,
  },
  trade_void: {
    type: "trade",
    id: 8,
    with: 1003,
    rev: 1,
    mine: [],
    theirs: [{ slot: 1, stack: { id: 11n, kind: 15, count: 4 } }],
    confirmed: 0,
    status: TradeStatus.Void,
    reason: Code.TRADE_CANCELLED,
  },
  chest: { type: "container", x: 3, y: 4, slots: [EMPTY, { id: (7n << 32n) | 4n, kind: 13, count: 4 }], prices: [], flags: 0, ready: 0 },
  furnace_working: { type: "container", x: 5, y: 6, slots: [{ id: 12n, kind: 14, count: 2 }, EMPTY], prices: [], flags: 0, ready: 86600 },
  stall_for_a_buyer: {
    type: "container",
    x: 11,
    y: 9,
    slots: [{ id: (7n << 32n) | 4n, kind: 15, count: 8 }, EMPTY, { id: 3n, kind: 14, count: 3 }, EMPTY],
    prices: [{ kind: 14, count: 3 }, NO_PRICE, NO_PRICE, NO_PRICE],
    flags: 0,
    ready: 0,
  },
  ready_far: { type: "container", x: -1, y: 0, slots: [EMPTY], prices: [], flags: 0, ready: 2 ** 40 },
  village_kinds: {
    type: "area_info",
    area: 5,
    kind: "village",
    w: 64,
    h: 48,
    cellSize: 8,
    tickHz: 20,
    snapshotHz: 10,
    stepMs: 200,
    queueLen: 8,
    interestRadius: 24,
    resumeGraceMs: 30000,
    rules: 0b10001,
    playerHp: 100,
    creatures: [],
    items: [
      kind({ code: 19, name: "stall", label: "Stall", slot: 2, flags: ItemFlag.Blocks | ItemFlag.Stall, look: 19, container: 4 }),
      kind({ code: 20, name: "sapling", label: "Sapling", stack: 10, slot: 2, flags: ItemFlag.Blocks, look: 20, becomes: 21, grows: 60 }),
      kind({ code: 21, name: "tree", label: "Tree", slot: 2, flags: ItemFlag.Blocks | ItemFlag.BlocksSight, look: 21 }),
      kind({ code: 22, name: "furnace", label: "Furnace", slot: 2, flags: ItemFlag.Blocks, look: 22, container: 2, station: "furnace" }),
      kind({ code: 65535, name: "slow", label: "Slow", slot: 2, becomes: 65534, grows: 2 ** 32 - 1 }),
    ],
    plots: [{ x: 22, y: 6, w: 10, h: 5 }],
  },
  arena_info: {
    type: "area_info",
    area: 6,
    kind: "arena",
    w: 96,
    h: 96,
    cellSize: 8,
    tickHz: 20,
    snapshotHz: 10,
    stepMs: 166,
    queueLen: 8,
    interestRadius: 24,
    resumeGraceMs: 30000,
    rules: 0b1111,
    playerHp: 100,
    creatures: [
      { name: "wolf", hp: 30 },
      { name: "deer", hp: 15 },
      { name: "slime", hp: 20 },
    ], items: [], plots: [],
  },
  every_object: {
    type: "static",
    cell: 0,
    version: 70000,
    floor: [Floor.Void, 1, Floor.Grass, 1, Floor.Dirt, 1, Floor.Stone, 1, Floor.Sand, 1, Floor.Wood, 1, Floor.Water, 1, Floor.Wall, 57],
    objects: [
      { id: 1, kind: ObjectKind.Door, x: 0, y: 1, state: DoorState.Closed, text: "", item: 0 },
      { id: 2, kind: ObjectKind.Tree, x: 1, y: 1, state: 0, text: "", item: 0 },
      { id: 3, kind: ObjectKind.Sign, x: 2, y: 1, state: 0, text: "East: the arena. Wolves and slimes. Bring friends.", item: 0 },
      { id: 4, kind: ObjectKind.Rock, x: 3, y: 1, state: 0, text: "", item: 0 },
      { id: 5, kind: ObjectKind.Chest, x: 4, y: 1, state: 0, text: "", item: 0 },
      { id: 4294967295, kind: ObjectKind.Portal, x: 5, y: 1, state: 0, text: "", item: 0 },
    ],
  },
};

test("the new fields and kinds decode and encode as the Go reference does", (fx) => {
  eq(Object.keys(fx.more).sort(), Object.keys(more).sort(), "messages");
  for (const [name, want] of Object.entries(more)) {
    const h = fx.more[name];
    if (h === undefined) continue;
    eq(decodeMessage(unhex(h)), want, `decode ${name}`);
    eq(hex(encodeMessage(want)), h, `encode ${name}`);
  }
});

test("the item codes are 30 to 36; SPECTATOR, 37; OFF_PLOT, 38; NO_RECIPE, 39; KNOWN, 40; trade and stalls, 41 to 54, the last one", () => {
  eq(Code.UNAVAILABLE, 29, "UNAVAILABLE");
  eq(Code.INVENTORY_FULL, 30, "INVENTORY_FULL");
  eq(Code.NOT_EMPTY, 36, "NOT_EMPTY");
  eq(Code.SPECTATOR, 37, "SPECTATOR");
  eq(Code.OFF_PLOT, 38, "number");
  eq(codeName(38), "OFF_PLOT", "name");
  eq(codeMeaning(38), "you may build here only on the plots the map marks", "meaning");
  eq([Code.NO_RECIPE, codeName(39), codeMeaning(39)], [39, "NO_RECIPE", "the station's contents match none of its recipes"], "NO_RECIPE");
  eq([Code.KNOWN, codeName(40), codeMeaning(40)], [40, "KNOWN", "the character knows this recipe already"], "KNOWN");
  const v6: [string, number][] = [
    ["TRADING", 41],
    ["NOT_TRADING", 42],
    ["BUSY", 43],
    ["STALE", 44],
    ["TRADE_CANCELLED", 45],
    ["TRADE_FAR", 46],
    ["TRADE_LEFT", 47],
    ["TRADE_PORTAL", 48],
    ["TRADE_TAKEN_OVER", 49],
    ["TRADE_CHANGED", 50],
    ["WORKING", 51],
    ["NOT_OWNER", 52],
    ["NOT_FOR_SALE", 53],
    ["CANT_PAY", 54],
  ];
  for (const [name, n] of v6) {
    eq([Code[name as keyof typeof Code], codeName(n)], [n, name], name);
    ok(codeMeaning(n) !== codeMeaning(Code.INTERNAL), `${name} has a meaning of its own`);
  }
  eq(codeMeaning(Code.CANT_PAY), "you do not carry the price", "CANT_PAY's meaning");
  eq(codeName(55), "INTERNAL(55)", "the next number is unknown");
});

test("area_info, creature kinds, plots and static objects of the wrong shape are refused", () => {
  const info: AreaInfo = { ...(more["arena_info"] as AreaInfo), creatures: [], items: [], plots: [] };
  const head = hex(encodeMessage(info)).slice(0, -6); // all but the empty creatures, items and plots arrays (80 80 80)
  eq(decodeMessage(unhex(head + "808080")), info, "no creature kinds, no item kinds, no plots");
  eq(decodeMessage(unhex(head + "8080" + "81840a040605")), { ...info, plots: [{ x: 10, y: 4, w: 6, h: 5 }] }, "one plot");
  const fields = (n: number): string => head.slice(0, 6) + (0x80 + n).toString(16) + head.slice(8); // the head, its body of n fields
  const obj = "83070d8400018201184081"; // static{cell 0, version 1, floor [grass, 64]}, one object:
  const cases: [string, string][] = [
    ["area_info of 12 fields, as before the kinds", "8307148c056776696c6c6167651840183008140a18c808181819753001"],
    ["area_info without its item kinds, as version 2 had it", fields(14) + "80"],
    ["area_info without its plots, as version 3 had it", fields(15) + "8080"],
    ["a creature kind of one field", head + "8181" + "64776f6c66" + "80" + "80"],
    ["a creature kind of three fields", head + "8183" + "64776f6c66" + "1e" + "00" + "80" + "80"],
    ["a creature kind whose hp exceeds 16 bits", head + "8182" + "64776f6c66" + "1a00010000" + "80" + "80"],
    ["a creature kind whose name is a number", head + "8182" + "01" + "1e" + "80" + "80"],
    ["an item kind of seven fields, without its flags", head + "80" + "8187" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "80"],
    ["an item kind of eight fields, without its station, as version 4 had it", head + "80" + "8188" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "80"],
    ["an item kind of nine fields, without becomes and grows, as version 5 had it", head + "80" + "8189" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "60" + "80"],
    ["an item kind of ten fields, without grows", head + "80" + "818a" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "60" + "00" + "80"],
    ["an item kind whose stack exceeds 16 bits", head + "80" + "818b" + "0d" + "64776f6f64" + "64776f6f64" + "1a00010000" + "00" + "00" + "00" + "00" + "60" + "0000" + "80"],
    ["an item kind whose station is a number", head + "80" + "818b" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "00" + "0000" + "80"],
    ["an item kind whose becomes exceeds 16 bits", head + "80" + "818b" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "60" + "1a00010000" + "00" + "80"],
    ["an item kind whose grows exceeds 32 bits", head + "80" + "818b" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "60" + "15" + "1b0000000100000000" + "80"],
    ["an item kind whose grows is negative", head + "80" + "818b" + "0d" + "64776f6f64" + "64776f6f64" + "1863" + "00" + "00" + "00" + "00" + "60" + "15" + "20" + "80"],
    ["plots that are no array", head + "8080" + "00"],
    ["a plot of three fields", head + "8080" + "8183" + "0a0406"],
    ["a plot whose w exceeds 16 bits", head + "8080" + "8184" + "0a04" + "1a00010000" + "05"],
    ["a plot whose x exceeds 32 bits", head + "8080" + "8184" + "1b0000000100000000" + "040605"],
    ["a static object of 6 fields, as version 2 had it", obj + "86" + "010100000060"],
    ["a static object whose text is a number", obj + "87" + "01010000000700"],
    ["a static object whose kind exceeds 16 bits", obj + "87" + "01" + "1a00010000" + "0000006000"],
    ["a static object whose item exceeds 16 bits", obj + "87" + "0101000000" + "60" + "1a00010000"],
  ];
  for (const [name, h] of cases) throws(() => decodeMessage(unhex(h)), MalformedError, name);
  eq(
    decodeMessage(unhex(obj + "87" + "01" + "01" + "00" + "00" + "01" + "60" + "00")),
    { type: "static", cell: 0, version: 1, floor: [1, 64], objects: [{ id: 1, kind: ObjectKind.Door, x: 0, y: 0, state: DoorState.Open, text: "", item: 0 }] },
    "the same object, well formed",
  );
});

test("the golden area_info's plots and inventory's stash decode as documented", (fx) => {
  const info = decodeMessage(unhex(fx.golden["area_info"] ?? ""));
  ok(info.type === "area_info", "area_info.hex is an area_info");
  if (info.type === "area_info") eq(info.plots, [{ x: 10, y: 4, w: 6, h: 5 }], "plots");
  const inv = decodeMessage(unhex(fx.golden["inventory"] ?? ""));
  ok(inv.type === "inventory", "inventory.hex is an inventory");
  if (inv.type === "inventory") eq(inv.stash, [{ id: (3n << 32n) | 2n, kind: 14, count: 5 }], "stash");
});

test("an inventory's stash holds at most 40 stacks, each of the shape of a slot", () => {
  const stash = (n: number): Stack[] => Array.from({ length: n }, (_, i) => ({ id: BigInt(i + 1), kind: 13, count: 1 }));
  const inv: Message = { type: "inventory", slots: slots(20), stash: stash(40) };
  eq(decodeMessage(encodeMessage(inv)), inv, "40 stacks stashed");
  const e = throws(() => decodeMessage(encodeMessage({ ...inv, stash: stash(41) })), MalformedError, "41 stacks stashed");
  eq(e.code, Code.MALFORMED, "41 stacks stashed: code");
  const bare = hex(encodeMessage({ ...inv, stash: [] })).slice(0, -2); // all but the empty stash (80)
  throws(() => decodeMessage(unhex(bare.slice(0, 6) + "81" + bare.slice(8))), MalformedError, "an inventory without its stash, as version 3 had it");
  throws(() => decodeMessage(unhex(bare + "81" + "820d01")), MalformedError, "a stashed stack of two fields");
  throws(() => decodeMessage(unhex(bare + "81" + "83011a0001000001")), MalformedError, "a stashed stack whose kind exceeds 16 bits");
});

test("recipes: t = 25, [known], each recipe [code, name, station, inputs, outputs, seconds], both ways", () => {
  const h =
    "83071819" + // envelope: v = 7, t = 25 (two bytes: 18 19)
    "81" + // body, array(1)
    "82" + // known, array(2)
    "86" + "01" + "66706c616e6b73" + "686361756c64726f6e" + "81820d02" + "81820f04" + "00" + // [1, "planks", "cauldron", [[13, 2]], [[15, 4]], 0]
    "86" + "03" + "657461626c65" + "686361756c64726f6e" + "82820e01" + "820f04" + "81820201" + "00"; // [3, "table", "cauldron", [[14, 1], [15, 4]], [[2, 1]], 0]
  eq(hex(encodeMessage(KNOWN_RECIPES)), h, "encoded");
  eq(decodeMessage(unhex(h)), KNOWN_RECIPES, "decoded");
  eq(decodeMessage(unhex("830718198180")), { type: "recipes", known: [] }, "none known");
  // A longer integer form of a count is accepted, as everywhere.
  eq(decodeMessage(unhex("83071819818186" + "01" + "6170" + "6163" + "81820d1a00000002" + "80" + "1a0000000a")), {
    type: "recipes",
    known: [{ code: 1, name: "p", station: "c", inputs: [{ kind: 13, count: 2 }], outputs: [], seconds: 10 }],
  }, "a count and the seconds in a 32-bit head");
});

test("recipes of the wrong shape are refused; at most 1024 of them", () => {
  const r = (fields: string): string => "8307181981" + "81" + fields; // recipes{known: [one recipe]}
  const cases: [string, string, number][] = [
    ["a body of no fields", "8307181980", Code.MALFORMED],
    ["a body of two fields", "830718198280" + "80", Code.MALFORMED],
    ["known that is no array", "830718198100", Code.MALFORMED],
    ["a recipe of four fields", r("84" + "01" + "6170" + "6163" + "80"), Code.MALFORMED],
    ["a recipe of five fields, without its seconds, as version 5 had it", r("85" + "01" + "6170" + "6163" + "80" + "80"), Code.MALFORMED],
    ["a recipe of seven fields", r("87" + "01" + "6170" + "6163" + "80" + "80" + "00" + "00"), Code.MALFORMED],
    ["a recipe whose code exceeds 16 bits", r("86" + "1a00010000" + "6170" + "6163" + "80" + "80" + "00"), Code.MALFORMED],
    ["a recipe whose code is negative", r("86" + "20" + "6170" + "6163" + "80" + "80" + "00"), Code.MALFORMED],
    ["a recipe whose name is a number", r("86" + "01" + "01" + "6163" + "80" + "80" + "00"), Code.MALFORMED],
    ["a recipe whose station is bytes", r("86" + "01" + "6170" + "4163" + "80" + "80" + "00"), Code.MALFORMED],
    ["inputs that are no array", r("86" + "01" + "6170" + "6163" + "00" + "80" + "00"), Code.MALFORMED],
    ["an input of one field", r("86" + "01" + "6170" + "6163" + "81810d" + "80" + "00"), Code.MALFORMED],
    ["an output of three fields", r("86" + "01" + "6170" + "6163" + "80" + "81830d0200" + "00"), Code.MALFORMED],
    ["an input whose kind exceeds 16 bits", r("86" + "01" + "6170" + "6163" + "81821a0001000002" + "80" + "00"), Code.MALFORMED],
    ["an output whose count exceeds 16 bits", r("86" + "01" + "6170" + "6163" + "80" + "81820d1a00010000" + "00"), Code.MALFORMED],
    ["seconds that exceed 32 bits", r("86" + "01" + "6170" + "6163" + "80" + "80" + "1b0000000100000000"), Code.MALFORMED],
    ["seconds that are negative", r("86" + "01" + "6170" + "6163" + "80" + "80" + "20"), Code.MALFORMED],
    ["seconds that are text", r("86" + "01" + "6170" + "6163" + "80" + "80" + "6131"), Code.MALFORMED],
    ["a recipe of version 5", "83051819818186" + "01" + "6170" + "6163" + "80" + "80" + "00", Code.VERSION_UNSUPPORTED],
    ["a recipe of nine inputs", r("86" + "01" + "6170" + "6163" + "89" + "820101".repeat(9) + "80" + "00"), Code.MALFORMED],
    ["a recipe of nine outputs", r("86" + "01" + "6170" + "6163" + "80" + "89" + "820101".repeat(9) + "00"), Code.MALFORMED],
  ];
  for (const [name, h, code] of cases) {
    const e = throws(() => decodeMessage(unhex(h)), MalformedError, name);
    eq(e.code, code, `${name}: code`);
  }
  const many = (n: number): Message => ({
    type: "recipes",
    known: Array.from({ length: n }, (_, i) => ({ code: i + 1, name: "r", station: "s", inputs: [{ kind: 1, count: 1 }], outputs: [{ kind: 2, count: 1 }], seconds: i })),
  });
  eq(decodeMessage(encodeMessage(many(1024))), many(1024), "1024 recipes");
  const eight = Array.from({ length: 8 }, (_, i) => ({ kind: i + 1, count: 1 }));
  const full: Message = { type: "recipes", known: [{ code: 1, name: "r", station: "s", inputs: eight, outputs: eight, seconds: 0 }] };
  eq(decodeMessage(encodeMessage(full)), full, "eight inputs and eight outputs");
  throws(() => decodeMessage(encodeMessage(many(1025))), MalformedError, "1025 recipes");
});

test("an item kind's station is its ninth field, becomes and grows its tenth and eleventh; a blueprint's flag is Teaches, a stall's Stall", () => {
  const cauldron = kind({ code: 17, name: "cauldron", label: "Cauldron", slot: 2, flags: 1, look: 17, container: 4, station: "cauldron" });
  const blueprint = kind({ code: 18, name: "blueprint_table", label: "Table blueprint", flags: ItemFlag.Teaches });
  const sapling = kind({ code: 20, name: "sapling", label: "Sapling", stack: 10, slot: 2, flags: 1, look: 20, becomes: 21, grows: 60 });
  eq(ItemFlag.Teaches, 1 << 3, "ItemTeaches is bit 3");
  eq(ItemFlag.Stall, 1 << 4, "ItemStall is bit 4");
  const info: AreaInfo = { ...(more["arena_info"] as AreaInfo), items: [cauldron, blueprint, sapling] };
  const h = hex(encodeMessage(info));
  ok(h.includes("8b" + "11" + "686361756c64726f6e" + "684361756c64726f6e" + "01" + "02" + "01" + "11" + "04" + "686361756c64726f6e" + "00" + "00"), `the cauldron's eleven fields in ${h}`);
  ok(h.includes("8b" + "14" + "677361706c696e67" + "6753" + "61706c696e67" + "0a" + "02" + "01" + "14" + "00" + "60" + "15" + "183c"), `the sapling's eleven fields in ${h}`);
  eq(decodeMessage(unhex(h)), info, "round trip");
});

test("container: [x, y, slots, prices, flags, ready]; a stall's prices, at most one a slot; the owner's flag; a station's ready tick", (fx) => {
  const golden = decodeMessage(unhex(fx.golden["container"] ?? ""));
  ok(golden.type === "container", "container.hex is a container");
  if (golden.type === "container") {
    eq([golden.prices.length, golden.flags & ContainerFlag.Owned, golden.ready], [golden.slots.length, ContainerFlag.Owned, 0], "the golden stall, to its owner");
  }
  // container{x 1, y 2, slots [[0, 0, 0]], prices, flags, ready}
  const c = (rest: string): string => "830717" + "86" + "01" + "02" + "81" + "83000000" + rest;
  eq(decodeMessage(unhex(c("80" + "00" + "00"))), { type: "container", x: 1, y: 2, slots: [EMPTY], prices: [], flags: 0, ready: 0 }, "a chest");
  eq(decodeMessage(unhex(c("81820e03" + "01" + "00"))), { type: "container", x: 1, y: 2, slots: [EMPTY], prices: [{ kind: 14, count: 3 }], flags: 1, ready: 0 }, "a stall's one price");
  eq(decodeMessage(unhex(c("80" + "00" + "1b0000000000015180"))).type, "container", "ready in a 64-bit head");
  const cases: [string, string][] = [
    ["a container of three fields, as version 5 had it", "830717" + "83" + "01" + "02" + "81" + "83000000"],
    ["a container of five fields, without ready", "830717" + "85" + "01" + "02" + "81" + "83000000" + "80" + "00"],
    ["more prices than slots", c("82" + "820e03" + "820000" + "00" + "00")],
    ["a price of three fields", c("81" + "830e0300" + "00" + "00")],
    ["a price whose kind exceeds 16 bits", c("81" + "821a00010000" + "03" + "00" + "00")],
    ["prices that are no array", c("00" + "00" + "00")],
    ["flags that exceed 8 bits", c("80" + "190100" + "00")],
    ["a negative ready", c("80" + "00" + "20")],
    ["a ready past 2^53", c("80" + "00" + "1b0020000000000000")],
  ];
  for (const [name, h] of cases) throws(() => decodeMessage(unhex(h)), MalformedError, name);
});

test("trade: t = 26, [id, with, rev, mine, theirs, confirmed, status, reason]; at most 8 stacks a side", (fx) => {
  ok(fx.golden["trade"] !== undefined, "trade.hex");
  // trade{id 1, with 2, rev 3, mine, theirs, confirmed 0, status 0, reason 0}
  const t = (mine: string, theirs: string, tail = "000000"): string => "8307181a" + "88" + "01" + "02" + "03" + mine + theirs + tail;
  const one = "82" + "00" + "83" + "01" + "0e" + "05"; // [0, [1, 14, 5]]
  eq(decodeMessage(unhex(t("80", "81" + one))), {
    type: "trade",
    id: 1,
    with: 2,
    rev: 3,
    mine: [],
    theirs: [{ slot: 0, stack: { id: 1n, kind: 14, count: 5 } }],
    confirmed: 0,
    status: TradeStatus.Open,
    reason: Code.OK,
  }, "one stack theirs");
  eq(hex(encodeMessage(decodeMessage(unhex(t("80", "81" + one))))), t("80", "81" + one), "re-encoded");
  const eight = "88" + one.repeat(8);
  eq((decodeMessage(unhex(t(eight, eight))) as { mine: unknown[] }).mine.length, 8, "eight stacks a side");
  const cases: [string, string, number][] = [
    ["nine stacks mine", t("89" + one.repeat(9), "80"), Code.MALFORMED],
    ["nine stacks theirs", t("80", "89" + one.repeat(9)), Code.MALFORMED],
    ["a trade of seven fields", "8307181a" + "87" + "010203" + "80" + "80" + "0000", Code.MALFORMED],
    ["an offered stack of one field", t("81" + "8100", "80"), Code.MALFORMED],
    ["an offered stack whose slot exceeds 8 bits", t("81" + "82" + "190100" + "83010e05", "80"), Code.MALFORMED],
    ["an offered stack of two fields", t("81" + "82" + "00" + "82010e", "80"), Code.MALFORMED],
    ["a rev past 16 bits", "8307181a" + "88" + "01" + "02" + "1a00010000" + "80" + "80" + "000000", Code.MALFORMED],
    ["a reason past 16 bits", t("80", "80", "0000" + "1a00010000"), Code.MALFORMED],
    ["a trade of version 5", "8305181a" + "88" + "010203" + "80" + "80" + "000000", Code.VERSION_UNSUPPORTED],
  ];
  for (const [name, h, code] of cases) {
    const e = throws(() => decodeMessage(unhex(h)), MalformedError, name);
    eq(e.code, code, `${name}: code`);
  }
});
