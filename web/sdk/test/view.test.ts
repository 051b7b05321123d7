/** The view: the worked sequence against net/view, and the rules of applying snapshots. */

import {
  AreaView,
  type AreaInfo,
  DoorState,
  EntityKind,
  type EntityState,
  Floor,
  ObjectKind,
  MalformedError,
  RecordWriter,
  type Snapshot,
  ViewError,
  decodeMessage,
  expandShortSnapshot,
  isServerMessage,
} from "../src/index.js";
import { eq, ok, test, throws, unhex } from "./harness.js";

test("the worked sequence of systems/interest/testdata/sequence gives what net/view gives", (fx) => {
  const v = new AreaView();
  const info = decodeMessage(unhex(fx.sequence.areaInfo));
  ok(isServerMessage(info), "area_info is a server message");
  if (!isServerMessage(info)) return;
  v.apply(info);
  eq(fx.sequence.frames.length, 4, "frames");
  let last: Snapshot | null = null; // a short snapshot counts on from the one before
  for (const f of fx.sequence.frames) {
    let m = decodeMessage(unhex(f.hex));
    if (m.type === "short_snapshot" && last !== null) m = expandShortSnapshot(last, m);
    eq(m.type, "snapshot", `${f.name}: type`);
    if (m.type !== "snapshot") return;
    last = m;
    v.apply(m);
    eq(v.sorted(), f.entities, `${f.name}: entities`);
    eq([...v.held].sort((a, b) => a - b), f.held, `${f.name}: held cells`);
  }
});

const info: AreaInfo = {
  type: "area_info",
  area: 5,
  kind: "village",
  w: 20,
  h: 12,
  cellSize: 8,
  tickHz: 20,
  snapshotHz: 10,
  stepMs: 200,
  queueLen: 8,
  interestRadius: 0,
  resumeGraceMs: 30000,
  rules: 1,
  playerHp: 100,
  creatures: [
    { name: "wolf", hp: 30 },
    { name: "deer", hp: 15 },
  ], items: [], plots: [],
};

const ent = (id: number, x: number, y: number, kind = 1, look = 0): EntityState => ({ id, kind, look, x, y, facing: 0, hp: 0, flags: 0 });

const snap = (records: Uint8Array, flags = 0, ackSeq = 0): Snapshot => ({ type: "snapshot", tick: 1, ackSeq, flags, records });

test("view: statics decode row by row, edge cells narrower", () => {
  const v = new AreaView();
  v.apply(info);
  eq(v.cells(), 6, "3 x 2 cells");
  // Cell 2 is squares 16..19 x 0..7: 4 x 8 = 32 squares.
  v.apply({ type: "static", cell: 2, version: 1, floor: [0, 5, 1, 1, 0, 26], objects: [{ id: 1, kind: 3, x: 17, y: 0, state: 1, text: "", item: 0 }] });
  eq(v.floorAt(16, 0), 0, "(16,0)");
  eq(v.floorAt(17, 1), 1, "(17,1): the sixth square, row 1 col 1");
  eq(v.floorAt(19, 7), 0, "(19,7)");
  eq(v.floorAt(0, 0), undefined, "an unknown cell");
  eq(v.objectsAt(17, 0).length, 1, "object");
  throws(() => v.apply({ type: "static", cell: 2, version: 2, floor: [0, 33], objects: [] }), ViewError, "runs past the cell");
  throws(() => v.apply({ type: "static", cell: 2, version: 2, floor: [0, 31], objects: [] }), ViewError, "runs short of the cell");
  throws(() => v.apply({ type: "static", cell: 6, version: 1, floor: [0, 64], objects: [] }), ViewError, "cell beyond");
});

test("view: records move, change and drop entities; unheld cells are dropped", () => {
  const v = new AreaView();
  v.apply(info);
  v.apply(snap(new RecordWriter().cell(0, [ent(1, 1, 1), ent(2, 7, 1)]).cell(1, []).bytes(), 1));
  eq(v.sorted().map((e) => e.id), [1, 2], "after the reset");
  // 2 steps east into cell 1 (held); 1 moves; state of 1.
  v.apply(snap(new RecordWriter().step(2, 2).pos(1, 3, 3).state(1, 9, 2, 4).bytes()));
  eq(v.entities.get(2), { ...ent(2, 8, 1), facing: 2 }, "2 stepped east");
  eq(v.entities.get(1), { id: 1, kind: 1, look: 0, x: 3, y: 3, facing: 4, hp: 9, flags: 2 }, "1 moved and changed");
  // An enter into cell 2, which is not held: dropped at the end.
  v.apply(snap(new RecordWriter().enter(ent(3, 17, 1)).bytes()));
  eq(v.entities.has(3), false, "an entity in an unheld cell");
  v.apply(snap(new RecordWriter().forget(1).bytes()));
  eq(v.sorted().map((e) => e.id), [1], "cell 1 forgotten");
  v.apply(snap(new RecordWriter().gone(1).bytes()));
  eq(v.entities.size, 0, "gone");
  v.apply(snap(new RecordWriter().cell(0, [ent(4, 0, 0)]).bytes(), 1));
  eq([...v.held], [0], "a reset forgets held cells");
});

