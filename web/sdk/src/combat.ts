/**
 * Combat as a game shows it: blows (an entity's health fell) and deaths
 * (a creature left the world; a player came back elsewhere with full
 * health). Protocol version 2 has no message for either, so the session
 * infers them from what each snapshot changed ({@link inferCombat}); a
 * server that sends such events can feed the same {@link Hit} and
 * {@link Death} shapes, and a game's drawing of them stays as it is.
 *
 * @module
 */

import { DIR_DELTA, EntityKind } from "./protocol.js";
import type { EntityState } from "./records.js";
import type { AreaView } from "./view.js";

/** Hit is a blow: an entity's health fell. */
export interface Hit {
  /** The entity hurt. */
  target: number;
  /** Its {@link EntityKind}. */
  targetKind: number;
  /** A player's name from presence, or a creature kind's name; undefined when the view has none. */
  targetName: string | undefined;
  /** The entity that struck, when it can be told; null when not. */
  by: number | null;
  byName: string | undefined;
  /** Health taken (a killing blow: what was left). */
  damage: number;
  /** Health left, of fullHp. */
  hp: number;
  fullHp: number;
  /** Where the target stood. */
  x: number;
  y: number;
  /** The target is the session's own body. */
  self: boolean;
  /** The session's own body struck. */
  bySelf: boolean;
}

/** Death is an entity killed: a creature gone from the world, a player back at a spawn point. */
export interface Death {
  entity: number;
  /** Its {@link EntityKind}. */
  kind: number;
  name: string | undefined;
  /** Where it fell. */
  x: number;
  y: number;
  /** Who struck the last blow, when it can be told. */
  by: number | null;
  byName: string | undefined;
  /** It is the session's own body. */
  self: boolean;
  /** The session's own body struck the last blow. */
  bySelf: boolean;
}

/** What one snapshot changed in the fighting. */
export interface Combat {
  hits: Hit[];
  deaths: Death[];
}

/**
 * inferCombat tells the blows and deaths of one snapshot from the view
 * before it (before: the entities as they were; the view's records
 * replace an entity's state object rather than change it, so a shallow
 * copy of the map is the whole of it) and after it (view, with gone, the
 * entities the snapshot's gone records removed). self is the own body;
 * struck are the squares the own body's actions applied in this snapshot
 * aimed at (its acknowledged action intents).
 *
 * What it can tell, and what not:
 * - a blow is health falling between two snapshots; blows of one period
 *   come as one (their sum);
 * - a creature's death is its gone record (creatures leave the world
 *   only by dying); a blow that kills shows as the health it took;
 * - a player's death is its health back to full at once, away from where
 *   it stood (it comes back at a spawn point in the same tick), so the
 *   blow that killed shows as no blow;
 * - who struck: the own body when a square its action aimed at is the
 *   target's, else another entity next to the target that faces it (an
 *   action turns a body to face what it acts on), else nobody.
 */
export function inferCombat(
  before: ReadonlyMap<number, EntityState>,
  view: AreaView,
  gone: readonly number[],
  self: number,
  struck: readonly { x: number; y: number }[],
): Combat {
  const out: Combat = { hits: [], deaths: [] };
  const name = (e: EntityState): string | undefined =>
    e.kind === EntityKind.Player ? view.players.get(e.id) : view.creatureKind(e.look)?.name;
  const striker = (target: EntityState): { by: number | null; byName: string | undefined; bySelf: boolean } => {
    if (target.id !== self && struck.some((q) => q.x === target.x && q.y === target.y)) {
      return { by: self, byName: view.players.get(self), bySelf: true };
    }
    for (const e of view.entities.values()) {
      if (e.id === target.id || e.id === self || e.hp === 0) continue;
      const [dx, dy] = DIR_DELTA[e.facing & 7] as readonly [number, number];
      if (e.x + dx === target.x && e.y + dy === target.y) return { by: e.id, byName: name(e), bySelf: e.id === self };
    }
    return { by: null, byName: undefined, bySelf: false };
  };
  for (const id of gone) {
    const was = before.get(id);
    if (was === undefined || was.kind !== EntityKind.Creature) continue;
    const who = striker(was);
    const full = view.fullHp(was);
    if (was.hp > 0) {
      out.hits.push({ target: id, targetKind: was.kind, targetName: name(was), ...who, damage: was.hp, hp: 0, fullHp: full, x: was.x, y: was.y, self: false });
    }
    out.deaths.push({ entity: id, kind: was.kind, name: name(was), x: was.x, y: was.y, ...who, self: false });
  }
  for (const e of view.entities.values()) {
    const was = before.get(e.id);
    if (was === undefined) continue;
    const full = view.fullHp(e);
    if (e.hp < was.hp) {
      out.hits.push({ target: e.id, targetKind: e.kind, targetName: name(e), ...striker(e), damage: was.hp - e.hp, hp: e.hp, fullHp: full, x: e.x, y: e.y, self: e.id === self });
    } else if (
      e.kind === EntityKind.Player &&
      full > 0 &&
      e.hp === full &&
      was.hp < full &&
      Math.max(Math.abs(e.x - was.x), Math.abs(e.y - was.y)) > 1
    ) {
      out.deaths.push({ entity: e.id, kind: e.kind, name: name(e), x: was.x, y: was.y, ...striker(was), self: e.id === self });
    }
  }
  return out;
}
