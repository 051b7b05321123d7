/**
 * The canvas view of an Area: the floor of the cells whose maps arrived,
 * by kind (grass, dirt, stone, sand, wood, water, walls), the plots where
 * an Area that allows building only on them (a village) lets players
 * build (tinted and outlined under what stands there), the static
 * objects (doors open or closed, trees, signs, rocks, chests, portal
 * squares, placed items by their kind's look, floor tiles under the
 * rest), and the entities in view (players with their names, creatures
 * by their kind's name, each with a health bar scaled to its full
 * health), centred on the player's own body (the camera stops at the
 * Area's edges), whose faced square is outlined. Names never overlap and
 * are cut with an ellipsis; blows rise as numbers over whom they hurt.
 */

import {
  type AreaView,
  DIR_DELTA,
  type Drawable,
  DoorState,
  EntityFlag,
  EntityKind,
  FLOOR_NAMES,
  Floor,
  type ItemKind,
  ObjectKind,
  type Plot,
  type Session,
  type StaticObject,
} from "@leyworks/ley-sdk";

import { type Kinds, drawLook, isFloorItem, isWallLook, itemName } from "./looks.js";

/** What one frame shows. */
export interface Scene {
  session: Session;
  now: number;
  /** Where to centre: the own body as drawn (eased), or null before it shows. */
  centre: { x: number; y: number } | null;
  /** The square the own body faces, outlined; null when there is none. */
  faced: { x: number; y: number } | null;
  /** The square a move-to walks to, if one is under way. */
  target: { x: number; y: number } | null;
}

/**
 * The colours of the floor kinds, by code, and of what stands on them.
 * The web client's tests read some of these off the canvas (a closed and
 * an open door's middle, a deer's body): keep web/client_test.go in step.
 */
export const COLORS = {
  unknown: "#0b0d10",
  floor: ["#07080a", "#2e5530", "#6b5036", "#6f6d68", "#b7a26b", "#7a5534", "#2a5d86", "#474c55"] as readonly string[],
  floorUnknownKind: "#5a2d5a",
  grassTuft: "#3a6a3a",
  stoneJoint: "#5f5d58",
  sandGrain: "#a8935e",
  woodJoint: "#664528",
  waterWave: "#4a82b0",
  wallTop: "#646a75",
  wallJoint: "#3a3e46",
  unheld: "rgba(0, 0, 0, 0.45)",
  plot: "rgba(160, 230, 255, 0.1)",
  plotEdge: "rgba(160, 230, 255, 0.45)",
  edge: "#3a4350",
  doorClosed: "#8b5a2b",
  doorOpen: "#2a1d12",
  doorFrame: "#4e3015",
  treeCanopy: "#173a1b",
  treeLight: "#3e8a45",
  signBoard: "#c9a063",
  signPost: "#5a3d1f",
  rock: "#8a8d93",
  rockLight: "#a9acb1",
  chest: "#8a5a24",
  chestLid: "#6b4219",
  chestLock: "#e0b040",
  portal: "#b06bff",
  portalGlow: "rgba(176, 107, 255, 0.35)",
  portalInner: "#e2c6ff",
  faced: "rgba(242, 193, 78, 0.85)",
  target: "#f2c14e",
  self: "#f2c14e",
  player: "#5aa9ff",
  creatures: { deer: "#c8894a", wolf: "#9aa3ad", slime: "#5ad16b" } as Readonly<Record<string, string>>,
  hpBack: "#3a1616",
  hpGood: "#6bd68a",
  hpMid: "#f2c14e",
  hpLow: "#ff6b6b",
  name: "#e6e9ee",
  creatureName: "#d9c9b0",
  nameShadow: "rgba(0, 0, 0, 0.7)",
  damage: "#ffd166",
  struck: "#ffffff",
} as const;

/** The widest a name is drawn, in squares; longer ones are cut with an ellipsis. */
const NAME_SQUARES = 4;
/** How long a body shows it was struck, in ms. */
const STRUCK_MS = 250;

/** An effect drawn over the map for a while: a number rising from a blow, a mark where something fell. */
interface Effect {
  x: number;
  y: number;
  text: string;
  color: string;
  start: number;
  ms: number;
}

