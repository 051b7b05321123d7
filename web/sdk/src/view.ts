/**
 * A client's view of an Area, kept exactly as docs/protocol.md says a
 * client keeps it (the TypeScript twin of the Go reference `net/view`):
 * the Area's geometry and rules from area_info, the map of each cell from
 * static, who is there from presence, and the entities from the
 * snapshots' records.
 *
 * @module
 */

import {
  type AreaInfo,
  type CreatureKind,
  type ItemKind,
  DIR_DELTA,
  EntityKind,
  type Presence,
  SNAPSHOT_RESET,
  type ServerMessage,
  type Snapshot,
  type Static,
  type StaticObject,
} from "./protocol.js";
import { type EntityState, type SnapshotRecord, readRecords } from "./records.js";

/**
 * ViewError: a message broke the protocol's rules for a view (a record of
 * an entity the view does not hold, a cell beyond the Area, a snapshot
 * before area_info). After one from a snapshot the view is not to be
 * trusted: the protocol says to join again.
 */
export class ViewError extends Error {
  override readonly name = "ViewError";
}

/** A cell's map, decoded: the floor kind of each of its squares, row by row. */
export interface CellMap {
  readonly cell: number;
  readonly version: number;
  /** The cell's top-left square and its size in squares (edge cells may be smaller). */
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  /** Floor kinds ({@link Floor}), `floor[(y - this.y) * w + (x - this.x)]`. */
  readonly floor: Uint8Array;
  /** The cell's static objects, one per square at most. */
  readonly objects: readonly StaticObject[];
}

/**
 * AreaView is one client's view of one Area. It belongs to one session;
 * methods run in microseconds for views of hundreds of entities (a
 * snapshot costs a pass over its records and one over the entities).
 */
export class AreaView {
  /** The last area_info; null before one. */
  info: AreaInfo | null = null;
  /** The last snapshot's tick and ack_seq. */
  tick = 0;
  ackSeq = 0;
  /** The entities in view, by id. */
  readonly entities = new Map<number, EntityState>();
  /** The cells the view holds. */
  readonly held = new Set<number>();
  /** The maps of the cells, by cell (kept when a cell leaves the view). */
  readonly maps = new Map<number, CellMap>();
  /** The bound players' names, by entity (the last presence). */
  readonly players = new Map<number, string>();
  /**
   * The entities the last snapshot's gone records removed: they left the
   * world (a creature killed, a player gone from the Area), not the view.
   */
  gone: number[] = [];

  private across = 0;
  private down = 0;

  /** reset forgets everything: the view of a new Area starts empty. */
  reset(): void {
    this.info = null;
    this.tick = 0;
    this.ackSeq = 0;
    this.gone = [];
    this.entities.clear();
    this.held.clear();
    this.maps.clear();
    this.players.clear();
    this.across = 0;
    this.down = 0;
  }

  /**
   * apply applies one server message; those that do not change the view
   * (errors, intent results, ...) are ignored. It throws a
   * {@link ViewError} or a MalformedError (records that do not decode).
   * A short snapshot is a ViewError: what it stands for depends on the
   * connection it came on, which the view does not know; expand it first
   * (expandShortSnapshot) and apply the snapshot it makes.
   */
  apply(m: ServerMessage): void {
    switch (m.type) {
      case "short_snapshot":
        throw new ViewError("a short snapshot, not expanded against its connection's last snapshot");
      case "area_info":
        this.applyAreaInfo(m);
        return;
      case "static":
        this.applyStatic(m);
        return;
      case "presence":
        this.applyPresence(m);
        return;
      case "snapshot":
        this.applySnapshot(m);
        return;
      default:
        return;
    }
  }

  /** applyAreaInfo takes the Area's geometry; a different Area resets the view first. */
  applyAreaInfo(m: AreaInfo): void {
    if (m.w === 0 || m.h === 0 || m.cellSize === 0) {
      throw new ViewError(`area_info with size ${m.w}x${m.h} and cells of ${m.cellSize}`);
    }
    if (this.info !== null && this.info.area !== m.area) this.reset();
    this.info = m;
    this.across = Math.ceil(m.w / m.cellSize);
    this.down = Math.ceil(m.h / m.cellSize);
  }

