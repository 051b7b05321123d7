/**
 * How placed items look: one drawing per look of the shipped item kinds
 * (content/data/items.json: chair, table, bed, lamp, rug, chest, wooden
 * and stone walls, fence, door, wooden and stone floor tiles, cauldron,
 * stall, sapling, tree, furnace), a rolled sheet for a blueprint (a kind
 * that teaches a recipe), and a box with the kind's initial for a look
 * this client does not know. The same drawings are the inventory's
 * icons. A kind that lives (a sapling, which becomes a tree) says so in
 * its words: itemLabel, itemName.
 */

import { type ItemKind, ItemFlag, ItemSlot } from "@leyworks/ley-sdk";

/** The looks this client draws, by their code in items.json. */
export const Look = {
  Chair: 1,
  Table: 2,
  Bed: 3,
  Lamp: 4,
  Rug: 5,
  Chest: 6,
  WallWood: 7,
  WallStone: 8,
  Fence: 9,
  Door: 10,
  FloorWood: 11,
  FloorStone: 12,
  Cauldron: 17,
  Stall: 19,
  Sapling: 20,
  Tree: 21,
  Furnace: 22,
} as const;

/**
 * The colours of placed items. The web client's tests read some of these
 * off the canvas (a chair's seat): keep web/build_test.go in step.
 */
export const ITEM_COLORS = {
  chairSeat: "#c0843e",
  chairBack: "#7c4f1f",
  tableTop: "#a07a48",
  tableEdge: "#5e4424",
  bedFrame: "#6b4a2a",
  bedBlanket: "#4f6fc4",
  pillow: "#e8e4da",
  lampGlow: "rgba(255, 214, 102, 0.35)",
  lampShade: "#ffd666",
  lampBase: "#3b3024",
  rug: "#a8455a",
  rugBorder: "#e0b86a",
  chest: "#8a5a24",
  chestLid: "#6b4219",
  chestLock: "#e0b040",
  wallWood: "#7a5230",
  wallWoodJoint: "#4e3319",
  wallStone: "#8d8f95",
  wallStoneJoint: "#5d5f65",
  fence: "#b89060",
  floorWood: "#9a6a3a",
  floorWoodJoint: "#744d27",
  floorStone: "#a6a39b",
  floorStoneJoint: "#7d7a73",
  cauldron: "#3d3f44",
  cauldronRim: "#1f2024",
  brew: "#6fbf5a",
  blueprint: "#2f5f9e",
  blueprintLine: "#cfe0ff",
  stallCounter: "#8f6a3e",
  stallAwning: "#c23b3b",
  stallStripe: "#f1e6cf",
  saplingStem: "#6b4a2a",
  saplingLeaf: "#5fbf4f",
  treeCanopy: "#1f5a26",
  treeLight: "#4a9a50",
  treeTrunk: "#5a3c1e",
  furnace: "#6e6a66",
  furnaceMouth: "#2a2624",
  fire: "#ff8a2a",
  unknown: "#5a2d5a",
  unknownText: "#f0d8f0",
} as const;

/** isFloorItem reports whether kind sits in a square's floor slot (a floor tile): drawn under everything else there. */
export function isFloorItem(kind: ItemKind | undefined): boolean {
  return kind?.slot === ItemSlot.Floor;
}

/** isWallLook reports whether look is a wall piece (doors between such pieces hang across the row). */
export function isWallLook(look: number | undefined): boolean {
  return look === Look.WallWood || look === Look.WallStone;
}

/**
 * drawLook draws an item of kind placed on the square whose top left is
 * (X, Y), t pixels a side. A door's look is drawn closed (a placed door on
 * the map is drawn by its state, as the map's doors are).
 */