/** A label to place: its text, where it would like to stand, and in which order it may move. */
interface Label {
  text: string;
  font: string;
  color: string;
  cx: number;
  /** Baselines to try, best first. */
  ys: number[];
}

/** fitText cuts text to at most max pixels wide in ctx's font, with an ellipsis. */
export function fitText(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ctx.measureText(text.slice(0, mid) + "…").width <= max) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo).trimEnd() + "…";
}

/** creatureColor returns the colour of a creature kind: its own for the shipped ones, a hue of its name for the others. */
export function creatureColor(name: string | undefined): string {
  if (name === undefined) return "#ff6b6b";
  const own = COLORS.creatures[name];
  if (own !== undefined) return own;
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return `hsl(${h} 55% 60%)`;
}

/**
 * objectOn returns the static object on square (x, y) a player deals
 * with: the one in its occupant slot (furniture, a wall, a door, the
 * map's objects), else the floor tile placed there; undefined for none.
 */
export function objectOn(v: AreaView, x: number, y: number): StaticObject | undefined {
  const all = v.objectsAt(x, y);
  return all.find((o) => !isFloorItem(v.itemKind(o.item))) ?? all[0];
}

/**
 * describeObject says what a static object is, for people; kind is a
 * placed item's kind (view.itemKind(o.item)), and kinds (view.itemKind)
 * names what a kind that lives grows into.
 */
export function describeObject(o: StaticObject, kind?: ItemKind, kinds?: Kinds): string {
  switch (o.kind) {
    case ObjectKind.Door: {
      const what = kind === undefined ? "door" : itemName(kind).replace(/^an? /, "");
      return o.state === DoorState.Open ? `an open ${what}` : `a closed ${what}`;
    }
    case ObjectKind.Item:
      return itemName(kind, kinds);
    case ObjectKind.Tree:
      return "a tree";
    case ObjectKind.Sign:
      return `a sign: “${o.text}”`;
    case ObjectKind.Rock:
      return "a rock";
    case ObjectKind.Chest:
      return "a chest";
    case ObjectKind.Portal:
      return "a portal: step on it to cross";
    default:
      return `an object of kind ${o.kind}`;
  }
}

/** describeEntity says what an entity is, with its health. */
export function describeEntity(e: Pick<Drawable, "id" | "kind" | "name" | "creature" | "hp" | "fullHp" | "flags" | "self">): string {
  const who = e.kind === EntityKind.Player ? (e.name ?? `player ${e.id}`) + (e.self ? " (you)" : "") : (e.creature ?? `creature ${e.id}`);
  const hp = e.fullHp > 0 ? ` ${e.hp}/${e.fullHp}` : "";
  const away = (e.flags & EntityFlag.Away) !== 0 ? ", away" : "";
  return who + hp + away;
}

/** A thing drawn in the last frame, where it was drawn (in squares). */
interface Drawn {
  x: number;
  y: number;
  e: Drawable;
}

/**
 * Renderer draws scenes on one canvas and maps its pixels to squares. It
 * writes the mapping on the canvas as data attributes (data-origin-x,
 * data-origin-y: the square at its top-left corner; data-tile: CSS pixels
 * a square), so that tests and tools can aim at squares.
 */
export class Renderer {
  /** CSS pixels a square. */
  tile = 24;
  private originX = 0;
  private originY = 0;
  private readonly ctx: CanvasRenderingContext2D;
  private drawn: Drawn[] = [];
  private effects: Effect[] = [];
  private readonly struckAt = new Map<number, number>();

  constructor(private readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext("2d");
    if (ctx === null) throw new Error("no 2D canvas");
    this.ctx = ctx;
  }

  /** effect shows text rising over square (x, y) for ms. */
  effect(x: number, y: number, text: string, color: string, ms = 900): void {
    this.effects.push({ x, y, text, color, start: performance.now(), ms });
    if (this.effects.length > 64) this.effects.shift();
  }

  /** struck shows entity id was struck, for a moment. */
  struck(id: number): void {
    this.struckAt.set(id, performance.now());
  }