test("view: a record of an entity it does not hold breaks it", () => {
  const v = new AreaView();
  v.apply(info);
  throws(() => v.apply(snap(new RecordWriter().step(9, 0).bytes())), ViewError, "step of an unknown entity");
  throws(() => v.apply(snap(new RecordWriter().forget(6).bytes())), ViewError, "forget of a cell beyond");
  v.apply(snap(new RecordWriter().cell(0, [ent(1, 0, 0)]).bytes(), 1));
  throws(() => v.apply(snap(new RecordWriter().step(1, 0).bytes())), ViewError, "a step off the grid");
});

test("view: records that do not decode change nothing", () => {
  const v = new AreaView();
  v.apply(info);
  v.apply(snap(new RecordWriter().cell(0, [ent(1, 1, 1)]).bytes(), 1, 3));
  const bad = new Uint8Array([...new RecordWriter().step(1, 2).bytes(), 0x13]);
  throws(() => v.apply(snap(bad, 1, 4)), MalformedError, "bad record");
  eq(v.entities.get(1), ent(1, 1, 1), "unmoved");
  eq(v.ackSeq, 3, "ack unchanged");
});

test("view: a short snapshot is applied as the snapshot it expands to, never as it comes", () => {
  const v = new AreaView();
  v.apply(info);
  const first = snap(new RecordWriter().cell(0, [ent(1, 1, 1)]).bytes(), 1, 3);
  v.apply(first);
  const short = { type: "short_snapshot" as const, tick8: 4, ack8: 5, records: new RecordWriter().step(1, 2).bytes() };
  throws(() => v.apply(short), ViewError, "a short snapshot as it comes");
  eq([v.tick, v.ackSeq, v.entities.get(1)?.x], [1, 3, 1], "unchanged");
  v.apply(expandShortSnapshot(first, short));
  eq([v.tick, v.ackSeq, v.entities.get(1)?.x], [4, 5, 2], "expanded: tick 4, ack 5, stepped east");
});

test("view: a snapshot before area_info breaks it", () => {
  throws(() => new AreaView().apply(snap(new Uint8Array(0))), ViewError, "no area_info");
});

test("view: area_info of another Area starts the view over", () => {
  const v = new AreaView();
  v.apply(info);
  v.apply({ type: "presence", area: 5, players: [{ entity: 1, name: "ada" }] });
  v.apply({ type: "static", cell: 0, version: 1, floor: [0, 64], objects: [] });
  v.apply({ ...info, area: 6 });
  eq(v.players.size + v.maps.size, 0, "presence and maps forgotten");
  v.apply({ ...info, area: 6, stepMs: 100 });
  eq(v.info?.stepMs, 100, "same Area: updated");
});

test("view: each cell's map keeps its floor kinds and static objects, and a new static replaces it", () => {
  const v = new AreaView();
  v.apply(info);
  // Cell 0, row 0: void, grass, dirt, stone, sand, wood, water, wall; row 1: grass.
  v.apply({
    type: "static",
    cell: 0,
    version: 1,
    floor: [Floor.Void, 1, Floor.Grass, 1, Floor.Dirt, 1, Floor.Stone, 1, Floor.Sand, 1, Floor.Wood, 1, Floor.Water, 1, Floor.Wall, 1, Floor.Grass, 56],
    objects: [
      { id: 1, kind: ObjectKind.Door, x: 0, y: 1, state: DoorState.Closed, text: "", item: 0 },
      { id: 4, kind: ObjectKind.Sign, x: 3, y: 1, state: 0, text: "Inn", item: 0 },
    ],
  });
  eq([0, 1, 2, 3, 4, 5, 6, 7].map((x) => v.floorAt(x, 0)), [0, 1, 2, 3, 4, 5, 6, 7], "floor kinds of row 0");
  eq(v.objectAt(3, 1)?.text, "Inn", "the sign's words");
  eq(v.objectAt(7, 1), undefined, "no object");
  eq([v.floorAt(-1, 0), v.floorAt(10, 2)], [undefined, undefined], "off the grid, and a cell whose map has not come");
  // The door opens: its cell's static comes again.
  v.apply({ type: "static", cell: 0, version: 2, floor: [Floor.Grass, 64], objects: [{ id: 1, kind: ObjectKind.Door, x: 0, y: 1, state: DoorState.Open, text: "", item: 0 }] });
  eq(v.objectAt(0, 1)?.state, DoorState.Open, "its state");
  eq([v.floorAt(0, 0), v.objectAt(3, 1)], [Floor.Grass, undefined], "the new map, whole");
});

test("view: entities carry their look; creature kinds and full health come from area_info", () => {
  const v = new AreaView();
  v.apply(info);
  v.apply(snap(new RecordWriter().cell(0, [ent(1, 1, 1, EntityKind.Player), ent(2, 2, 2, EntityKind.Creature, 2), ent(3, 3, 3, EntityKind.Creature, 9)]).bytes(), 1));
  const [p, deer, other] = v.sorted();
  ok(p !== undefined && deer !== undefined && other !== undefined, "three entities");
  if (p === undefined || deer === undefined || other === undefined) return;
  eq(deer.look, 2, "look");
  eq(v.creatureKind(deer.look), { name: "deer", hp: 15 }, "look 2 is the second kind");
  eq([v.creatureKind(0), v.creatureKind(9)], [undefined, undefined], "no kind");
  eq([v.fullHp(p), v.fullHp(deer), v.fullHp(other)], [100, 15, 0], "full health: player_hp, the kind's, none");
});
