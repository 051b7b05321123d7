/**
 * The codec: every message of the protocol to and from its CBOR bytes,
 * on cbor-x. Bodies are positional arrays (docs/protocol.md, "Schema");
 * decoding checks the protocol's decoding rules first (strict.ts), then
 * the body's shape and every field's range. A short snapshot is no
 * envelope but one byte string ("Short snapshots"), read here by hand.
 *
 * @module
 */

import { Decoder, Encoder } from "cbor-x";

import { Code } from "./codes.js";
import {
  type Amount,
  type Cell,
  type CreatureKind,
  FLOW_TARGET,
  FLOW_UNREACHED,
  MAX_FLOW_SIDE,
  type ItemKind,
  type Message,
  INVENTORY_SLOTS,
  MAX_OFFERED,
  MAX_RECIPES,
  MAX_RECIPE_ITEMS,
  MAX_STASH,
  MsgType,
  type Offered,
  PROTOCOL_VERSION,
  type Plot,
  type PresencePlayer,
  type Recipe,
  type RecipeItem,
  type ShortSnapshot,
  type Stack,
  type StaticObject,
} from "./protocol.js";
import { MAX_CLIENT_MESSAGE, MAX_SERVER_MESSAGE, MalformedError, checkStrict } from "./strict.js";

const U8 = 0xff;
const U16 = 0xffff;
const U32 = 0xffffffff;
const U64 = (1n << 64n) - 1n;
const I32_MIN = -0x80000000;
const I32_MAX = 0x7fffffff;

/** The CBOR major type of byte strings: a frame of it is a short snapshot. */
const MAJOR_BYTES = 2;

// Maps never reach cbor-x (checkStrict refuses them), nor do tags: these
// options only keep cbor-x from its own extensions.
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });
const encoder = new Encoder({ useRecords: false, tagUint8Array: false, variableMapSize: true });

/** Fields reads a body's elements in order, checking each one's type and range. */
class Fields {
  private i = 0;

  private constructor(
    private readonly a: readonly unknown[],
    private readonly what: string,
  ) {}

  /** of checks that body is an array of exactly n elements. */
  static of(body: unknown, n: number, what: string): Fields {
    if (!Array.isArray(body)) throw new MalformedError(`${what}: the body is not an array`);
    if (body.length !== n) {
      throw new MalformedError(`${what}: ${body.length} fields; want ${n}`);
    }
    return new Fields(body, what);
  }

  private next(): unknown {
    return this.a[this.i++];
  }

  private fail(want: string): never {
    throw new MalformedError(`${this.what}: field ${this.i - 1} is not ${want}`);
  }

  /** uint reads an unsigned integer of at most max (at most 2^53 - 1). */
  uint(max: number): number {
    return asUint(this.next(), max, `${this.what}: field ${this.i - 1}`);
  }

  /** u64 reads an unsigned 64-bit integer. */
  u64(): bigint {
    const v = this.next();
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) return BigInt(v);
    if (typeof v === "bigint" && v >= 0n && v <= U64) return v;
    return this.fail("an unsigned 64-bit integer");
  }

  /** int32 reads a signed 32-bit integer. */
  int32(): number {
    const v = this.next();
    if (typeof v === "number" && Number.isInteger(v) && v >= I32_MIN && v <= I32_MAX) return v;
    if (typeof v === "bigint" && v >= BigInt(I32_MIN) && v <= BigInt(I32_MAX)) return Number(v);
    return this.fail("a 32-bit integer");
  }

  /** text reads a text string (its length and UTF-8 are checked by checkStrict). */
  text(): string {
    const v = this.next();
    return typeof v === "string" ? v : this.fail("text");
  }

  /** bytes reads a byte string. */
  bytes(): Uint8Array {
    const v = this.next();
    return v instanceof Uint8Array ? v : this.fail("a byte string");
  }

  /** array reads an array of any length (checkStrict bounds it). */
  array(): unknown[] {
    const v = this.next();
    return Array.isArray(v) ? (v as unknown[]) : this.fail("an array");
  }
}

/**
 * asUint returns v as an unsigned integer of at most max, or throws. cbor-x
 * gives a bigint for a 64-bit head, which a longer form of a small value
 * also has: decoders accept longer integer forms.
 */