  /** applyStatic replaces the map of one cell. */
  applyStatic(m: Static): void {
    const info = this.requireInfo();
    if (m.cell >= this.cells()) throw new ViewError(`static for cell ${m.cell} of ${this.cells()}`);
    const cs = info.cellSize;
    const x = (m.cell % this.across) * cs;
    const y = Math.floor(m.cell / this.across) * cs;
    const w = Math.min(cs, info.w - x);
    const h = Math.min(cs, info.h - y);
    const floor = new Uint8Array(w * h);
    let at = 0;
    for (let i = 0; i + 1 < m.floor.length; i += 2) {
      const kind = m.floor[i] as number;
      const count = m.floor[i + 1] as number;
      if (kind > 0xff || at + count > floor.length) {
        throw new ViewError(`static of cell ${m.cell}: runs past its ${floor.length} squares`);
      }
      floor.fill(kind, at, at + count);
      at += count;
    }
    if (m.floor.length % 2 !== 0 || at !== floor.length) {
      throw new ViewError(`static of cell ${m.cell}: runs cover ${at} of ${floor.length} squares`);
    }
    this.maps.set(m.cell, { cell: m.cell, version: m.version, x, y, w, h, floor, objects: m.objects });
  }

  /** applyPresence replaces the list of bound players. */
  applyPresence(m: Presence): void {
    this.players.clear();
    for (const p of m.players) this.players.set(p.entity, p.name);
  }

  /**
   * applySnapshot applies a snapshot: a reset drops the view first; the
   * records apply in order; then every entity standing in a cell the view
   * does not hold is dropped. Records are decoded whole before anything
   * changes, so a snapshot whose records do not decode changes nothing.
   */
  applySnapshot(s: Snapshot): void {
    this.requireInfo();
    const records = readRecords(s.records);
    if ((s.flags & SNAPSHOT_RESET) !== 0) {
      this.entities.clear();
      this.held.clear();
    }
    this.tick = s.tick;
    this.ackSeq = s.ackSeq;
    this.gone = [];
    for (const r of records) this.record(r);
    for (const [id, e] of this.entities) {
      if (!this.held.has(this.cellOf(e.x, e.y))) this.entities.delete(id);
    }
  }

  private record(r: SnapshotRecord): void {
    switch (r.op) {
      case "step": {
        const e = this.known(r.id, "step");
        const [dx, dy] = DIR_DELTA[r.dir] as readonly [number, number];
        const x = e.x + dx;
        const y = e.y + dy;
        this.checkOnGrid(x, y, `${r.id} stepped`);
        this.entities.set(r.id, { ...e, x, y, facing: r.dir });
        return;
      }
      case "pos": {
        const e = this.known(r.id, "position");
        this.checkOnGrid(r.x, r.y, `${r.id} placed`);
        this.entities.set(r.id, { ...e, x: r.x, y: r.y });
        return;
      }
      case "gone":
        this.known(r.id, "gone");
        this.entities.delete(r.id);
        this.gone.push(r.id);
        return;
      case "state": {
        const e = this.known(r.id, "state");
        this.entities.set(r.id, { ...e, hp: r.hp, flags: r.flags, facing: r.facing });
        return;
      }
      case "enter":
        this.checkOnGrid(r.entity.x, r.entity.y, `${r.entity.id} entered`);
        this.entities.set(r.entity.id, { ...r.entity });
        return;
      case "cell":
        this.checkCell(r.cell, "cell");
        this.dropCell(r.cell);
        this.held.add(r.cell);
        for (const e of r.entities) {
          this.checkOnGrid(e.x, e.y, `${e.id} entered`);
          this.entities.set(e.id, { ...e });
        }
        return;
      case "forget":
        this.checkCell(r.cell, "forget");
        this.dropCell(r.cell);
        this.held.delete(r.cell);
        return;
    }
  }

  private requireInfo(): AreaInfo {
    if (this.info === null) throw new ViewError("a snapshot or static before area_info");
    return this.info;
  }

