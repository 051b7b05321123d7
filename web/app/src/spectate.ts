/**
 * The console's spectator map: an Area as a {@link Spectator} is sent it,
 * drawn on a canvas, read-only. The whole Area fits the canvas, or the
 * camera follows a player (a closer zoom, stopped at the Area's edges).
 * Overlays the operator toggles: the hash cells snapshots are made of
 * (the interest cells), with the cells within the followed player's
 * interest radius lit; and the followed player's own view (its point of
 * view, which the host sends instead of the whole Area: in a
 * line-of-sight Area, only what it sees), with the cells it is not sent
 * dimmed; and the flow field a creature follows (the host sends it for
 * the creature watched), a step drawn out of each square it reaches.
 *
 * The canvas carries what it drew in data attributes, for people reading
 * the DOM and for the tests: the followed player's square (data-follow-x,
 * data-follow-y), the count of bodies (data-bodies), the flow field's
 * creature and target (data-flow, "creature:target"), and the camera
 * (data-camera, "square-size x-offset y-offset" in CSS pixels).
 */

import { DIR_DELTA, DoorState, EntityFlag, EntityKind, FLOW_TARGET, ObjectKind, type AreaView, type Flow } from "@leyworks/ley-sdk";

import { COLORS, creatureColor } from "./render.js";

/** The size of a square, in CSS pixels, while following a player. */
const FOLLOW_SQUARE = 14;

/** What one frame of the spectator map shows. */
export interface SpectateScene {
  view: AreaView;
  /** The followed player's entity; 0: nobody. */
  follow: number;
  /** Draw the hash cells, lighting those within the followed player's interest. */
  cells: boolean;
  /** The view is the followed player's point of view: dim the cells it is not sent. */
  pov: boolean;
  /** The flow field of the creature watched, drawn as a step out of each square it reaches; null: none. */
  flow: Flow | null;
}

/** interestCells returns the hash cells with a square within r squares (Chebyshev) of (x, y); r 0 is every cell (as systems/spatial's CellsWithin). */
export function interestCells(v: AreaView, x: number, y: number, r: number): Set<number> {
  const out = new Set<number>();
  const i = v.info;
  if (i === null) return out;
  const cs = i.cellSize;
  const across = Math.ceil(i.w / cs);
  if (r <= 0) {
    for (let c = 0; c < v.cells(); c++) out.add(c);
    return out;
  }
  const x0 = Math.floor(Math.max(x - r, 0) / cs);
  const y0 = Math.floor(Math.max(y - r, 0) / cs);
  const x1 = Math.floor(Math.min(x + r, i.w - 1) / cs);
  const y1 = Math.floor(Math.min(y + r, i.h - 1) / cs);
  for (let cy = y0; cy <= y1; cy++) for (let cx = x0; cx <= x1; cx++) out.add(cy * across + cx);
  return out;
}

/**
 * FloorImage is an Area's floor and static objects at one pixel a square,
 * kept in an offscreen canvas and redrawn a cell at a time when the cell's
 * map (static) arrives or changes version: a frame scales it onto the
 * view with one drawImage, whatever the Area's size, rather than a
 * rectangle a square.
 */
export class FloorImage {
  private canvas: OffscreenCanvas | null = null;
  private image: ImageData | null = null;
  private area = -1;
  private readonly versions = new Map<number, number>();