function asUint(v: unknown, max: number, what: string): number {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= max) return v;
  if (typeof v === "bigint" && v >= 0n && v <= BigInt(max)) return Number(v);
  throw new MalformedError(`${what} is not an unsigned integer up to ${max}`);
}

const cell = (v: unknown, what: string): Cell => {
  const f = Fields.of(v, 2, what);
  return { x: f.int32(), y: f.int32() };
};

const object = (v: unknown): StaticObject => {
  const f = Fields.of(v, 7, "static object");
  return {
    id: f.uint(U32),
    kind: f.uint(U16),
    x: f.int32(),
    y: f.int32(),
    state: f.uint(U8),
    text: f.text(),
    item: f.uint(U16),
  };
};

const itemKind = (v: unknown): ItemKind => {
  const f = Fields.of(v, 11, "item kind");
  return {
    code: f.uint(U16),
    name: f.text(),
    label: f.text(),
    stack: f.uint(U16),
    slot: f.uint(U8),
    flags: f.uint(U8),
    look: f.uint(U16),
    container: f.uint(U8),
    station: f.text(),
    becomes: f.uint(U16),
    grows: f.uint(U32),
  };
};

const amount = (v: unknown, what: string): Amount => {
  const f = Fields.of(v, 2, what);
  return { kind: f.uint(U16), count: f.uint(U16) };
};

const recipeItem = (v: unknown): RecipeItem => amount(v, "recipe item");

const price = (v: unknown): Amount => amount(v, "price");

const recipeItems = (a: unknown[], what: string): RecipeItem[] => {
  if (a.length > MAX_RECIPE_ITEMS) throw new MalformedError(`recipe: ${a.length} ${what}; at most ${MAX_RECIPE_ITEMS}`);
  return a.map(recipeItem);
};

const recipe = (v: unknown): Recipe => {
  const f = Fields.of(v, 6, "recipe");
  return {
    code: f.uint(U16),
    name: f.text(),
    station: f.text(),
    inputs: recipeItems(f.array(), "inputs"),
    outputs: recipeItems(f.array(), "outputs"),
    seconds: f.uint(U32),
  };
};

const stack = (v: unknown): Stack => {
  const f = Fields.of(v, 3, "stack");
  return { id: f.u64(), kind: f.uint(U16), count: f.uint(U16) };
};

const offered = (v: unknown): Offered => {
  const f = Fields.of(v, 2, "offered");
  return { slot: f.uint(U8), stack: stack(f.array()) };
};

const side = (a: unknown[], which: string): Offered[] => {
  if (a.length > MAX_OFFERED) throw new MalformedError(`trade: ${a.length} stacks ${which}; at most ${MAX_OFFERED}`);
  return a.map(offered);
};

const plot = (v: unknown): Plot => {
  const f = Fields.of(v, 4, "plot");
  return { x: f.int32(), y: f.int32(), w: f.uint(U16), h: f.uint(U16) };
};

const creatureKind = (v: unknown): CreatureKind => {
  const f = Fields.of(v, 2, "creature kind");
  return { name: f.text(), hp: f.uint(U16) };
};

const player = (v: unknown): PresencePlayer => {
  const f = Fields.of(v, 2, "presence player");
  return { entity: f.uint(U32), name: f.text() };
};

/**
 * decodeMessage decodes one message, of either direction. It throws a
 * {@link MalformedError} for anything else: bytes outside the decoding
 * rules, a body of the wrong shape, a field out of range, a type this
 * side does not know (code UNKNOWN_TYPE), an envelope of another version
 * than 7 on a message other than hello, hello_ack and error, whose shapes
 * are frozen across versions (code VERSION_UNSUPPORTED).
 *
 * A frame that is a byte string (its first byte 0x40 to 0x5f) is a short
 * snapshot: it decodes to a {@link ShortSnapshot}, which the receiver
 * expands against the snapshot its connection received before it
 * (expandShortSnapshot). Its length head must be definite (a longer form
 * than needed is accepted, as for every integer), nothing may follow the
 * byte string, and it must hold at least its tick and ack bytes.
 *
 * The returned snapshot's `records` may share memory with b.
 */