  /** clearEffects forgets every effect (a new Area, a new session). */
  clearEffects(): void {
    this.effects = [];
    this.struckAt.clear();
  }

  /** squareAt returns the square under a client-coordinates point. */
  squareAt(clientX: number, clientY: number): { x: number; y: number } {
    const p = this.pointAt(clientX, clientY);
    return { x: Math.floor(p.x), y: Math.floor(p.y) };
  }

  private pointAt(clientX: number, clientY: number): { x: number; y: number } {
    const r = this.canvas.getBoundingClientRect();
    return { x: this.originX + (clientX - r.left) / this.tile, y: this.originY + (clientY - r.top) / this.tile };
  }

  /**
   * describeAt says what is under a client-coordinates point as the last
   * frame drew it: an entity (where it was drawn, sliding or not), else
   * the static object on the square; "" for nothing.
   */
  describeAt(view: AreaView, clientX: number, clientY: number): string {
    const p = this.pointAt(clientX, clientY);
    let best: Drawn | undefined;
    let bestD = 0.5;
    for (const d of this.drawn) {
      const dist = Math.max(Math.abs(d.x + 0.5 - p.x), Math.abs(d.y + 0.5 - p.y));
      if (dist < bestD) {
        best = d;
        bestD = dist;
      }
    }
    if (best !== undefined) return describeEntity(best.e);
    const o = objectOn(view, Math.floor(p.x), Math.floor(p.y));
    return o === undefined ? "" : describeObject(o, view.itemKind(o.item), (c) => view.itemKind(c));
  }

