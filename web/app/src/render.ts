/**
 * The canvas view of an Area: the floor and walls of the cells whose maps
 * arrived, static objects, the portal squares known, and the entities in
 * view (players with their names, creatures, objects), centred on the
 * player's own body.
 */

import { type AreaView, DIR_DELTA, EntityFlag, EntityKind, Floor, type Session } from "@leyworks/ley-sdk";

/** What one frame shows. */
export interface Scene {
  session: Session;
  now: number;
  /** Where to centre: the own body as drawn (eased), or null before it shows. */
  centre: { x: number; y: number } | null;
  portals: readonly (readonly [number, number])[];
  /** The square a move-to walks to, if one is under way. */
  target: { x: number; y: number } | null;
}

const COLORS = {
  unknown: "#0b0d10",
  open: "#1f2a1f",
  openAlt: "#223022",
  wall: "#5d626b",
  wallTop: "#7a808a",
  unheld: "rgba(0, 0, 0, 0.45)",
  edge: "#3a4350",
  portal: "#b06bff",
  target: "#f2c14e",
  self: "#f2c14e",
  player: "#5aa9ff",
  creature: "#ff6b6b",
  object: "#9fb08a",
  hpBack: "#3a1616",
  hpFront: "#6bd68a",
  name: "#e6e9ee",
} as const;

/**
 * Renderer draws scenes on one canvas and maps its pixels to squares. It
 * writes the mapping on the canvas as data attributes (data-origin-x,
 * data-origin-y: the square at its top-left corner; data-tile: CSS pixels
 * a square), so that tests and tools can aim at squares.
 */
export class Renderer {
  /** CSS pixels a square. */
  tile = 28;
  private originX = 0;
  private originY = 0;
  private readonly ctx: CanvasRenderingContext2D;
  // The protocol sends hp, not its maximum: bars are scaled to the most
  // each entity was seen with.
  private readonly maxHp = new Map<number, number>();

  constructor(private readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext("2d");
    if (ctx === null) throw new Error("no 2D canvas");
    this.ctx = ctx;
  }