export function decodeMessage(b: Uint8Array, maxSize = MAX_SERVER_MESSAGE): Message {
  if (b.length > 0 && (b[0] as number) >> 5 === MAJOR_BYTES) return decodeShortSnapshot(b, maxSize);
  checkStrict(b, maxSize);
  let env: unknown;
  try {
    env = decoder.decode(b) as unknown;
  } catch (e) {
    throw new MalformedError(`cbor: ${e instanceof Error ? e.message : String(e)}`);
  }
  const head = Fields.of(env, 3, "envelope");
  const v = head.uint(U16);
  const t = head.uint(U8);
  const body = (env as unknown[])[2];
  const frozen = t === MsgType.hello || t === MsgType.helloAck || t === MsgType.error;
  if (!frozen && v !== PROTOCOL_VERSION && isKnown(t)) {
    throw new MalformedError(`version ${v}; this client speaks ${PROTOCOL_VERSION}`, Code.VERSION_UNSUPPORTED);
  }
  switch (t) {
    case MsgType.hello: {
      const f = Fields.of(body, 3, "hello");
      const grant = f.text();
      const joinId = f.u64();
      const versions = f.array().map((x) => asUint(x, U16, "hello version"));
      if (versions.length > 16) throw new MalformedError("hello: more than 16 versions");
      return { type: "hello", grant, joinId, versions };
    }
    case MsgType.resume: {
      const f = Fields.of(body, 2, "resume");
      return { type: "resume", token: f.text(), joinId: f.u64() };
    }
    case MsgType.intent: {
      const f = Fields.of(body, 5, "intent");
      const seq = f.uint(U32);
      const kind = f.uint(U8);
      const dir = f.uint(U8);
      const target = cell(f.array(), "intent target");
      const s = Fields.of(f.array(), 3, "intent item");
      return { type: "intent", seq, kind, dir, target, item: { from: s.uint(U8), to: s.uint(U8), count: s.uint(U16) } };
    }
    case MsgType.helloAck: {
      const f = Fields.of(body, 6, "hello_ack");
      return {
        type: "hello_ack",
        joinId: f.u64(),
        entity: f.uint(U32),
        tick: f.uint(Number.MAX_SAFE_INTEGER),
        area: f.uint(U32),
        resumeToken: f.text(),
        version: f.uint(U16),
      };
    }
    case MsgType.error: {
      const f = Fields.of(body, 4, "error");
      return { type: "error", code: f.uint(U16), refSeq: f.uint(U32), joinId: f.u64(), detail: f.text() };
    }
    case MsgType.rehello: {
      const f = Fields.of(body, 2, "rehello");
      return { type: "rehello", code: f.uint(U16), detail: f.text() };
    }
    case MsgType.intentResult: {
      const f = Fields.of(body, 2, "intent_result");
      return { type: "intent_result", seq: f.uint(U32), code: f.uint(U16) };
    }
    case MsgType.snapshot: {
      const f = Fields.of(body, 4, "snapshot");
      return {
        type: "snapshot",
        tick: f.uint(Number.MAX_SAFE_INTEGER),
        ackSeq: f.uint(U32),
        flags: f.uint(U8),
        records: f.bytes(),
      };
    }
    case MsgType.static: {
      const f = Fields.of(body, 4, "static");
      const c = f.uint(U32);
      const version = f.uint(U32);
      const floor = f.array().map((x) => asUint(x, U32, "static floor"));
      return { type: "static", cell: c, version, floor, objects: f.array().map(object) };
    }
    case MsgType.presence: {
      const f = Fields.of(body, 2, "presence");
      return { type: "presence", area: f.uint(U32), players: f.array().map(player) };
    }
    case MsgType.areaClosing: {
      const f = Fields.of(body, 2, "area_closing");
      return { type: "area_closing", reason: f.uint(U16), graceMs: f.uint(U32) };
    }
    case MsgType.takenOver:
      Fields.of(body, 0, "taken_over");
      return { type: "taken_over" };
    case MsgType.leave:
      Fields.of(body, 0, "leave");
      return { type: "leave" };
    case MsgType.watch:
      return { type: "watch", entity: Fields.of(body, 1, "watch").uint(U32) };
    case MsgType.left:
      Fields.of(body, 0, "left");
      return { type: "left" };
    case MsgType.flow: {
      const f = Fields.of(body, 7, "flow");
      const m = { type: "flow" as const, creature: f.uint(U32), target: f.uint(U32), x: f.int32(), y: f.int32(), w: f.uint(U16), h: f.uint(U16), dirs: f.bytes() };
      if (m.w > MAX_FLOW_SIDE || m.h > MAX_FLOW_SIDE || m.dirs.length !== m.w * m.h || m.dirs.some((d) => d > FLOW_TARGET && d !== FLOW_UNREACHED)) {
        throw new MalformedError("flow: the window and its directions disagree");
      }
      return m;
    }
    case MsgType.portalBlocked:
      return { type: "portal_blocked", reason: Fields.of(body, 1, "portal_blocked").uint(U16) };
    case MsgType.portalTransferRejected:
      return {
        type: "portal_transfer_rejected",
        reason: Fields.of(body, 1, "portal_transfer_rejected").uint(U16),
      };
    case MsgType.portalMoved: {
      const f = Fields.of(body, 4, "portal_moved");
      return { type: "portal_moved", area: f.uint(U32), wsUrl: f.text(), grant: f.text(), joinId: f.u64() };
    }
    case MsgType.inventory: {
      const f = Fields.of(body, 2, "inventory");
      const slots = f.array().map(stack);
      if (slots.length !== INVENTORY_SLOTS) throw new MalformedError(`inventory: ${slots.length} slots; want ${INVENTORY_SLOTS}`);
      const stash = f.array().map(stack);
      if (stash.length > MAX_STASH) throw new MalformedError(`inventory: ${stash.length} stacks stashed; at most ${MAX_STASH}`);
      return { type: "inventory", slots, stash };
    }
    case MsgType.container: {
      const f = Fields.of(body, 6, "container");
      const x = f.int32();
      const y = f.int32();
      const slots = f.array().map(stack);
      const prices = f.array().map(price);
      if (prices.length > slots.length) throw new MalformedError(`container: ${prices.length} prices for ${slots.length} slots`);
      return { type: "container", x, y, slots, prices, flags: f.uint(U8), ready: f.uint(Number.MAX_SAFE_INTEGER) };
    }
    case MsgType.trade: {
      const f = Fields.of(body, 8, "trade");
      return {
        type: "trade",
        id: f.uint(U32),
        with: f.uint(U32),
        rev: f.uint(U16),
        mine: side(f.array(), "mine"),
        theirs: side(f.array(), "theirs"),
        confirmed: f.uint(U8),
        status: f.uint(U8),
        reason: f.uint(U16),
      };
    }
    case MsgType.recipes: {
      const a = Fields.of(body, 1, "recipes").array();
      if (a.length > MAX_RECIPES) throw new MalformedError(`recipes: ${a.length} recipes; at most ${MAX_RECIPES}`);
      return { type: "recipes", known: a.map(recipe) };
    }
    case MsgType.areaInfo: {
      const f = Fields.of(body, 16, "area_info");
      return {
        type: "area_info",
        area: f.uint(U32),
        kind: f.text(),
        w: f.uint(U32),
        h: f.uint(U32),
        cellSize: f.uint(U16),
        tickHz: f.uint(U16),
        snapshotHz: f.uint(U16),
        stepMs: f.uint(U32),
        queueLen: f.uint(U8),
        interestRadius: f.uint(U16),
        resumeGraceMs: f.uint(U32),
        rules: f.uint(U8),
        playerHp: f.uint(U16),
        creatures: f.array().map(creatureKind),
        items: f.array().map(itemKind),
        plots: f.array().map(plot),
      };
    }
    default:
      throw new MalformedError(`unknown message type ${t}`, Code.UNKNOWN_TYPE);
  }
}

