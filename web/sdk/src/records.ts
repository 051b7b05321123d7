/**
 * Snapshot records: the byte layout inside `snapshot.records`, decoded by
 * hand as docs/protocol.md ("Records") lays it out. Unsigned numbers are
 * LEB128 varints (`uv`), small enums single bytes (`u8`).
 *
 * | first byte | record | then |
 * |---|---|---|
 * | 0x00..0x07 | step (direction in the low bits) | id uv |
 * | 0x08 | pos | id uv, x uv, y uv |
 * | 0x09 | gone | id uv |
 * | 0x0a | state | id uv, hp uv, flags u8, facing u8 |
 * | 0x10 | enter | entity |
 * | 0x11 | cell | cell uv, n uv, then n entities |
 * | 0x12 | forget | cell uv |
 *
 * An entity is `id uv, kind u8, look uv, x uv, y uv, facing u8, hp uv, flags u8`.
 *
 * @module
 */

import type { Dir } from "./protocol.js";
import { MalformedError } from "./strict.js";

/** Record op bytes. */
export const Op = {
  Step: 0x00,
  Pos: 0x08,
  Gone: 0x09,
  State: 0x0a,
  Enter: 0x10,
  Cell: 0x11,
  Forget: 0x12,
} as const;

/** One entity as a snapshot shows it. */
export interface EntityState {
  id: number;
  /** {@link EntityKind}: 0 player, 1 creature. */
  kind: number;
  /**
   * What a creature is: `area_info.creatures[look - 1]`; 0 for a player,
   * and for a creature of no listed kind.
   */
  look: number;
  x: number;
  y: number;
  /** A {@link Dir}. */
  facing: number;
  /** Its health, of `area_info.player_hp` (a player) or its kind's `hp` (a creature); 0: it has none. */
  hp: number;
  /** {@link EntityFlag} bits. */
  flags: number;
}

/** One decoded snapshot record. */
export type SnapshotRecord =
  | { readonly op: "step"; id: number; dir: Dir }
  | { readonly op: "pos"; id: number; x: number; y: number }
  | { readonly op: "gone"; id: number }
  | { readonly op: "state"; id: number; hp: number; flags: number; facing: number }
  | { readonly op: "enter"; entity: EntityState }
  | { readonly op: "cell"; cell: number; entities: EntityState[] }
  | { readonly op: "forget"; cell: number };

// The ranges of the varint fields, as the server's decoder holds them.
const MAX_ID = 0xffffffff;
const MAX_COORD = 0x7fffffff;
const MAX_HP = 0xffff;
const MAX_LOOK = 0xffff;
const MIN_ENTITY_BYTES = 8;

/** Reader walks a records byte string; every read throws MalformedError past its end. */
class Reader {
  private pos = 0;

  constructor(private readonly b: Uint8Array) {}

  get left(): number {
    return this.b.length - this.pos;
  }

  u8(): number {
    if (this.pos >= this.b.length) throw new MalformedError("snapshot record: truncated");
    return this.b[this.pos++] as number;
  }

  /** uv reads a LEB128 varint of at most max (at most 2^53 - 1). */
  uv(max: number): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const c = this.u8();
      v += (c & 0x7f) * scale;
      if (v > max) throw new MalformedError(`snapshot record: varint over ${max}`);
      if ((c & 0x80) === 0) return v;
      scale *= 128;
    }
    throw new MalformedError("snapshot record: varint too long");
  }

  entity(): EntityState {
    return {
      id: this.uv(MAX_ID),
      kind: this.u8(),
      look: this.uv(MAX_LOOK),
      x: this.uv(MAX_COORD),
      y: this.uv(MAX_COORD),
      facing: this.u8(),
      hp: this.uv(MAX_HP),
      flags: this.u8(),
    };
  }
}

/**
 * readRecords decodes every record of b, in order, or throws a
 * {@link MalformedError} (an unknown op, a truncated record, a varint out
 * of its field's range, a cell count beyond the bytes left). Decoding
 * everything first lets a view apply a snapshot all or nothing.
 */