  /** squareAt returns the square under a client-coordinates point. */
  squareAt(clientX: number, clientY: number): { x: number; y: number } {
    const r = this.canvas.getBoundingClientRect();
    return {
      x: Math.floor(this.originX + (clientX - r.left) / this.tile),
      y: Math.floor(this.originY + (clientY - r.top) / this.tile),
    };
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
    const info = v.info;
    if (info === null) return;
    const c = s.centre ?? { x: info.w / 2, y: info.h / 2 };
    this.originX = c.x + 0.5 - w / t / 2;
    this.originY = c.y + 0.5 - h / t / 2;
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

    ctx.strokeStyle = COLORS.edge;
    ctx.lineWidth = 2;
    ctx.strokeRect(px(0), py(0), info.w * t, info.h * t);

    for (const m of v.maps.values()) {
      for (const o of m.objects) {
        if (o.x < x0 || o.y < y0 || o.x >= x1 || o.y >= y1) continue;
        ctx.fillStyle = `hsl(${(o.kind * 67) % 360} 45% ${o.state === 0 ? 38 : 58}%)`;
        ctx.fillRect(px(o.x) + t * 0.15, py(o.y) + t * 0.15, t * 0.7, t * 0.7);
      }
    }
    ctx.strokeStyle = COLORS.portal;
    ctx.lineWidth = 3;
    for (const [x, y] of s.portals) {
      ctx.beginPath();
      ctx.arc(px(x + 0.5), py(y + 0.5), t * 0.38, 0, Math.PI * 2);
      ctx.stroke();
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
  }

  private floor(v: AreaView, x0: number, y0: number, x1: number, y1: number, px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const k = v.floorAt(x, y);
        if (k === undefined) continue;
        if (k === Floor.Wall) {
          ctx.fillStyle = COLORS.wall;
          ctx.fillRect(px(x), py(y), t, t);
          ctx.fillStyle = COLORS.wallTop;
          ctx.fillRect(px(x), py(y), t, t * 0.25);
        } else {
          ctx.fillStyle = (x + y) % 2 === 0 ? COLORS.open : COLORS.openAlt;
          ctx.fillRect(px(x), py(y), t, t);
        }
      }
    }
    // Cells out of view (not held) are drawn dimmed: their maps are kept,
    // what stands in them is unknown.
    const info = v.info;
    if (info === null) return;
    const cs = info.cellSize;
    ctx.fillStyle = COLORS.unheld;
    for (let cy = Math.floor(y0 / cs) * cs; cy < y1; cy += cs) {
      for (let cx = Math.floor(x0 / cs) * cs; cx < x1; cx += cs) {
        if (!v.held.has(v.cellOf(cx, cy))) {
          ctx.fillRect(px(cx), py(cy), Math.min(cs, info.w - cx) * t, Math.min(cs, info.h - cy) * t);
        }
      }
    }
  }

  private entities(s: Scene, px: (x: number) => number, py: (y: number) => number): void {
    const ctx = this.ctx;
    const t = this.tile;
    const all = s.session.drawables(s.now);
    const order = (k: number, self: boolean): number => (self ? 3 : k === EntityKind.Player ? 2 : k === EntityKind.Creature ? 1 : 0);
    all.sort((a, b) => order(a.kind, a.self) - order(b.kind, b.self));
    for (const e of all) {
      const pos = e.self && s.centre !== null ? s.centre : e;
      const cx = px(pos.x + 0.5);
      const cy = py(pos.y + 0.5);
      ctx.globalAlpha = (e.flags & EntityFlag.Away) !== 0 ? 0.45 : 1;
      if ((e.flags & EntityFlag.Transit) !== 0) {
        ctx.fillStyle = COLORS.portal;
        ctx.beginPath();
        ctx.arc(cx, cy, t * 0.5, 0, Math.PI * 2);
        ctx.fill();
      }
      ctx.fillStyle = e.self ? COLORS.self : e.kind === EntityKind.Player ? COLORS.player : e.kind === EntityKind.Creature ? COLORS.creature : COLORS.object;
      ctx.beginPath();
      if (e.kind === EntityKind.Creature) {
        ctx.moveTo(cx, cy - t * 0.4);
        ctx.lineTo(cx + t * 0.4, cy);
        ctx.lineTo(cx, cy + t * 0.4);
        ctx.lineTo(cx - t * 0.4, cy);
        ctx.closePath();
      } else if (e.kind === EntityKind.Object) {
        ctx.rect(cx - t * 0.3, cy - t * 0.3, t * 0.6, t * 0.6);
      } else {
        ctx.arc(cx, cy, t * 0.36, 0, Math.PI * 2);
      }
      ctx.fill();
      if (e.self) {
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      const [dx, dy] = DIR_DELTA[e.facing & 7] as readonly [number, number];
      ctx.fillStyle = "#0b0d10";
      ctx.beginPath();
      ctx.arc(cx + dx * t * 0.22, cy + dy * t * 0.22, t * 0.08, 0, Math.PI * 2);
      ctx.fill();
      if (e.hp > 0) {
        const max = Math.max(this.maxHp.get(e.id) ?? 0, e.hp);
        this.maxHp.set(e.id, max);
        ctx.fillStyle = COLORS.hpBack;
        ctx.fillRect(cx - t * 0.4, cy - t * 0.62, t * 0.8, 4);
        ctx.fillStyle = COLORS.hpFront;
        ctx.fillRect(cx - t * 0.4, cy - t * 0.62, (t * 0.8 * e.hp) / max, 4);
      }
      if (e.name !== undefined) {
        ctx.font = "12px system-ui, sans-serif";
        ctx.textAlign = "center";
        ctx.fillStyle = COLORS.name;
        ctx.fillText(e.name, cx, cy - t * 0.55);
      }
      ctx.globalAlpha = 1;
    }
  }
}