/** headSize is the size of the shortest CBOR head whose argument is n. */
function headSize(n: number): number {
  return n < 24 ? 1 : n <= U8 ? 2 : n <= U16 ? 3 : n <= U32 ? 5 : 9;
}

/**
 * decodeShortSnapshot decodes a frame that is a byte string: a short
 * snapshot (docs/protocol.md, "Short snapshots"). Its records share
 * memory with b.
 */
function decodeShortSnapshot(b: Uint8Array, maxSize: number): ShortSnapshot {
  // One definite-length byte string and nothing after it, within maxSize.
  checkStrict(b, maxSize);
  const ai = (b[0] as number) & 31;
  const at = ai < 24 ? 1 : 1 + (1 << (ai - 24));
  const n = b.length - at;
  if (n < 2) throw new MalformedError(`short snapshot of ${n} bytes: shorter than its tick and ack bytes`);
  return { type: "short_snapshot", tick8: b[at] as number, ack8: b[at + 1] as number, records: b.subarray(at + 2) };
}

/**
 * encodeShortSnapshot encodes a short snapshot: the byte string's head
 * (its shortest form), the tick's and ack_seq's low bytes, the records.
 */
function encodeShortSnapshot(m: ShortSnapshot): Uint8Array {
  checkUint(m.tick8, U8, "tick8");
  checkUint(m.ack8, U8, "ack8");
  const n = m.records.length + 2;
  const at = headSize(n);
  const out = new Uint8Array(at + n);
  const dv = new DataView(out.buffer);
  switch (at) {
    case 1:
      out[0] = (MAJOR_BYTES << 5) | n;
      break;
    case 2:
      out[0] = (MAJOR_BYTES << 5) | 24;
      out[1] = n;
      break;
    case 3:
      out[0] = (MAJOR_BYTES << 5) | 25;
      dv.setUint16(1, n);
      break;
    default:
      out[0] = (MAJOR_BYTES << 5) | 26;
      dv.setUint32(1, n);
  }
  out[at] = m.tick8;
  out[at + 1] = m.ack8;
  out.set(m.records, at + 2);
  return out;
}