  private fit(): { w: number; h: number } {
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
    }
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { w, h };
  }

  /** draw draws one frame. */
  draw(s: Scene): void {
    const { w, h } = this.fit();
    const ctx = this.ctx;
    const v = s.session.view;
    const t = this.tile;
    ctx.fillStyle = COLORS.unknown;
    ctx.fillRect(0, 0, w, h);
    this.drawn = [];
    const info = v.info;
    if (info === null) return;
    const c = s.centre ?? { x: info.w / 2, y: info.h / 2 };
    this.originX = camera(c.x, w / t, info.w);
    this.originY = camera(c.y, h / t, info.h);
    this.canvas.dataset["originX"] = this.originX.toFixed(3);
    this.canvas.dataset["originY"] = this.originY.toFixed(3);
    this.canvas.dataset["tile"] = String(t);
    const px = (x: number): number => (x - this.originX) * t;
    const py = (y: number): number => (y - this.originY) * t;

    const x0 = Math.max(0, Math.floor(this.originX));
    const y0 = Math.max(0, Math.floor(this.originY));
    const x1 = Math.min(info.w, Math.ceil(this.originX + w / t));
    const y1 = Math.min(info.h, Math.ceil(this.originY + h / t));
    this.floor(v, x0, y0, x1, y1, px, py);
    this.plots(s.session.plots, x0, y0, x1, y1, px, py);

    // Floor tiles first: whatever stands on their squares is drawn over them.
    const kinds = s.session.itemKinds;
    for (const floorTiles of [true, false]) {
      for (const m of v.maps.values()) {
        for (const o of m.objects) {
          if (o.x < x0 || o.y < y0 || o.x >= x1 || o.y >= y1 || isFloorItem(kinds.get(o.item)) !== floorTiles) continue;
          this.object(v, kinds, o, px(o.x), py(o.y));
        }
      }
    }
    this.unheld(v, x0, y0, x1, y1, px, py);

    ctx.strokeStyle = COLORS.edge;
    ctx.lineWidth = 2;
    ctx.strokeRect(px(0), py(0), info.w * t, info.h * t);

    if (s.faced !== null && v.onGrid(s.faced.x, s.faced.y)) {
      ctx.strokeStyle = COLORS.faced;
      ctx.lineWidth = 2;
      ctx.setLineDash([4, 3]);
      ctx.strokeRect(px(s.faced.x) + 1, py(s.faced.y) + 1, t - 2, t - 2);
      ctx.setLineDash([]);
    }
    if (s.target !== null) {
      const { x, y } = s.target;
      ctx.strokeStyle = COLORS.target;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(px(x + 0.2), py(y + 0.2));
      ctx.lineTo(px(x + 0.8), py(y + 0.8));
      ctx.moveTo(px(x + 0.8), py(y + 0.2));
      ctx.lineTo(px(x + 0.2), py(y + 0.8));
      ctx.stroke();
    }
    this.entities(s, px, py);
    this.drawEffects(px, py);
  }

  private drawEffects(px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    const clock = performance.now();
    this.effects = this.effects.filter((e) => clock - e.start < e.ms);
    ctx.textAlign = "center";
    ctx.font = "bold 14px system-ui, sans-serif";
    for (const e of this.effects) {
      const f = (clock - e.start) / e.ms;
      ctx.globalAlpha = Math.max(0, 1 - f * f);
      const x = px(e.x + 0.5);
      const y = py(e.y + 0.1) - f * t * 0.8;
      ctx.lineWidth = 3;
      ctx.strokeStyle = COLORS.nameShadow;
      ctx.strokeText(e.text, x, y);
      ctx.fillStyle = e.color;
      ctx.fillText(e.text, x, y);
    }
    ctx.globalAlpha = 1;
  }

  private floor(v: AreaView, x0: number, y0: number, x1: number, y1: number, px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const k = v.floorAt(x, y);
        if (k === undefined) continue;
        const X = px(x);
        const Y = py(y);
        ctx.fillStyle = COLORS.floor[k] ?? COLORS.floorUnknownKind;
        ctx.fillRect(X, Y, t, t);
        const n = (x * 73856093) ^ (y * 19349663); // a fixed speckle per square
        switch (k) {
          case Floor.Grass:
            ctx.fillStyle = COLORS.grassTuft;
            ctx.fillRect(X + t * (0.15 + (n & 7) / 14), Y + t * (0.2 + ((n >> 3) & 7) / 14), 2, 3);
            break;
          case Floor.Stone:
            ctx.fillStyle = COLORS.stoneJoint;
            ctx.fillRect(X, Y + t - 1, t, 1);
            ctx.fillRect(X + ((y & 1) === 0 ? t / 2 : t - 1), Y, 1, t);
            break;
          case Floor.Sand:
            ctx.fillStyle = COLORS.sandGrain;
            ctx.fillRect(X + t * (0.2 + (n & 7) / 12), Y + t * (0.25 + ((n >> 4) & 7) / 12), 2, 2);
            break;
          case Floor.Wood:
            ctx.fillStyle = COLORS.woodJoint;
            ctx.fillRect(X, Y + t / 3, t, 1);
            ctx.fillRect(X, Y + (2 * t) / 3, t, 1);
            break;
          case Floor.Water:
            ctx.fillStyle = COLORS.waterWave;
            ctx.fillRect(X + t * 0.2 + ((n >> 2) & 3), Y + t * 0.45, t * 0.35, 1.5);
            break;
          case Floor.Wall:
            ctx.fillStyle = COLORS.wallTop;
            ctx.fillRect(X, Y, t, t * 0.3);
            ctx.fillStyle = COLORS.wallJoint;
            ctx.fillRect(X, Y + t * 0.65, t, 1);
            ctx.fillRect(X + ((x & 1) === 0 ? t * 0.3 : t * 0.7), Y + t * 0.3, 1, t * 0.35);
            break;
          default:
            break;
        }
      }
    }
  }

  /** plots tints the squares of each plot in sight, and outlines it: the player may build there (and only there). */
  private plots(plots: readonly Plot[], x0: number, y0: number, x1: number, y1: number, px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    ctx.lineWidth = 1;
    for (const p of plots) {
      if (p.x >= x1 || p.y >= y1 || p.x + p.w <= x0 || p.y + p.h <= y0) continue;
      ctx.fillStyle = COLORS.plot;
      ctx.fillRect(px(p.x), py(p.y), p.w * t, p.h * t);
      ctx.strokeStyle = COLORS.plotEdge;
      ctx.strokeRect(px(p.x) + 0.5, py(p.y) + 0.5, p.w * t - 1, p.h * t - 1);
    }
  }

  /** unheld dims the cells out of view (not held): their maps are kept, what stands in them is unknown. */
  private unheld(v: AreaView, x0: number, y0: number, x1: number, y1: number, px: (x: number) => number, py: (y: number) => number): void {
    const info = v.info;
    if (info === null) return;
    const ctx = this.ctx;
    const t = this.tile;
    const cs = info.cellSize;
    ctx.fillStyle = COLORS.unheld;
    for (let cy = Math.floor(y0 / cs) * cs; cy < y1; cy += cs) {
      for (let cx = Math.floor(x0 / cs) * cs; cx < x1; cx += cs) {
        if (v.maps.has(v.cellOf(cx, cy)) && !v.held.has(v.cellOf(cx, cy))) {
          ctx.fillRect(px(cx), py(cy), Math.min(cs, info.w - cx) * t, Math.min(cs, info.h - cy) * t);
        }
      }
    }
  }

  /** object draws static object o on the square whose top left is (X, Y); kinds are the realm's item kinds, by code. */
  private object(v: AreaView, kinds: ReadonlyMap<number, ItemKind>, o: StaticObject, X: number, Y: number): void {
    const ctx = this.ctx;
    const t = this.tile;
    switch (o.kind) {
      case ObjectKind.Door: {
        // A door in a row of wall (walls east or west of it, the map's or
        // placed) hangs across the row; otherwise down a column.
        const across = wallAt(v, kinds, o.x - 1, o.y) || wallAt(v, kinds, o.x + 1, o.y);
        if (o.state === DoorState.Open) {
          ctx.fillStyle = COLORS.doorOpen;
          ctx.fillRect(X, Y, t, t);
          ctx.fillStyle = COLORS.doorClosed; // the leaf, swung against the frame
          if (across) ctx.fillRect(X + 1, Y + 1, t * 0.16, t - 2);
          else ctx.fillRect(X + 1, Y + 1, t - 2, t * 0.16);
        } else {
          ctx.fillStyle = COLORS.doorClosed;
          ctx.fillRect(X, Y, t, t);
          ctx.fillStyle = COLORS.doorFrame;
          if (across) {
            ctx.fillRect(X + t / 3, Y, 1, t);
            ctx.fillRect(X + (2 * t) / 3, Y, 1, t);
          } else {
            ctx.fillRect(X, Y + t / 3, t, 1);
            ctx.fillRect(X, Y + (2 * t) / 3, t, 1);
          }
          ctx.fillStyle = COLORS.chestLock;
          ctx.fillRect(X + t * 0.78, Y + t * 0.45, 2, 3);
        }
        ctx.strokeStyle = COLORS.doorFrame;
        ctx.lineWidth = 2;
        ctx.strokeRect(X + 1, Y + 1, t - 2, t - 2);
        return;
      }
      case ObjectKind.Tree:
        ctx.fillStyle = COLORS.treeCanopy;
        ctx.beginPath();
        ctx.arc(X + t / 2, Y + t / 2, t * 0.48, 0, Math.PI * 2);
        ctx.fill();
        ctx.fillStyle = COLORS.treeLight;
        ctx.beginPath();
        ctx.arc(X + t * 0.42, Y + t * 0.4, t * 0.3, 0, Math.PI * 2);
        ctx.fill();
        ctx.fillStyle = COLORS.treeCanopy;
        ctx.beginPath();
        ctx.arc(X + t * 0.58, Y + t * 0.6, t * 0.12, 0, Math.PI * 2);
        ctx.fill();
        return;
      case ObjectKind.Sign:
        ctx.fillStyle = COLORS.signPost;
        ctx.fillRect(X + t * 0.45, Y + t * 0.5, t * 0.1, t * 0.42);
        ctx.fillStyle = COLORS.signBoard;
        ctx.fillRect(X + t * 0.12, Y + t * 0.15, t * 0.76, t * 0.42);
        ctx.fillStyle = COLORS.signPost;
        ctx.fillRect(X + t * 0.22, Y + t * 0.27, t * 0.56, 1.5);
        ctx.fillRect(X + t * 0.22, Y + t * 0.41, t * 0.4, 1.5);
        return;
      case ObjectKind.Rock:
        ctx.fillStyle = COLORS.rock;
        ctx.beginPath();
        ctx.ellipse(X + t / 2, Y + t * 0.56, t * 0.4, t * 0.32, 0, 0, Math.PI * 2);
        ctx.fill();
        ctx.fillStyle = COLORS.rockLight;
        ctx.beginPath();
        ctx.ellipse(X + t * 0.42, Y + t * 0.46, t * 0.16, t * 0.1, 0, 0, Math.PI * 2);
        ctx.fill();
        return;
      case ObjectKind.Chest:
        ctx.fillStyle = COLORS.chest;
        ctx.fillRect(X + t * 0.14, Y + t * 0.25, t * 0.72, t * 0.55);
        ctx.fillStyle = COLORS.chestLid;
        ctx.fillRect(X + t * 0.14, Y + t * 0.25, t * 0.72, t * 0.18);
        ctx.fillStyle = COLORS.chestLock;
        ctx.fillRect(X + t * 0.45, Y + t * 0.38, t * 0.1, t * 0.14);
        return;
      case ObjectKind.Portal:
        ctx.fillStyle = COLORS.portalGlow;
        ctx.beginPath();
        ctx.arc(X + t / 2, Y + t / 2, t * 0.46, 0, Math.PI * 2);
        ctx.fill();
        ctx.strokeStyle = COLORS.portal;
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.arc(X + t / 2, Y + t / 2, t * 0.36, 0, Math.PI * 2);
        ctx.stroke();
        ctx.strokeStyle = COLORS.portalInner;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.arc(X + t / 2, Y + t / 2, t * 0.18, 0, Math.PI * 1.5);
        ctx.stroke();
        return;
      case ObjectKind.Item:
        drawLook(ctx, kinds.get(o.item), X, Y, t);
        return;
      default:
        ctx.strokeStyle = COLORS.floorUnknownKind;
        ctx.lineWidth = 2;
        ctx.strokeRect(X + t * 0.2, Y + t * 0.2, t * 0.6, t * 0.6);
    }
  }

  private entities(s: Scene, px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    const all = s.session.drawables(s.now);
    const order = (e: Drawable): number => (e.self ? 2 : e.kind === EntityKind.Player ? 1 : 0);
    all.sort((a, b) => order(a) - order(b));
    const labels: Label[] = [];
    const clock = performance.now();
    for (const e of all) {
      const pos = e.self && s.centre !== null ? s.centre : e;
      this.drawn.push({ x: pos.x, y: pos.y, e });
      const cx = px(pos.x + 0.5);
      const cy = py(pos.y + 0.5);
      ctx.globalAlpha = (e.flags & EntityFlag.Away) !== 0 ? 0.45 : 1;
      if ((e.flags & EntityFlag.Transit) !== 0) {
        ctx.fillStyle = COLORS.portal;
        ctx.beginPath();
        ctx.arc(cx, cy, t * 0.5, 0, Math.PI * 2);
        ctx.fill();
      }
      ctx.beginPath();
      if (e.kind === EntityKind.Player) {
        ctx.fillStyle = e.self ? COLORS.self : COLORS.player;
        ctx.arc(cx, cy, t * 0.36, 0, Math.PI * 2);
      } else {
        ctx.fillStyle = creatureColor(e.creature);
        ctx.moveTo(cx, cy - t * 0.42);
        ctx.lineTo(cx + t * 0.42, cy);
        ctx.lineTo(cx, cy + t * 0.42);
        ctx.lineTo(cx - t * 0.42, cy);
        ctx.closePath();
      }
      ctx.fill();
      if (e.self) {
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      const hitAt = this.struckAt.get(e.id);
      if (hitAt !== undefined && clock - hitAt < STRUCK_MS) {
        ctx.strokeStyle = COLORS.struck;
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.arc(cx, cy, t * 0.5, 0, Math.PI * 2);
        ctx.stroke();
      }
      const [dx, dy] = DIR_DELTA[e.facing & 7] as readonly [number, number];
      ctx.fillStyle = "#0b0d10";
      ctx.beginPath();
      ctx.arc(cx + dx * t * 0.24, cy + dy * t * 0.24, t * 0.08, 0, Math.PI * 2);
      ctx.fill();
      if (e.fullHp > 0 && e.hp > 0) {
        const f = Math.min(1, e.hp / e.fullHp);
        ctx.fillStyle = COLORS.hpBack;
        ctx.fillRect(cx - t * 0.4, cy - t * 0.62, t * 0.8, 4);
        ctx.fillStyle = f > 0.5 ? COLORS.hpGood : f > 0.25 ? COLORS.hpMid : COLORS.hpLow;
        ctx.fillRect(cx - t * 0.4, cy - t * 0.62, t * 0.8 * f, 4);
      }
      ctx.globalAlpha = 1;
      if (e.kind === EntityKind.Player && e.name !== undefined) {
        const above = cy - t * 0.7;
        labels.push({ text: e.name, font: "12px system-ui, sans-serif", color: e.self ? COLORS.self : COLORS.name, cx, ys: [above, above - 13, cy + t * 0.5 + 13] });
      } else if (e.kind === EntityKind.Creature) {
        const below = cy + t * 0.82;
        labels.push({ text: e.creature ?? "?", font: "10px system-ui, sans-serif", color: COLORS.creatureName, cx, ys: [below, below + 11] });
      }
    }
    for (const e of this.struckAt.keys()) {
      if (clock - (this.struckAt.get(e) ?? 0) >= STRUCK_MS) this.struckAt.delete(e);
    }
    this.labels(labels);
  }

  /**
   * labels draws names where they do not overlap: the own body's first
   * (the entities come sorted so: creatures, players, self; labels are
   * placed from the last), each at the first of its places that is free,
   * and not at all when none is (the players list and the tooltip still
   * name it). A name wider than NAME_SQUARES squares is cut.
   */
  private labels(labels: Label[]): void {
    const ctx = this.ctx;
    const placed: { x0: number; y0: number; x1: number; y1: number }[] = [];
    ctx.textAlign = "center";
    for (let i = labels.length - 1; i >= 0; i--) {
      const l = labels[i] as Label;
      ctx.font = l.font;
      const text = fitText(ctx, l.text, Math.max(this.tile * NAME_SQUARES, 72));
      const w = ctx.measureText(text).width;
      const h = l.font.startsWith("10") ? 11 : 13;
      for (const y of l.ys) {
        const r = { x0: l.cx - w / 2 - 2, y0: y - h + 2, x1: l.cx + w / 2 + 2, y1: y + 3 };
        if (placed.some((q) => r.x0 < q.x1 && q.x0 < r.x1 && r.y0 < q.y1 && q.y0 < r.y1)) continue;
        placed.push(r);
        ctx.lineWidth = 3;
        ctx.strokeStyle = COLORS.nameShadow;
        ctx.strokeText(text, l.cx, y);
        ctx.fillStyle = l.color;
        ctx.fillText(text, l.cx, y);
        break;
      }
    }
  }
}

/** wallAt reports whether square (x, y) is a wall: the map's, or a wall piece placed there. */
function wallAt(v: AreaView, kinds: ReadonlyMap<number, ItemKind>, x: number, y: number): boolean {
  return v.floorAt(x, y) === Floor.Wall || v.objectsAt(x, y).some((o) => isWallLook(kinds.get(o.item)?.look));
}

/** floorName names floor kind k, for people. */
export function floorName(k: number): string {
  return FLOOR_NAMES[k] ?? `floor ${k}`;
}

/**
 * camera returns the first square a view of span squares shows along an
 * axis of size squares, centred on centre: it stops at the edges, so the
 * view never shows past them, and an Area smaller than the view sits in
 * its middle.
 */
export function camera(centre: number, span: number, size: number): number {
  if (size <= span) return (size - span) / 2;
  return Math.min(Math.max(centre + 0.5 - span / 2, 0), size - span);
}
