/**
 * Areas drawn in text for the prediction tests: the area_info and static
 * frames a server would send of them, encoded by the SDK's own codec, and
 * the engine's replica built from them.
 *
 * @module
 */

import {
  type AreaInfo,
  DoorState,
  type EngineReplica,
  Floor,
  ObjectKind,
  Rule,
  type Static,
  type StaticObject,
  encodeMessage,
} from "../src/index.js";
import { engine } from "./engine.js";

/**
 * DrawnArea is an Area as a client is told of it: its area_info frame and
 * the static frame of each of its cells.
 */
export interface DrawnArea {
  info: AreaInfo;
  frames: { info: Uint8Array; statics: Uint8Array[] };
}

/** What each character of a drawing is. */
const SQUARES: Record<string, { floor: number; object?: Omit<StaticObject, "id" | "x" | "y"> }> = {
  ".": { floor: Floor.Grass },
  "#": { floor: Floor.Wall },
  "~": { floor: Floor.Water },
  D: { floor: Floor.Grass, object: { kind: ObjectKind.Door, state: DoorState.Closed, text: "", item: 0 } },
  O: { floor: Floor.Grass, object: { kind: ObjectKind.Door, state: DoorState.Open, text: "", item: 0 } },
  T: { floor: Floor.Grass, object: { kind: ObjectKind.Tree, state: 0, text: "", item: 0 } },
  v: { floor: Floor.Void },
  d: { floor: Floor.Dirt },
  s: { floor: Floor.Stone },
  a: { floor: Floor.Sand },
  w: { floor: Floor.Wood },
  S: { floor: Floor.Grass, object: { kind: ObjectKind.Sign, state: 0, text: "Inn", item: 0 } },
  R: { floor: Floor.Grass, object: { kind: ObjectKind.Rock, state: 0, text: "", item: 0 } },
  C: { floor: Floor.Grass, object: { kind: ObjectKind.Chest, state: 0, text: "", item: 0 } },
  P: { floor: Floor.Grass, object: { kind: ObjectKind.Portal, state: 0, text: "", item: 0 } },
};

/**
 * drawArea makes the Area of rows (one string a row of squares: "." grass,
 * "#" wall, "~" water, "v" void, "d" dirt, "s" stone, "a" sand, "w" wood;
 * on grass "D" a closed door, "O" an open one, "T" a tree, "S" a sign,
 * "R" a rock, "C" a chest, "P" a portal square),
 * in cells of cellSize squares, allowing diagonal steps or not.
 */
export function drawArea(rows: readonly string[], opts: { diagonal: boolean; cellSize?: number }): DrawnArea {
  const h = rows.length;
  const w = rows[0]?.length ?? 0;
  const cs = opts.cellSize ?? 8;
  const info: AreaInfo = {
    type: "area_info",
    area: 9,
    kind: "village",
    w,
    h,
    cellSize: cs,
    tickHz: 20,
    snapshotHz: 10,
    stepMs: 200,
    queueLen: 8,
    interestRadius: 24,
    resumeGraceMs: 30000,
    rules: opts.diagonal ? Rule.Diagonal : 0,
    playerHp: 100,
    creatures: [],
    items: [],
    plots: [],
  };
  const across = Math.ceil(w / cs);
  const statics: Uint8Array[] = [];
  let id = 1;
  for (let c = 0; c < across * Math.ceil(h / cs); c++) {
    const x0 = (c % across) * cs;
    const y0 = Math.floor(c / across) * cs;
    const floor: number[] = [];
    const objects: StaticObject[] = [];
    for (let y = y0; y < Math.min(y0 + cs, h); y++) {
      for (let x = x0; x < Math.min(x0 + cs, w); x++) {
        const ch = rows[y]?.[x] ?? "";
        const sq = SQUARES[ch];
        if (sq === undefined) throw new Error(`drawArea: "${ch}" at (${x}, ${y})`);
        const n = floor.length;
        if (n > 0 && floor[n - 2] === sq.floor) floor[n - 1] = (floor[n - 1] as number) + 1;
        else floor.push(sq.floor, 1);
        if (sq.object !== undefined) objects.push({ id: id++, x, y, ...sq.object });
      }
    }
    const st: Static = { type: "static", cell: c, version: 1, floor, objects };
    statics.push(encodeMessage(st));
  }
  return { info, frames: { info: encodeMessage(info), statics } };
}

/** replicaOf builds the engine's replica of a drawn Area, every cell's map laid. */
export function replicaOf(a: DrawnArea): EngineReplica {
  const r = engine().replica(a.frames.info);
  for (const f of a.frames.statics) r.static(f);
  return r;
}
