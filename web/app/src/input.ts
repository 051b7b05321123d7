/**
 * Keyboard, pointer and touch input of the play screen: held keys step the
 * body at the Area's pace (one step each step_ms, never more queued than
 * the Area takes), Space or F (or the Act button) acts on the square the
 * body faces, a click or a tap walks to a square (move_to), a click or a
 * tap on a square next to the body with something to act on there (a
 * door, a creature, a player where players may fight, a tree or a rock
 * to gather from, a placed item) acts on it, and so does Shift-click on
 * any square next to the body; with an item to place picked, a click or
 * a tap on a free square next to the body places it there. Keys 1-9 and
 * 0 pick inventory slots, B places the picked item on the faced square,
 * T takes back the item placed there, P puts the picked stack in the
 * open chest (where the player may not build, each says so: build.ts);
 * Escape stops and closes the chest.
 */

import { DIR_DELTA, type Dir, EntityKind, ItemSlot, ObjectKind, type Session, Rule, dirOf, isDiagonal } from "@leyworks/ley-sdk";

import type { Builder } from "./build.js";
import { objectOn } from "./render.js";

const KEYS: Record<string, [number, number]> = {
  ArrowUp: [0, -1],
  w: [0, -1],
  k: [0, -1],
  ArrowDown: [0, 1],
  s: [0, 1],
  j: [0, 1],
  ArrowLeft: [-1, 0],
  a: [-1, 0],
  h: [-1, 0],
  ArrowRight: [1, 0],
  d: [1, 0],
  l: [1, 0],
  q: [-1, -1],
  e: [1, -1],
  z: [-1, 1],
  c: [1, 1],
};

/** The keys that act on the faced square. */
const ACT = new Set([" ", "f", "Enter"]);

/** The building keys: place on the faced square, take back from it, put in the open chest. */
const BUILD_KEYS: Record<string, (b: Builder) => void> = {
  b: (b) => b.placeFaced(),
  t: (b) => b.takeFaced(),
  p: (b) => b.putIn(),
};

/** The hint line of keys the play screen shows. */
export const HINT =
  "Arrows or WASD step (Q E Z C diagonals where allowed) · Space or F acts on the square you face (opens doors and chests, attacks, gathers) · click walks there · click a door or a creature next to you to act on it (Shift-click: any square next to you) · Esc stops";

/** The hint for fingers. */
export const TOUCH_HINT = "Tap a square to walk there · tap a door or a creature next to you to act on it · Act acts on the square you face";

/** The hint of the building keys, under the inventory. */
export const BUILD_HINT = "1-9, 0 pick · B places on the square you face (or click one next to you) · T takes back · P puts in the chest · click a slot, then another, to move its stack there";

/** The hint under the inventory where the player may not build. */
export const NO_BUILD_HINT = "You may not build here: the bar only shows what you carry.";

/** The hint of building for fingers. */
export const BUILD_TOUCH_HINT = "Tap a slot, then a free square next to you (or Build) to place it, or another slot to move it there · Take takes back what you face";

/** Input turns the player's keys and clicks into intents of the session. */
export class Input {
  private readonly held = new Set<string>();
  // A key pressed and released before its step could go (within step_ms
  // of the last one): it still steps once, at the next chance.
  private tapped: string | null = null;
  private nextStepAt = 0;

  constructor(
    private readonly session: () => Session | null,
    private readonly onMoveTo: (x: number, y: number) => void,
    private readonly onStop: () => void,
    private readonly onNote: (text: string) => void,
    private readonly builder: Builder,
  ) {}