function isKnown(t: number): boolean {
  return Object.values(MsgType).includes(t as (typeof MsgType)[keyof typeof MsgType]);
}

/**
 * decodeClientMessage decodes a message a client sent, as a server (or a
 * test standing in for one) reads it: at most 64 KiB.
 */
export function decodeClientMessage(b: Uint8Array): Message {
  return decodeMessage(b, MAX_CLIENT_MESSAGE);
}

// uint64 is an unsigned 64-bit field as cbor-x must be given it: cbor-x
// writes numbers past 2^32 as floats, and bigints always in 8 bytes, so a
// value that fits 32 bits goes as a number (its shortest form) and a
// larger one as a bigint (8 bytes, its shortest form past 2^32).
function uint64(v: bigint | number): number | bigint {
  const b = BigInt(v);
  if (b < 0n || b > U64) throw new RangeError(`uint64 out of range: ${b}`);
  return b <= BigInt(U32) ? Number(b) : b;
}

function checkUint(v: number, max: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`${what} out of range: ${v}`);
  return v;
}

function checkInt32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < I32_MIN || v > I32_MAX) throw new RangeError(`${what} out of range: ${v}`);
  return v;
}

/** stackBody is a stack as the wire carries it. */
function stackBody(s: Stack): unknown[] {
  return [uint64(s.id), s.kind, s.count];
}

/** amountBody is an amount (a recipe's line, a price) as the wire carries it. */
function amountBody(a: Amount): unknown[] {
  return [a.kind, a.count];
}

/** offeredBody is a trade side's stack as the wire carries it. */
function offeredBody(o: Offered): unknown[] {
  return [o.slot, stackBody(o.stack)];
}