  /** sync brings the image up to the view's maps and returns it (null before area_info). */
  sync(v: AreaView): OffscreenCanvas | null {
    const i = v.info;
    if (i === null) return null;
    if (this.canvas === null || this.image === null || this.area !== i.area || this.canvas.width !== i.w || this.canvas.height !== i.h) {
      this.canvas = new OffscreenCanvas(i.w, i.h);
      this.image = new ImageData(i.w, i.h);
      this.area = i.area;
      this.versions.clear();
    }
    const img = this.image;
    let dirty = false;
    for (const m of v.maps.values()) {
      if (this.versions.get(m.cell) === m.version) continue;
      this.versions.set(m.cell, m.version);
      dirty = true;
      for (let y = 0; y < m.h; y++) {
        for (let x = 0; x < m.w; x++) {
          put(img, m.x + x, m.y + y, COLORS.floor[m.floor[y * m.w + x] as number] ?? COLORS.floorUnknownKind);
        }
      }
      for (const o of m.objects) put(img, o.x, o.y, objectColor(o.kind, o.state));
    }
    if (dirty) this.canvas.getContext("2d")?.putImageData(img, 0, 0);
    return this.canvas;
  }
}

/** rgb parses a colour "#rrggbb" once per colour. */
const rgbCache = new Map<string, [number, number, number]>();
function rgb(c: string): [number, number, number] {
  let v = rgbCache.get(c);
  if (v === undefined) {
    v = /^#[0-9a-f]{6}$/i.test(c) ? [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)] : [90, 45, 90];
    rgbCache.set(c, v);
  }
  return v;
}

function put(img: ImageData, x: number, y: number, color: string): void {
  if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  const [r, g, b] = rgb(color);
  const at = (y * img.width + x) * 4;
  img.data[at] = r;
  img.data[at + 1] = g;
  img.data[at + 2] = b;
  img.data[at + 3] = 255;
}

/** Where a frame drew the Area: a square's size in CSS pixels, and the offset of square (0, 0). */
export interface Camera {
  sq: number;
  ox: number;
  oy: number;
}

/** squareAt returns the square drawn at CSS pixel (x, y) of the canvas under cam. */
export function squareAt(cam: Camera, x: number, y: number): { x: number; y: number } {
  return { x: Math.floor((x + cam.ox) / cam.sq), y: Math.floor((y + cam.oy) / cam.sq) };
}