  /** keydown takes a key press; it reports whether the key was the game's. */
  keydown(ev: KeyboardEvent): boolean {
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLButtonElement || ev.target instanceof HTMLSelectElement || ev.ctrlKey || ev.metaKey || ev.altKey) return false;
    const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    if (key === "Escape") {
      this.held.clear();
      this.tapped = null;
      this.builder.closeChest();
      this.onStop();
      return true;
    }
    // One action a press: a held key must not open and close a door (or
    // place a row of walls) over and over.
    if (ACT.has(key)) {
      if (!ev.repeat) this.act();
      return true;
    }
    const build = BUILD_KEYS[key];
    if (build !== undefined) {
      if (!ev.repeat) build(this.builder);
      return true;
    }
    if (this.builder.pickKey(key)) return true;
    if (KEYS[key] === undefined) return false;
    this.held.add(key);
    if (!ev.repeat) this.tapped = key;
    this.tick(performance.now());
    return true;
  }

  /** keyup takes a key release. */
  keyup(ev: KeyboardEvent): void {
    this.held.delete(ev.key.length === 1 ? ev.key.toLowerCase() : ev.key);
  }

  /** blur forgets the held keys (the page lost the focus). */
  blur(): void {
    this.held.clear();
    this.tapped = null;
  }

  /** act acts on the square the body faces (as predicted: the last step's or action's direction). */
  act(): void {
    const s = this.session();
    if (s === null || !s.ready) return;
    this.action(s, s.predicted?.facing as Dir | undefined);
  }

  /** action acts on the square next to the body in dir (none: nothing), telling the builder (a chest opens). */
  private action(s: Session, dir: Dir | undefined): void {
    const p = s.predicted;
    if (p === null || dir === undefined) return;
    const [dx, dy] = DIR_DELTA[dir & 7] as readonly [number, number];
    this.builder.acting(s, p.x + dx, p.y + dy);
    void s.action(dir);
  }

  /** pvp reports whether players may harm players in the session's Area. */
  pvp(s: Session): boolean {
    return ((s.view.info?.rules ?? 0) & Rule.PvP) !== 0;
  }

  /**
   * actionable reports whether acting on square (x, y) would do something:
   * a door, a creature, a player where players fight, a tree or a rock
   * (gathering), a placed item (a chest opens; the body turns to face the
   * others, to take them back).
   */
  actionable(s: Session, x: number, y: number): boolean {
    const o = objectOn(s.view, x, y);
    if (o !== undefined && (o.kind === ObjectKind.Door || o.kind === ObjectKind.Tree || o.kind === ObjectKind.Rock)) return true;
    if (o?.kind === ObjectKind.Item && o.item !== 0 && s.view.itemKind(o.item)?.slot !== ItemSlot.Floor) return true;
    const e = s.view.entityAt(x, y, s.entity);
    return e !== undefined && (e.kind === EntityKind.Creature || this.pvp(s));
  }

  /**
   * click takes a click or a tap on square (x, y): on a square next to the
   * body with something to act on (or any square next to it, with
   * Shift), act on it; on a free one with an item to place picked, place
   * it there; else walk there.
   */
  click(x: number, y: number, shift: boolean): void {
    const s = this.session();
    if (s === null) return;
    const p = s.predicted;
    const next = p !== null && Math.max(Math.abs(x - p.x), Math.abs(y - p.y)) === 1;
    const dir = next && p !== null ? dirOf(x - p.x, y - p.y) : undefined;
    if (!shift && s.ready && dir !== undefined && !this.actionable(s, x, y) && this.builder.placing(s) !== undefined) {
      this.builder.place(dir);
      return;
    }
    if (!shift && !(next && s.ready && this.actionable(s, x, y))) {
      if (p === null || p.x !== x || p.y !== y) this.onMoveTo(x, y);
      return;
    }
    if (p === null || !s.ready) return;
    if (dir === undefined) {
      this.onNote("Shift-click a square next to you to act on it.");
      return;
    }
    if (isDiagonal(dir) && ((s.view.info?.rules ?? 0) & Rule.Diagonal) === 0) {
      this.onNote("No diagonals in this Area: stand straight beside it.");
      return;
    }
    this.action(s, dir);
  }

  /** tick steps while keys are held, at the Area's pace; call it every frame. */
  tick(now: number): void {
    const s = this.session();
    if (s === null || !s.ready || (this.held.size === 0 && this.tapped === null) || now < this.nextStepAt) return;
    const info = s.view.info;
    if (info === null || s.pending >= Math.max(info.queueLen - 1, 1)) return;
    let dx = 0;
    let dy = 0;
    const keys = this.held.size > 0 ? this.held : [this.tapped as string];
    this.tapped = null;
    for (const k of keys) {
      const d = KEYS[k];
      if (d !== undefined) {
        dx += d[0];
        dy += d[1];
      }
    }
    if (dx !== 0 && dy !== 0 && (info.rules & Rule.Diagonal) === 0) dy = 0;
    const dir = dirOf(dx, dy);
    if (dir === undefined) return;
    this.nextStepAt = now + info.stepMs;
    void s.step(dir);
  }
}