/** body returns the envelope's type number and the body of m, ranges checked. */
function body(m: Exclude<Message, ShortSnapshot>): [number, unknown[]] {
  switch (m.type) {
    case "hello":
      return [MsgType.hello, [m.grant, uint64(m.joinId), m.versions.map((v) => checkUint(v, U16, "version"))]];
    case "resume":
      return [MsgType.resume, [m.token, uint64(m.joinId)]];
    case "intent":
      return [
        MsgType.intent,
        [
          checkUint(m.seq, U32, "seq"),
          checkUint(m.kind, U8, "kind"),
          checkUint(m.dir, U8, "dir"),
          [checkInt32(m.target.x, "target x"), checkInt32(m.target.y, "target y")],
          [checkUint(m.item.from, U8, "item from"), checkUint(m.item.to, U8, "item to"), checkUint(m.item.count, U16, "item count")],
        ],
      ];
    case "hello_ack":
      return [
        MsgType.helloAck,
        [uint64(m.joinId), m.entity, uint64(m.tick), m.area, m.resumeToken, m.version],
      ];
    case "error":
      return [MsgType.error, [m.code, m.refSeq, uint64(m.joinId), m.detail]];
    case "rehello":
      return [MsgType.rehello, [m.code, m.detail]];
    case "intent_result":
      return [MsgType.intentResult, [m.seq, m.code]];
    case "snapshot":
      return [MsgType.snapshot, [uint64(m.tick), m.ackSeq, m.flags, m.records]];
    case "static":
      return [
        MsgType.static,
        [m.cell, m.version, m.floor, m.objects.map((o) => [o.id, o.kind, o.x, o.y, o.state, o.text, o.item])],
      ];
    case "presence":
      return [MsgType.presence, [m.area, m.players.map((p) => [p.entity, p.name])]];
    case "area_closing":
      return [MsgType.areaClosing, [m.reason, m.graceMs]];
    case "taken_over":
      return [MsgType.takenOver, []];
    case "leave":
      return [MsgType.leave, []];
    case "watch":
      return [MsgType.watch, [m.entity]];
    case "left":
      return [MsgType.left, []];
    case "flow":
      return [MsgType.flow, [m.creature, m.target, m.x, m.y, m.w, m.h, m.dirs]];
    case "portal_blocked":
      return [MsgType.portalBlocked, [m.reason]];
    case "portal_transfer_rejected":
      return [MsgType.portalTransferRejected, [m.reason]];
    case "portal_moved":
      return [MsgType.portalMoved, [m.area, m.wsUrl, m.grant, uint64(m.joinId)]];
    case "area_info":
      return [
        MsgType.areaInfo,
        [
          m.area,
          m.kind,
          m.w,
          m.h,
          m.cellSize,
          m.tickHz,
          m.snapshotHz,
          m.stepMs,
          m.queueLen,
          m.interestRadius,
          m.resumeGraceMs,
          m.rules,
          m.playerHp,
          m.creatures.map((c) => [c.name, c.hp]),
          m.items.map((k) => [k.code, k.name, k.label, k.stack, k.slot, k.flags, k.look, k.container, k.station, k.becomes, k.grows]),
          m.plots.map((p) => [p.x, p.y, p.w, p.h]),
        ],
      ];
    case "inventory":
      return [MsgType.inventory, [m.slots.map(stackBody), m.stash.map(stackBody)]];
    case "container":
      return [MsgType.container, [m.x, m.y, m.slots.map(stackBody), m.prices.map(amountBody), m.flags, uint64(m.ready)]];
    case "recipes":
      return [
        MsgType.recipes,
        [m.known.map((r) => [r.code, r.name, r.station, r.inputs.map(amountBody), r.outputs.map(amountBody), r.seconds])],
      ];
    case "trade":
      return [
        MsgType.trade,
        [m.id, m.with, m.rev, m.mine.map(offeredBody), m.theirs.map(offeredBody), m.confirmed, m.status, m.reason],
      ];
  }
}

/**
 * encodeMessage encodes m in the protocol's deterministic form (definite
 * lengths, every integer in its shortest form), in a fresh buffer. Client
 * messages are what a client sends; the server's are encoded too, for
 * tests and tools that stand in for a server (a {@link ShortSnapshot} as
 * its byte string, not an envelope). It throws a RangeError for a field
 * out of its range.
 */
export function encodeMessage(m: Message): Uint8Array {
  if (m.type === "short_snapshot") return encodeShortSnapshot(m);
  const [t, b] = body(m);
  // encode returns a view of cbor-x's shared buffer: copy it out.
  return Uint8Array.from(encoder.encode([PROTOCOL_VERSION, t, b]) as Uint8Array);
}