export function readRecords(b: Uint8Array): SnapshotRecord[] {
  const r = new Reader(b);
  const out: SnapshotRecord[] = [];
  while (r.left > 0) {
    const op = r.u8();
    if (op <= 0x07) {
      out.push({ op: "step", dir: op as Dir, id: r.uv(MAX_ID) });
      continue;
    }
    switch (op) {
      case Op.Pos:
        out.push({ op: "pos", id: r.uv(MAX_ID), x: r.uv(MAX_COORD), y: r.uv(MAX_COORD) });
        break;
      case Op.Gone:
        out.push({ op: "gone", id: r.uv(MAX_ID) });
        break;
      case Op.State:
        out.push({ op: "state", id: r.uv(MAX_ID), hp: r.uv(MAX_HP), flags: r.u8(), facing: r.u8() });
        break;
      case Op.Enter:
        out.push({ op: "enter", entity: r.entity() });
        break;
      case Op.Cell: {
        const cell = r.uv(MAX_ID);
        const n = r.uv(MAX_COORD);
        // Each entity takes at least 8 bytes: refuse a count beyond what
        // is left before looping on it.
        if (n > Math.floor(r.left / MIN_ENTITY_BYTES)) {
          throw new MalformedError(`snapshot record: cell of ${n} entities in ${r.left} bytes`);
        }
        const entities: EntityState[] = [];
        for (let i = 0; i < n; i++) entities.push(r.entity());
        out.push({ op: "cell", cell, entities });
        break;
      }
      case Op.Forget:
        out.push({ op: "forget", cell: r.uv(MAX_ID) });
        break;
      default:
        throw new MalformedError(`snapshot record: unknown op 0x${op.toString(16)}`);
    }
  }
  return out;
}

/**
 * RecordWriter builds a records byte string, for tests and tools that
 * stand in for a server. Each method appends one record and returns the
 * writer.
 */
export class RecordWriter {
  private readonly out: number[] = [];

  private uv(v: number): void {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`varint of ${v}`);
    while (v >= 0x80) {
      this.out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.out.push(v);
  }

  private entityBody(e: EntityState): void {
    this.uv(e.id);
    this.out.push(e.kind & 0xff);
    this.uv(e.look);
    this.uv(e.x);
    this.uv(e.y);
    this.out.push(e.facing & 0xff);
    this.uv(e.hp);
    this.out.push(e.flags & 0xff);
  }

  /** step: entity id moved one square in dir. */
  step(id: number, dir: Dir): this {
    this.out.push(Op.Step | (dir & 7));
    this.uv(id);
    return this;
  }

  /** pos: entity id now stands on (x, y). */
  pos(id: number, x: number, y: number): this {
    this.out.push(Op.Pos);
    this.uv(id);
    this.uv(x);
    this.uv(y);
    return this;
  }

  /** gone: entity id left the world. */
  gone(id: number): this {
    this.out.push(Op.Gone);
    this.uv(id);
    return this;
  }

  /** state: entity id's health, flags and facing. */
  state(id: number, hp: number, flags: number, facing: number): this {
    this.out.push(Op.State);
    this.uv(id);
    this.uv(hp);
    this.out.push(flags & 0xff, facing & 0xff);
    return this;
  }

  /** enter: entity e, whole. */
  enter(e: EntityState): this {
    this.out.push(Op.Enter);
    this.entityBody(e);
    return this;
  }

  /** cell: the whole content of a cell, which is held from now on. */
  cell(cell: number, entities: readonly EntityState[]): this {
    this.out.push(Op.Cell);
    this.uv(cell);
    this.uv(entities.length);
    for (const e of entities) this.entityBody(e);
    return this;
  }

  /** forget: the cell left the view. */
  forget(cell: number): this {
    this.out.push(Op.Forget);
    this.uv(cell);
    return this;
  }

  /** bytes returns the records written so far. */
  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}