export function drawLook(ctx: CanvasRenderingContext2D, kind: ItemKind | undefined, X: number, Y: number, t: number): void {
  const c = ITEM_COLORS;
  const rect = (color: string, x: number, y: number, w: number, h: number): void => {
    ctx.fillStyle = color;
    ctx.fillRect(X + t * x, Y + t * y, t * w, t * h);
  };
  if (kind !== undefined && kind.look === 0 && (kind.flags & ItemFlag.Teaches) !== 0) {
    // A blueprint: a blue sheet with the lines of a plan.
    rect(c.blueprint, 0.14, 0.18, 0.72, 0.64);
    rect(c.blueprintLine, 0.24, 0.3, 0.52, 0.04);
    rect(c.blueprintLine, 0.24, 0.3, 0.04, 0.4);
    rect(c.blueprintLine, 0.24, 0.66, 0.52, 0.04);
    rect(c.blueprintLine, 0.5, 0.3, 0.04, 0.4);
    return;
  }
  const ellipse = (color: string, x: number, y: number, rx: number, ry: number): void => {
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.ellipse(X + t * x, Y + t * y, t * rx, t * ry, 0, 0, Math.PI * 2);
    ctx.fill();
  };
  switch (kind?.look) {
    case Look.Stall:
      // A counter under a striped awning.
      rect(c.stallCounter, 0.1, 0.5, 0.8, 0.4);
      rect(c.stallCounter, 0.12, 0.2, 0.06, 0.3);
      rect(c.stallCounter, 0.82, 0.2, 0.06, 0.3);
      for (let i = 0; i < 4; i++) rect(i % 2 === 0 ? c.stallAwning : c.stallStripe, 0.06 + i * 0.22, 0.08, 0.22, 0.18);
      return;
    case Look.Sapling:
      rect(c.saplingStem, 0.47, 0.45, 0.06, 0.45);
      ellipse(c.saplingLeaf, 0.36, 0.45, 0.14, 0.08);
      ellipse(c.saplingLeaf, 0.64, 0.38, 0.14, 0.08);
      ellipse(c.saplingLeaf, 0.5, 0.28, 0.09, 0.12);
      return;
    case Look.Tree:
      rect(c.treeTrunk, 0.44, 0.6, 0.12, 0.34);
      ellipse(c.treeCanopy, 0.5, 0.42, 0.4, 0.36);
      ellipse(c.treeLight, 0.42, 0.34, 0.2, 0.16);
      return;
    case Look.Furnace:
      rect(c.furnace, 0.14, 0.12, 0.72, 0.8);
      rect(c.furnaceMouth, 0.3, 0.5, 0.4, 0.3);
      rect(c.fire, 0.36, 0.62, 0.28, 0.14);
      return;
    case Look.Cauldron:
      rect(c.cauldronRim, 0.2, 0.78, 0.1, 0.14);
      rect(c.cauldronRim, 0.7, 0.78, 0.1, 0.14);
      ellipse(c.cauldron, 0.5, 0.58, 0.36, 0.3);
      ellipse(c.cauldronRim, 0.5, 0.4, 0.34, 0.12);
      ellipse(c.brew, 0.5, 0.41, 0.28, 0.08);
      return;
    case Look.Chair:
      rect(c.chairBack, 0.22, 0.12, 0.56, 0.2);
      rect(c.chairSeat, 0.22, 0.32, 0.56, 0.5);
      rect(c.chairBack, 0.22, 0.82, 0.1, 0.1);
      rect(c.chairBack, 0.68, 0.82, 0.1, 0.1);
      return;
    case Look.Table:
      rect(c.tableEdge, 0.06, 0.14, 0.88, 0.74);
      rect(c.tableTop, 0.1, 0.18, 0.8, 0.62);
      return;
    case Look.Bed:
      rect(c.bedFrame, 0.14, 0.04, 0.72, 0.92);
      rect(c.bedBlanket, 0.18, 0.34, 0.64, 0.58);
      rect(c.pillow, 0.24, 0.1, 0.52, 0.18);
      return;
    case Look.Lamp:
      ctx.fillStyle = c.lampGlow;
      ctx.beginPath();
      ctx.arc(X + t / 2, Y + t / 2, t * 0.48, 0, Math.PI * 2);
      ctx.fill();
      rect(c.lampBase, 0.38, 0.62, 0.24, 0.26);
      ctx.fillStyle = c.lampShade;
      ctx.beginPath();
      ctx.arc(X + t / 2, Y + t * 0.44, t * 0.22, 0, Math.PI * 2);
      ctx.fill();
      return;
    case Look.Rug:
      rect(c.rugBorder, 0.04, 0.16, 0.92, 0.68);
      rect(c.rug, 0.1, 0.22, 0.8, 0.56);
      return;
    case Look.Chest:
      rect(c.chest, 0.14, 0.25, 0.72, 0.55);
      rect(c.chestLid, 0.14, 0.25, 0.72, 0.18);
      rect(c.chestLock, 0.45, 0.38, 0.1, 0.14);
      return;
    case Look.WallWood:
      rect(c.wallWood, 0, 0, 1, 1);
      rect(c.wallWoodJoint, 0, 0.33, 1, 0.04);
      rect(c.wallWoodJoint, 0, 0.66, 1, 0.04);
      return;
    case Look.WallStone:
      rect(c.wallStone, 0, 0, 1, 1);
      rect(c.wallStoneJoint, 0, 0.48, 1, 0.05);
      rect(c.wallStoneJoint, 0.5, 0, 0.05, 0.48);
      rect(c.wallStoneJoint, 0.22, 0.53, 0.05, 0.47);
      return;
    case Look.Fence:
      rect(c.fence, 0.1, 0.2, 0.12, 0.7);
      rect(c.fence, 0.78, 0.2, 0.12, 0.7);
      rect(c.fence, 0, 0.35, 1, 0.1);
      rect(c.fence, 0, 0.62, 1, 0.1);
      return;
    case Look.Door:
      rect(c.wallWoodJoint, 0.06, 0.06, 0.88, 0.88);
      rect(c.chest, 0.14, 0.14, 0.72, 0.72);
      rect(c.chestLock, 0.7, 0.46, 0.08, 0.12);
      return;
    case Look.FloorWood:
      rect(c.floorWood, 0, 0, 1, 1);
      rect(c.floorWoodJoint, 0, 0.25, 1, 0.04);
      rect(c.floorWoodJoint, 0, 0.5, 1, 0.04);
      rect(c.floorWoodJoint, 0, 0.75, 1, 0.04);
      return;
    case Look.FloorStone:
      rect(c.floorStone, 0, 0, 1, 1);
      rect(c.floorStoneJoint, 0, 0.48, 1, 0.05);
      rect(c.floorStoneJoint, 0.48, 0, 0.05, 1);
      return;
    default:
      rect(c.unknown, 0.15, 0.15, 0.7, 0.7);
      ctx.fillStyle = c.unknownText;
      ctx.font = `bold ${Math.round(t * 0.5)}px system-ui, sans-serif`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText((kind?.label ?? "?").slice(0, 1).toUpperCase(), X + t / 2, Y + t / 2);
      ctx.textBaseline = "alphabetic";
  }
}

