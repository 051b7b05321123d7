/** Prediction and reconciliation with scripted answers, on the Predictor alone. */

import {
  Dir,
  IntentKind,
  type PendingIntent,
  Predictor,
  type Terrain,
  actionPose,
  nextSeq,
  seqAfter,
  seqAtOrBefore,
  stepPose,
} from "../src/index.js";
import { eq, ok, test } from "./harness.js";

const open: Terrain = { diagonal: true, passable: () => true };

const stepOf = (seq: number, dir: Dir): PendingIntent => ({
  seq,
  kind: IntentKind.Step,
  dir,
  target: { x: 0, y: 0 },
  sentAt: 0,
  resent: false,
  stale: false,
});

const actionOf = (seq: number, dir: Dir): PendingIntent => ({ ...stepOf(seq, dir), kind: IntentKind.Action });

test("seqs compare in serial-number order on 32 bits", () => {
  const cases: [number, number, boolean][] = [
    [1, 0, true],
    [0, 1, false],
    [0, 4294967295, true],
    [4294967295, 0, false],
    [5, 5, false],
    [2147483648, 1, true],
    [2147483649, 1, false],
  ];
  for (const [a, b, want] of cases) eq(seqAfter(a, b), want, `seqAfter(${a}, ${b})`);
  eq(nextSeq(4294967295), 0, "after 2^32 - 1 comes 0");
  ok(seqAtOrBefore(4294967295, 0) && seqAtOrBefore(0, 0) && !seqAtOrBefore(1, 0), "at or before");
});

test("prediction: steps apply at once; an ack replays what is still pending", () => {
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: 0 }, open);
  p.sent(stepOf(1, Dir.E), open);
  p.sent(stepOf(2, Dir.E), open);
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "two steps predicted");
  eq(p.acked(1).map((q) => q.seq), [1], "ack 1 settles seq 1");
  p.reconcile({ x: 5, y: 4, facing: Dir.E }, open);
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "the server's pose plus step 2");
});

test("prediction: a refused step rolls back, and the later ones replay", () => {
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: 0 }, open);
  p.sent(stepOf(1, Dir.E), open);
  p.sent(stepOf(2, Dir.S), open);
  p.sent(stepOf(3, Dir.E), open);
  eq(p.predicted, { x: 6, y: 5, facing: Dir.E }, "three steps");
  eq(p.take(2)?.seq, 2, "refused");
  p.replay(open);
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "the south step rolled back");
});

test("prediction: a lost snapshot rolls nothing back", () => {
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: 0 }, open);
  for (let s = 1; s <= 3; s++) p.sent(stepOf(s, Dir.E), open);
  const xs = [p.predicted?.x];
  // The snapshot acking seq 1 at (5,4) is lost; the next acks 2 at (6,4).
  p.acked(2);
  p.reconcile({ x: 6, y: 4, facing: Dir.E }, open);
  xs.push(p.predicted?.x);
  p.acked(3);
  p.reconcile({ x: 7, y: 4, facing: Dir.E }, open);
  xs.push(p.predicted?.x);
  eq(xs, [7, 7, 7], "the predicted x after each event");
  eq(p.outstanding.length, 0, "all settled");
});

test("prediction: walls and bodies turn the body without moving it; a forbidden diagonal changes nothing", () => {
  const wall: Terrain = { diagonal: false, passable: (x) => x !== 5 };
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: 0 }, wall);
  p.sent(stepOf(1, Dir.E), wall);
  eq(p.predicted, { x: 4, y: 4, facing: Dir.E }, "into a wall");
  p.sent(stepOf(2, Dir.NW), wall);
  eq(p.predicted, { x: 4, y: 4, facing: Dir.E }, "a diagonal where none are allowed (refused NOT_ALLOWED, no turn)");
  p.sent(stepOf(3, Dir.W), wall);
  eq(p.predicted, { x: 3, y: 4, facing: Dir.W }, "open ground");
});

test("prediction: a diagonal does not cut the corner of a wall; a step off the grid changes nothing", () => {
  // A wall at (5, 4); the grid is 0..9 square.
  const walkable = (x: number, y: number): boolean => !(x === 5 && y === 4);
  const onGrid = (x: number, y: number): boolean => x >= 0 && y >= 0 && x < 10 && y < 10;
  const t: Terrain = { diagonal: true, passable: (x, y) => onGrid(x, y) && walkable(x, y), walkable, onGrid };
  eq(stepPose({ x: 4, y: 4, facing: 0 }, Dir.NE, t), { x: 4, y: 4, facing: Dir.NE }, "NE past the wall's corner: turned, not moved");
  eq(stepPose({ x: 5, y: 5, facing: 0 }, Dir.NE, t), { x: 5, y: 5, facing: Dir.NE }, "NE with the wall on the north side");
  eq(stepPose({ x: 4, y: 4, facing: 0 }, Dir.NW, t), { x: 3, y: 3, facing: Dir.NW }, "NW, clear");
  eq(stepPose({ x: 0, y: 0, facing: Dir.S }, Dir.N, t), { x: 0, y: 0, facing: Dir.S }, "off the grid: refused OUT_OF_BOUNDS, no turn");
  // Without walkable, no corner rule (a Terrain of the earlier SDK).
  eq(stepPose({ x: 4, y: 4, facing: 0 }, Dir.NE, { diagonal: true, passable: () => true }), { x: 5, y: 3, facing: Dir.NE }, "no corner rule");
});

test("prediction: an action turns the body and does not move it; a refused one rolls back", () => {
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: Dir.N }, open);
  p.sent(actionOf(1, Dir.E), open);
  eq(p.predicted, { x: 4, y: 4, facing: Dir.E }, "turned east");
  p.sent(stepOf(2, Dir.S), open);
  eq(p.predicted, { x: 4, y: 5, facing: Dir.S }, "then a step");
  p.take(1);
  p.replay(open);
  eq(p.predicted, { x: 4, y: 5, facing: Dir.S }, "the step replayed without the action");
  eq(actionPose({ x: 1, y: 1, facing: 0 }, Dir.SE, { diagonal: false, passable: () => true }), { x: 1, y: 1, facing: 0 }, "a diagonal action where none are allowed");
});

test("prediction: acks settle in serial order across the wrap", () => {
  const p = new Predictor();
  p.reconcile({ x: 10, y: 10, facing: 0 }, open);
  for (const s of [4294967294, 4294967295, 0, 1]) p.sent(stepOf(s, Dir.N), open);
  eq(p.acked(0).map((q) => q.seq), [4294967294, 4294967295, 0], "ack 0 settles the seqs before the wrap");
  eq(p.outstanding.map((q) => q.seq), [1], "seq 1 pending");
  p.reconcile({ x: 10, y: 7, facing: Dir.N }, open);
  eq(p.predicted, { x: 10, y: 6, facing: Dir.N }, "replayed");
});

test("prediction: no pose before a snapshot shows the body; steps wait for it", () => {
  const p = new Predictor();
  p.sent(stepOf(1, Dir.E), open);
  eq(p.predicted, null, "none yet");
  p.reconcile({ x: 0, y: 0, facing: 0 }, open);
  eq(p.predicted, { x: 1, y: 0, facing: Dir.E }, "the pending step replayed on the first pose");
  eq(p.clear().map((q) => q.seq), [1], "clear voids the pending");
  eq(p.predicted, null, "and forgets the body");
});
