/** Prediction and reconciliation with scripted answers, on the Predictor alone. */

import { Dir, IntentKind, type PendingIntent, Predictor, type Terrain, nextSeq, seqAfter, seqAtOrBefore } from "../src/index.js";
import { eq, ok, test } from "./harness.js";

const open: Terrain = { diagonal: true, passable: () => true };

const stepOf = (seq: number, dir: Dir): PendingIntent => ({
  seq,
  kind: IntentKind.Step,
  dir,
  target: { x: 0, y: 0 },
  sentAt: 0,
  resent: false,
});

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

test("prediction: walls, bodies and forbidden diagonals turn the body without moving it", () => {
  const wall: Terrain = { diagonal: false, passable: (x) => x !== 5 };
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: 0 }, wall);
  p.sent(stepOf(1, Dir.E), wall);
  eq(p.predicted, { x: 4, y: 4, facing: Dir.E }, "into a wall");
  p.sent(stepOf(2, Dir.NW), wall);
  eq(p.predicted, { x: 4, y: 4, facing: Dir.NW }, "a diagonal where none are allowed");
  p.sent(stepOf(3, Dir.W), wall);
  eq(p.predicted, { x: 3, y: 4, facing: Dir.W }, "open ground");
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