/** drawSpectate draws s on canvas, sized to its CSS box, the floor from floor's image; it returns where it drew the Area (null before area_info). */
export function drawSpectate(canvas: HTMLCanvasElement, floor: FloorImage, s: SpectateScene): Camera | null {
  const ctx = canvas.getContext("2d");
  const info = s.view.info;
  if (ctx === null) return null;
  const dpr = window.devicePixelRatio || 1;
  const cw = Math.max(1, canvas.clientWidth);
  const ch = Math.max(1, canvas.clientHeight);
  if (canvas.width !== Math.round(cw * dpr) || canvas.height !== Math.round(ch * dpr)) {
    canvas.width = Math.round(cw * dpr);
    canvas.height = Math.round(ch * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = COLORS.unknown;
  ctx.fillRect(0, 0, cw, ch);
  if (info === null) return null;

  const followed = s.follow !== 0 ? s.view.entities.get(s.follow) : undefined;
  let sq: number;
  let ox: number;
  let oy: number;
  if (followed !== undefined) {
    sq = FOLLOW_SQUARE;
    ox = camera(followed.x + 0.5, cw / sq, info.w) * sq;
    oy = camera(followed.y + 0.5, ch / sq, info.h) * sq;
  } else {
    sq = Math.max(1, Math.min(cw / info.w, ch / info.h));
    ox = -(cw - info.w * sq) / 2;
    oy = -(ch - info.h * sq) / 2;
  }
  const x0 = Math.max(0, Math.floor(ox / sq));
  const y0 = Math.max(0, Math.floor(oy / sq));
  const x1 = Math.min(info.w - 1, Math.floor((ox + cw) / sq));
  const y1 = Math.min(info.h - 1, Math.floor((oy + ch) / sq));

  // The floor and its objects, from the image (squares whose map has not
  // come stay the unknown colour: the image is transparent there).
  const img = floor.sync(s.view);
  if (img !== null) {
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, -ox, -oy, info.w * sq, info.h * sq);
  }
  if (sq >= 6) {
    // Close enough to see them: objects drawn inside their square, the floor showing round them.
    for (const m of s.view.maps.values()) {
      for (const o of m.objects) {
        if (o.x < x0 || o.x > x1 || o.y < y0 || o.y > y1) continue;
        const k = s.view.floorAt(o.x, o.y);
        ctx.fillStyle = k === undefined ? COLORS.unknown : (COLORS.floor[k] ?? COLORS.floorUnknownKind);
        ctx.fillRect(o.x * sq - ox, o.y * sq - oy, sq, sq);
        ctx.fillStyle = objectColor(o.kind, o.state);
        const pad = sq * 0.15;
        ctx.fillRect(o.x * sq - ox + pad, o.y * sq - oy + pad, sq - 2 * pad, sq - 2 * pad);
      }
    }
  }

  // The overlays: the cells the point of view is not sent, dimmed; the cell grid.
  const cs = info.cellSize;
  const across = Math.ceil(info.w / cs);
  if (s.pov) {
    ctx.fillStyle = COLORS.unheld;
    for (let c = 0; c < s.view.cells(); c++) {
      if (s.view.held.has(c)) continue;
      ctx.fillRect((c % across) * cs * sq - ox, Math.floor(c / across) * cs * sq - oy, cs * sq, cs * sq);
    }
  }
  if (s.cells) {
    if (followed !== undefined) {
      ctx.fillStyle = "rgba(242, 193, 78, 0.12)";
      for (const c of interestCells(s.view, followed.x, followed.y, info.interestRadius)) {
        ctx.fillRect((c % across) * cs * sq - ox, Math.floor(c / across) * cs * sq - oy, cs * sq, cs * sq);
      }
    }
    ctx.strokeStyle = "rgba(242, 193, 78, 0.55)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let x = 0; x <= info.w; x += cs) {
      ctx.moveTo(x * sq - ox + 0.5, -oy);
      ctx.lineTo(x * sq - ox + 0.5, info.h * sq - oy);
    }
    ctx.moveTo(info.w * sq - ox - 0.5, -oy);
    ctx.lineTo(info.w * sq - ox - 0.5, info.h * sq - oy);
    for (let y = 0; y <= info.h; y += cs) {
      ctx.moveTo(-ox, y * sq - oy + 0.5);
      ctx.lineTo(info.w * sq - ox, y * sq - oy + 0.5);
    }
    ctx.moveTo(-ox, info.h * sq - oy - 0.5);
    ctx.lineTo(info.w * sq - ox, info.h * sq - oy - 0.5);
    ctx.stroke();
  }

  // The flow field: from each square it reaches, its first step towards
  // the target (a tint where squares are too small for arrows); the
  // target's square ringed, the creature too.
  const f = s.flow;
  if (f !== null && f.w > 0) {
    ctx.strokeStyle = "rgba(176, 107, 255, 0.8)";
    ctx.fillStyle = sq < 5 ? "rgba(176, 107, 255, 0.22)" : "rgba(176, 107, 255, 0.8)";
    ctx.lineWidth = Math.max(1, sq / 10);
    ctx.beginPath();
    for (let j = 0; j < f.h; j++) {
      const y = f.y + j;
      if (y < y0 || y > y1) continue;
      for (let i = 0; i < f.w; i++) {
        const x = f.x + i;
        const d = f.dirs[j * f.w + i] as number;
        if (x < x0 || x > x1 || d > 7) continue;
        const cx = x * sq - ox + sq / 2;
        const cy = y * sq - oy + sq / 2;
        if (sq < 5) {
          ctx.fillRect(x * sq - ox, y * sq - oy, sq, sq);
          continue;
        }
        // A stroke from behind the middle to a dot near the edge it leaves by.
        const [dx, dy] = DIR_DELTA[d] as readonly [number, number];
        const len = sq * 0.38;
        ctx.moveTo(cx - dx * len * 0.6, cy - dy * len * 0.6);
        ctx.lineTo(cx + dx * len, cy + dy * len);
        const dot = Math.max(2, sq / 6);
        ctx.fillRect(cx + dx * len - dot / 2, cy + dy * len - dot / 2, dot, dot);
      }
    }
    ctx.stroke();
    for (let k = 0; k < f.dirs.length; k++) {
      if (f.dirs[k] !== FLOW_TARGET) continue;
      ring(ctx, (f.x + (k % f.w)) * sq - ox + sq / 2, (f.y + Math.floor(k / f.w)) * sq - oy + sq / 2, sq * 0.7, "#b06bff");
    }
  }
  if (f !== null) {
    const c = s.view.entities.get(f.creature);
    if (c !== undefined) ring(ctx, c.x * sq - ox + sq / 2, c.y * sq - oy + sq / 2, sq * 0.75, "#e2c6ff");
  }

  // The bodies: creatures, then players, the followed one last; names of players.
  const bodies = [...s.view.entities.values()].sort((a, b) => a.kind - b.kind || (a.id === s.follow ? 1 : b.id === s.follow ? -1 : a.id - b.id));
  const r = Math.max(1.5, sq * 0.4);
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  for (const e of bodies) {
    const cx = e.x * sq - ox + sq / 2;
    const cy = e.y * sq - oy + sq / 2;
    const player = e.kind === EntityKind.Player;
    ctx.globalAlpha = (e.flags & EntityFlag.Away) !== 0 ? 0.5 : 1;
    ctx.fillStyle = e.id === s.follow ? COLORS.self : player ? COLORS.player : creatureColor(s.view.creatureKind(e.look)?.name);
    ctx.beginPath();
    ctx.arc(cx, cy, player ? r * 1.15 : r, 0, Math.PI * 2);
    ctx.fill();
    ctx.globalAlpha = 1;
    if (player) {
      const name = s.view.players.get(e.id) ?? `#${e.id}`;
      ctx.fillStyle = COLORS.nameShadow;
      ctx.fillText(name, cx + 1, cy - r * 1.3 - 2);
      ctx.fillStyle = COLORS.name;
      ctx.fillText(name, cx, cy - r * 1.3 - 3);
    }
  }
  canvas.dataset["bodies"] = String(bodies.length);
  canvas.dataset["followX"] = followed === undefined ? "" : String(followed.x);
  canvas.dataset["followY"] = followed === undefined ? "" : String(followed.y);
  canvas.dataset["tick"] = String(s.view.tick);
  canvas.dataset["flow"] = f === null ? "" : `${f.creature}:${f.target}`;
  canvas.dataset["camera"] = `${sq} ${ox} ${oy}`;
  return { sq, ox, oy };
}

/** ring strokes a circle of radius r around (x, y). */
function ring(ctx: CanvasRenderingContext2D, x: number, y: number, r: number, color: string): void {
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.arc(x, y, Math.max(3, r), 0, Math.PI * 2);
  ctx.stroke();
}

/** camera returns the left (or top) square of a span of squares centred on centre, stopped at the Area's edges. */
function camera(centre: number, span: number, size: number): number {
  if (span >= size) return -(span - size) / 2;
  return Math.min(Math.max(centre - span / 2, 0), size - span);
}

/** objectColor is the colour a static object is drawn in. */
function objectColor(kind: number, state: number): string {
  switch (kind) {
    case ObjectKind.Door:
      return state === DoorState.Open ? COLORS.doorOpen : COLORS.doorClosed;
    case ObjectKind.Tree:
      return COLORS.treeLight;
    case ObjectKind.Sign:
      return COLORS.signBoard;
    case ObjectKind.Rock:
      return COLORS.rock;
    case ObjectKind.Chest:
      return COLORS.chest;
    case ObjectKind.Portal:
      return COLORS.portal;
    default:
      return COLORS.floorUnknownKind;
  }
}