  private known(id: number, what: string): EntityState {
    const e = this.entities.get(id);
    if (e === undefined) throw new ViewError(`${what} of entity ${id}, which the view does not hold`);
    return e;
  }

  private checkOnGrid(x: number, y: number, what: string): void {
    if (!this.onGrid(x, y)) throw new ViewError(`${what} off the grid, to (${x}, ${y})`);
  }

  private checkCell(c: number, what: string): void {
    if (c >= this.cells()) throw new ViewError(`${what} of cell ${c}, beyond the Area's ${this.cells()}`);
  }

  private dropCell(c: number): void {
    for (const [id, e] of this.entities) {
      if (this.cellOf(e.x, e.y) === c) this.entities.delete(id);
    }
  }

  /** cells returns the Area's number of cells (0 before area_info). */
  cells(): number {
    return this.across * this.down;
  }

  /** cellOf returns the cell of square (x, y). */
  cellOf(x: number, y: number): number {
    const cs = this.info?.cellSize ?? 1;
    return Math.floor(y / cs) * this.across + Math.floor(x / cs);
  }

  /** onGrid reports whether (x, y) is a square of the Area. */
  onGrid(x: number, y: number): boolean {
    const i = this.info;
    return i !== null && x >= 0 && y >= 0 && x < i.w && y < i.h;
  }

  /** floorAt returns the floor kind of square (x, y), or undefined while its cell's map is unknown. */
  floorAt(x: number, y: number): number | undefined {
    if (!this.onGrid(x, y)) return undefined;
    const m = this.maps.get(this.cellOf(x, y));
    return m === undefined ? undefined : m.floor[(y - m.y) * m.w + (x - m.x)];
  }

  /** objectsAt returns the static objects on square (x, y) that the view's maps know. */
  objectsAt(x: number, y: number): StaticObject[] {
    if (!this.onGrid(x, y)) return [];
    const m = this.maps.get(this.cellOf(x, y));
    return m === undefined ? [] : m.objects.filter((o) => o.x === x && o.y === y);
  }

  /**
   * objectAt returns the first static object on square (x, y) the view's
   * map lists (a square holds at most two: a floor tile and what stands
   * on it; objectsAt returns both), or undefined for none or a cell whose
   * map has not come.
   */
  objectAt(x: number, y: number): StaticObject | undefined {
    if (!this.onGrid(x, y)) return undefined;
    return this.maps.get(this.cellOf(x, y))?.objects.find((o) => o.x === x && o.y === y);
  }

  /** itemKind returns the item kind of code (`area_info.items`), or undefined for 0 or an unknown code. */
  itemKind(code: number): ItemKind | undefined {
    return code > 0 ? this.info?.items.find((k) => k.code === code) : undefined;
  }

  /**
   * creatureKind returns the creature kind a look names
   * (`area_info.creatures[look - 1]`), or undefined for 0, a look beyond
   * the list, or before area_info.
   */
  creatureKind(look: number): CreatureKind | undefined {
    return look > 0 ? this.info?.creatures[look - 1] : undefined;
  }

  /**
   * fullHp returns an entity's full health: `area_info.player_hp` for a
   * player, its kind's `hp` for a creature, and 0 when it has none (a
   * creature of no listed kind, or before area_info).
   */
  fullHp(e: Pick<EntityState, "kind" | "look">): number {
    if (e.kind === EntityKind.Player) return this.info?.playerHp ?? 0;
    if (e.kind === EntityKind.Creature) return this.creatureKind(e.look)?.hp ?? 0;
    return 0;
  }

  /** entityAt returns an entity in view standing on (x, y), if any. */
  entityAt(x: number, y: number, except?: number): EntityState | undefined {
    for (const e of this.entities.values()) {
      if (e.x === x && e.y === y && e.id !== except) return e;
    }
    return undefined;
  }

  /** sorted returns the entities in view ordered by id, for comparisons. */
  sorted(): EntityState[] {
    return [...this.entities.values()].sort((a, b) => a.id - b.id);
  }
}