/** The item kinds by code: the session's itemKinds, or a view's itemKind. */
export type Kinds = ReadonlyMap<number, ItemKind> | ((code: number) => ItemKind | undefined);

/** itemName says what an item kind is, for people, with its article ("a chair", "an oak table"); with kinds, what it grows into ("a sapling (grows into a tree)"). */
export function itemName(kind: ItemKind | undefined, kinds?: Kinds): string {
  const label = (kind?.label || kind?.name || "thing").toLowerCase();
  const grows = kinds === undefined ? undefined : growsInto(kind, kinds);
  return `${/^[aeiou]/.test(label) ? "an" : "a"} ${label}${grows === undefined ? "" : ` (grows into ${itemName(grows)})`}`;
}

/**
 * growsInto is the kind a placed item of kind becomes by itself (a
 * sapling: a tree), from kinds (the session's itemKinds); undefined for a
 * kind that does not live. A code kinds does not hold is a kind of its
 * own, named by its number.
 */
export function growsInto(kind: ItemKind | undefined, kinds: Kinds): ItemKind | undefined {
  if (kind === undefined || kind.becomes === 0) return undefined;
  const grown = typeof kinds === "function" ? kinds(kind.becomes) : kinds.get(kind.becomes);
  return grown ?? ({ code: kind.becomes, name: `item ${kind.becomes}`, label: `item ${kind.becomes}` } as ItemKind);
}

/** itemLabel is a kind's label, saying what it grows into when it lives: "Sapling (grows into Tree)". */
export function itemLabel(kind: ItemKind | undefined, kinds: Kinds, code = 0): string {
  const label = kind?.label ?? `item ${code}`;
  const grows = growsInto(kind, kinds);
  return grows === undefined ? label : `${label} (grows into ${grows.label})`;
}

/** capital gives text with its first letter in capitals. */
export function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
