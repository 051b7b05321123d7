/**
 * Interpolation of other entities between snapshots. Bodies move a square
 * at a time, at most one step each `area_info.step_ms`, while snapshots
 * come every `1000 / snapshot_hz` ms; so each new square a snapshot shows
 * is slid to from where the entity is drawn at that moment, over one step
 * period. A body walking at full pace is drawn in continuous motion; a
 * jump of more than one square (a position record, a portal) is drawn at
 * once rather than slid across.
 *
 * @module
 */

/** A drawn position, in squares (fractional while sliding). */
export interface Point {
  x: number;
  y: number;
}

interface Track {
  fromX: number;
  fromY: number;
  toX: number;
  toY: number;
  start: number;
}

/**
 * Interpolator holds the slides of entities. It belongs to one session;
 * observe and position are O(1).
 */
export class Interpolator {
  private readonly tracks = new Map<number, Track>();

  /** durationMs is how long a slide of one square takes: the Area's step_ms suits. */
  constructor(public durationMs = 200) {}

  /** observe records that a snapshot applied at time t (ms) shows entity id on (x, y). */
  observe(id: number, x: number, y: number, t: number): void {
    const tr = this.tracks.get(id);
    if (tr === undefined) {
      this.tracks.set(id, { fromX: x, fromY: y, toX: x, toY: y, start: t });
      return;
    }
    if (tr.toX === x && tr.toY === y) return;
    const cur = this.at(tr, t);
    if (Math.max(Math.abs(cur.x - x), Math.abs(cur.y - y)) > 1.5) {
      tr.fromX = x;
      tr.fromY = y;
    } else {
      tr.fromX = cur.x;
      tr.fromY = cur.y;
    }
    tr.toX = x;
    tr.toY = y;
    tr.start = t;
  }

  /** retain forgets every entity whose id is not in ids. */
  retain(ids: { has(id: number): boolean }): void {
    for (const id of this.tracks.keys()) if (!ids.has(id)) this.tracks.delete(id);
  }

  /** clear forgets everything (a new Area, a new view). */
  clear(): void {
    this.tracks.clear();
  }

  /** position returns where to draw entity id at time now, or undefined for one never observed. */
  position(id: number, now: number): Point | undefined {
    const tr = this.tracks.get(id);
    return tr === undefined ? undefined : this.at(tr, now);
  }

  private at(tr: Track, now: number): Point {
    const f = this.durationMs <= 0 ? 1 : Math.min(Math.max((now - tr.start) / this.durationMs, 0), 1);
    return { x: tr.fromX + (tr.toX - tr.fromX) * f, y: tr.fromY + (tr.toY - tr.fromY) * f };
  }
}
