/**
 * Prediction and reconciliation on the Predictor alone, with scripted
 * answers, running on the engine: the server's own movement rules on a
 * replica of Areas drawn in test/areas.ts. And what one prediction costs
 * (a measurement, run by TestSDKPredictionCost).
 */

import {
  Dir,
  type EngineReplica,
  IntentKind,
  type PendingIntent,
  type Pose,
  Predictor,
  nextSeq,
  seqAfter,
  seqAtOrBefore,
} from "../src/index.js";
import { drawArea, replicaOf } from "./areas.js";
import { engine } from "./engine.js";
import { eq, ok, measure, test } from "./harness.js";

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

/** OPEN is a 12 x 10 Area of grass, in cells of 8 (the edge cells narrower), diagonals allowed. */
const OPEN = Array.from({ length: 10 }, () => ".".repeat(12));

/**
 * MAP has a wall at (5, 4), a closed door at (3, 4), an open door at
 * (4, 5), water at (4, 3), and a tree at (8, 2).
 */
const MAP = [
  "............",
  "............",
  "........T...",
  "....~.......",
  "...D.#......",
  "....O.......",
  "............",
  "............",
  "............",
  "............",
];

/** predictorOn makes a Predictor on a replica of rows, with other bodies on the squares of others. */
function predictorOn(rows: readonly string[], diagonal = true, others: number[] = []): Predictor {
  const p = new Predictor({ others: () => Int32Array.from(others) });
  p.replica = replicaOf(drawArea(rows, { diagonal }));
  return p;
}

/** after returns the pose predicted from `from` once the intents are sent. */
function after(p: Predictor, from: Pose, ...intents: PendingIntent[]): Pose | null {
  p.clear();
  p.reconcile(from);
  for (const q of intents) p.sent(q);
  return p.predicted;
}

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

test("prediction: steps onto open ground move at once; an ack replays what is still pending", () => {
  const p = predictorOn(OPEN);
  p.reconcile({ x: 4, y: 4, facing: Dir.N });
  p.sent(stepOf(1, Dir.E));
  eq(p.predicted, { x: 5, y: 4, facing: Dir.E }, "one step");
  p.sent(stepOf(2, Dir.E));
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "two steps");
  eq(p.acked(1).map((q) => q.seq), [1], "ack 1 settles seq 1");
  p.reconcile({ x: 5, y: 4, facing: Dir.E });
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "the server's pose plus step 2");
  eq(p.authoritative, { x: 5, y: 4, facing: Dir.E }, "the server's pose");
});

test("prediction: into a wall, water, a tree or a closed door the body turns without moving; an open door passes", () => {
  const p = predictorOn(MAP);
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.E)), { x: 4, y: 4, facing: Dir.E }, "the wall east");
  eq(after(p, { x: 4, y: 4, facing: Dir.E }, stepOf(1, Dir.N)), { x: 4, y: 4, facing: Dir.N }, "the water north");
  eq(after(p, { x: 8, y: 3, facing: Dir.S }, stepOf(1, Dir.N)), { x: 8, y: 3, facing: Dir.N }, "the tree north");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.W)), { x: 4, y: 4, facing: Dir.W }, "the closed door west");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.S), stepOf(2, Dir.S)), { x: 4, y: 6, facing: Dir.S }, "through the open door south");
});

test("prediction: a door's new static lets the pending steps through", () => {
  const a = drawArea(MAP, { diagonal: true });
  const p = new Predictor();
  p.replica = replicaOf(a);
  p.reconcile({ x: 4, y: 4, facing: Dir.N });
  p.sent(stepOf(1, Dir.W));
  p.sent(stepOf(2, Dir.W));
  eq(p.predicted, { x: 4, y: 4, facing: Dir.W }, "the closed door stops both");
  const opened = drawArea(MAP.map((row) => row.replace("D", "O")), { diagonal: true });
  p.replica.static(opened.frames.statics[0] as Uint8Array);
  p.replay();
  eq(p.predicted, { x: 2, y: 4, facing: Dir.W }, "its cell's static says it is open: through it and on");
});

test("prediction: an action on a door opens or closes it for the steps after it; the replica's map stays as told", () => {
  const p = predictorOn(MAP);
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, actionOf(1, Dir.W), stepOf(2, Dir.W), stepOf(3, Dir.W)), { x: 2, y: 4, facing: Dir.W }, "the closed door west opened, and through");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.W)), { x: 4, y: 4, facing: Dir.W }, "closed again for the next prediction: it was only a prediction");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, actionOf(1, Dir.S), stepOf(2, Dir.S)), { x: 4, y: 4, facing: Dir.S }, "the open door south closed: turned, not moved");
});

test("prediction: a diagonal does not cut the corner of a wall (the body turns only), and goes where none stands", () => {
  const p = predictorOn(MAP);
  // The wall stands at (5, 4).
  eq(after(p, { x: 6, y: 4, facing: Dir.N }, stepOf(1, Dir.NW)), { x: 6, y: 4, facing: Dir.NW }, "NW to (5, 3), the wall west: turned, not moved");
  eq(after(p, { x: 5, y: 5, facing: Dir.N }, stepOf(1, Dir.NE)), { x: 5, y: 5, facing: Dir.NE }, "NE to (6, 4), the wall north: turned, not moved");
  eq(after(p, { x: 6, y: 5, facing: Dir.N }, stepOf(1, Dir.SE)), { x: 7, y: 6, facing: Dir.SE }, "SE, clear");
  eq(after(p, { x: 6, y: 4, facing: Dir.N }, stepOf(1, Dir.N), stepOf(2, Dir.W)), { x: 5, y: 3, facing: Dir.W }, "around the corner square by square");
});

test("prediction: a diagonal where the Area allows none changes nothing", () => {
  const p = predictorOn(OPEN, false);
  eq(after(p, { x: 4, y: 4, facing: Dir.E }, stepOf(1, Dir.NW)), { x: 4, y: 4, facing: Dir.E }, "a step: refused NOT_ALLOWED, no turn");
  eq(after(p, { x: 4, y: 4, facing: Dir.E }, actionOf(1, Dir.SE)), { x: 4, y: 4, facing: Dir.E }, "an action: no turn either");
  eq(after(p, { x: 4, y: 4, facing: Dir.E }, stepOf(1, Dir.NW), stepOf(2, Dir.N)), { x: 4, y: 3, facing: Dir.N }, "the next step goes on");
});

test("prediction: a step off the grid changes nothing", () => {
  const p = predictorOn(OPEN);
  eq(after(p, { x: 0, y: 0, facing: Dir.S }, stepOf(1, Dir.N)), { x: 0, y: 0, facing: Dir.S }, "north of the top row: refused OUT_OF_BOUNDS, no turn");
  eq(after(p, { x: 11, y: 9, facing: Dir.N }, stepOf(1, Dir.SE)), { x: 11, y: 9, facing: Dir.N }, "past the bottom right corner");
});

test("prediction: another body blocks a step, and the body turns", () => {
  const p = predictorOn(OPEN, true, [5, 4, 9, 9]);
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.E)), { x: 4, y: 4, facing: Dir.E }, "a body east");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.S), stepOf(2, Dir.E), stepOf(3, Dir.N)), { x: 5, y: 5, facing: Dir.N }, "south, east, then north into it: turned, not moved");
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, stepOf(1, Dir.S), stepOf(2, Dir.E), stepOf(3, Dir.E)), { x: 6, y: 5, facing: Dir.E }, "past it");
});

test("prediction: a refused step rolls back, and the later ones replay", () => {
  const p = predictorOn(OPEN);
  p.reconcile({ x: 4, y: 4, facing: 0 });
  p.sent(stepOf(1, Dir.E));
  p.sent(stepOf(2, Dir.S));
  p.sent(stepOf(3, Dir.E));
  eq(p.predicted, { x: 6, y: 5, facing: Dir.E }, "three steps");
  eq(p.take(2)?.seq, 2, "refused");
  p.replay();
  eq(p.predicted, { x: 6, y: 4, facing: Dir.E }, "the south step rolled back");
});

test("prediction: a lost snapshot rolls nothing back", () => {
  const p = predictorOn(OPEN);
  p.reconcile({ x: 4, y: 4, facing: 0 });
  for (let s = 1; s <= 3; s++) p.sent(stepOf(s, Dir.E));
  const xs = [p.predicted?.x];
  // The snapshot acking seq 1 at (5,4) is lost; the next acks 2 at (6,4).
  p.acked(2);
  p.reconcile({ x: 6, y: 4, facing: Dir.E });
  xs.push(p.predicted?.x);
  p.acked(3);
  p.reconcile({ x: 7, y: 4, facing: Dir.E });
  xs.push(p.predicted?.x);
  eq(xs, [7, 7, 7], "the predicted x after each event");
  eq(p.outstanding.length, 0, "all settled");
});

test("prediction: reconcile re-bases the pending intents on the snapshot's pose", () => {
  const p = predictorOn(MAP);
  p.reconcile({ x: 1, y: 1, facing: 0 });
  p.sent(stepOf(1, Dir.S));
  p.sent(stepOf(2, Dir.E));
  eq(p.predicted, { x: 2, y: 2, facing: Dir.E }, "two steps from (1, 1)");
  // The server put the body elsewhere (a push, a respawn): the two replay
  // from there, where the wall south of (5, 3) stops the first.
  p.reconcile({ x: 5, y: 3, facing: Dir.W });
  eq(p.predicted, { x: 6, y: 3, facing: Dir.E }, "south into the wall (turned), then east");
  p.reconcile(null);
  eq(p.predicted, null, "a snapshot without the body: no pose");
});

test("prediction: an action turns the body and does not move it; a refused one rolls back", () => {
  const p = predictorOn(OPEN);
  p.reconcile({ x: 4, y: 4, facing: Dir.N });
  p.sent(actionOf(1, Dir.E));
  eq(p.predicted, { x: 4, y: 4, facing: Dir.E }, "turned east");
  p.sent(stepOf(2, Dir.S));
  eq(p.predicted, { x: 4, y: 5, facing: Dir.S }, "then a step");
  p.sent(actionOf(3, Dir.W));
  eq(p.predicted, { x: 4, y: 5, facing: Dir.W }, "then turned west");
  p.take(3);
  p.replay();
  eq(p.predicted, { x: 4, y: 5, facing: Dir.S }, "the refused action rolled back");
});

test("prediction: move-tos, stops and item intents are the server's: nothing predicted of them", () => {
  const p = predictorOn(OPEN);
  const moveTo: PendingIntent = { ...stepOf(1, 0), kind: IntentKind.MoveTo, target: { x: 9, y: 9 } };
  const craft: PendingIntent = { ...stepOf(2, Dir.E), kind: IntentKind.Craft };
  eq(after(p, { x: 4, y: 4, facing: Dir.N }, moveTo, craft, stepOf(3, Dir.W)), { x: 3, y: 4, facing: Dir.W }, "only the step");
});

test("prediction: acks settle in serial order across the wrap", () => {
  const p = predictorOn(OPEN);
  p.reconcile({ x: 5, y: 9, facing: 0 });
  for (const s of [4294967294, 4294967295, 0, 1]) p.sent(stepOf(s, Dir.N));
  eq(p.acked(0).map((q) => q.seq), [4294967294, 4294967295, 0], "ack 0 settles the seqs before the wrap");
  eq(p.outstanding.map((q) => q.seq), [1], "seq 1 pending");
  p.reconcile({ x: 5, y: 6, facing: Dir.N });
  eq(p.predicted, { x: 5, y: 5, facing: Dir.N }, "replayed");
});

test("prediction: no pose before a snapshot shows the body; steps wait for it", () => {
  const p = predictorOn(OPEN);
  p.sent(stepOf(1, Dir.E));
  eq(p.predicted, null, "none yet");
  p.reconcile({ x: 0, y: 0, facing: 0 });
  eq(p.predicted, { x: 1, y: 0, facing: Dir.E }, "the pending step replayed on the first pose");
  eq(p.clear().map((q) => q.seq), [1], "clear voids the pending");
  eq(p.predicted, null, "and forgets the body");
});

test("prediction: without a replica nothing is predicted: the pose is the server's", () => {
  const p = new Predictor();
  p.reconcile({ x: 4, y: 4, facing: Dir.N });
  p.sent(stepOf(1, Dir.E));
  p.sent(actionOf(2, Dir.S));
  eq(p.predicted, { x: 4, y: 4, facing: Dir.N }, "neither moved nor turned");
  eq(p.outstanding.length, 2, "both pending all the same");
  p.replica = replicaOf(drawArea(OPEN, { diagonal: true }));
  p.replay();
  eq(p.predicted, { x: 5, y: 4, facing: Dir.S }, "given one, both replay");
});

test("prediction: a replica that throws is dropped and told, and nothing is predicted", () => {
  const errors: unknown[] = [];
  const broken: EngineReplica = {
    static: () => {},
    predict: () => {
      throw new Error("Go program has already exited");
    },
    walkable: () => true,
    free: () => {
      freed++;
    },
  };
  let freed = 0;
  const p = new Predictor({ onError: (e) => errors.push(e) });
  p.replica = broken;
  p.reconcile({ x: 4, y: 4, facing: Dir.N });
  p.sent(stepOf(1, Dir.E));
  eq(p.predicted, { x: 4, y: 4, facing: Dir.N }, "the server's pose");
  eq(p.replica, null, "the replica dropped");
  eq(errors.map(String), ["Error: Go program has already exited"], "and told once");
  p.sent(stepOf(2, Dir.E));
  eq(errors.length, 1, "never asked again");
  // An engine whose Go program died (a panic) answers undefined.
  p.replica = { ...broken, predict: () => undefined as unknown as Int32Array };
  p.replay();
  eq([p.predicted, p.replica, errors.length], [{ x: 4, y: 4, facing: Dir.N }, null, 2], "an answer that is no pose: dropped and told too");
  eq(freed, 2, "each dropped replica freed");
  const kept = replicaOf(drawArea(OPEN, { diagonal: true }));
  p.replica = kept;
  p.replica = kept;
  p.replica = null;
  let threw = false;
  try {
    kept.walkable(1, 1);
  } catch {
    threw = true;
  }
  ok(threw, "a replica replaced is freed (once: setting it again frees nothing), and the engine refuses it after");
});

test("prediction: the engine says where a body may stand, by the server's rule (session.walkable asks it)", () => {
  const r = replicaOf(drawArea(["vd.saw~#", "DOTSRCP."], { diagonal: true }));
  eq(
    [0, 1, 2, 3, 4, 5, 6, 7].map((x) => r.walkable(x, 0)),
    [false, true, true, true, true, true, false, false],
    "void, dirt, grass, stone, sand, wood: water and walls stop bodies",
  );
  eq(
    [0, 1, 2, 3, 4, 5, 6, 7].map((x) => r.walkable(x, 1)),
    [false, true, false, false, false, false, true, true],
    "a closed door, a tree, a sign, a rock and a chest stop bodies; an open door and a portal do not",
  );
  eq([r.walkable(-1, 0), r.walkable(8, 0)], [false, false], "off the grid");
});

test("the engine: a call it cannot serve throws, and the engine lives on", () => {
  const throws = (what: string, fn: () => unknown): void => {
    let threw = false;
    try {
      fn();
    } catch (e) {
      threw = e instanceof Error;
    }
    ok(threw, `${what} throws an Error`);
  };
  const sim = engine().sim("home", 1);
  throws("an intent with no arguments", () => (sim.intent as unknown as () => boolean)());
  throws("a template the content has not", () => engine().sim("no such template", 1));
  throws("an area_info that is no frame", () => engine().replica(new Uint8Array([1, 2, 3])));
  const id = sim.join(1);
  ok(sim.intent(id, IntentKind.Step, Dir.E, 0, 0, 1), "after them, the same Sim takes an intent");
  sim.step();
  eq(sim.answers().length % 3, 0, "and answers as a Sim does");
  const r = replicaOf(drawArea(["...."], { diagonal: true }));
  eq(Array.from(r.predict(0, 0, Dir.N, new Int32Array(0), new Int32Array([IntentKind.Step, Dir.E]))), [1, 0, Dir.E], "and predicts");
});

/** COST_AREA is 64 x 64 squares: grass, a wall across with gaps, trees here and there. */
const COST_AREA = Array.from({ length: 64 }, (_, y) =>
  Array.from({ length: 64 }, (_, x) => (y === 40 && x % 10 !== 0 ? "#" : (x * 7 + y * 13) % 29 === 0 ? "T" : ".")).join(""),
);

measure("prediction cost: one predict() in a 64 x 64 Area among 50 other bodies", () => {
  const r = replicaOf(drawArea(COST_AREA, { diagonal: true }));
  // 50 bodies on open squares away from the player's path, spread by a fixed sequence.
  const others: number[] = [];
  for (let i = 0; others.length < 100; i++) {
    const x = (i * 37 + 11) % 64;
    const y = (i * 23 + 5) % 64;
    if (r.walkable(x, y) && !(x >= 20 && x <= 30 && y >= 20 && y <= 30)) others.push(x, y);
  }
  const bodies = Int32Array.from(others);
  const path: Dir[] = [Dir.E, Dir.S, Dir.E, Dir.SE, Dir.S, Dir.E, Dir.S, Dir.SE];
  const counts = [1, 4, 8];
  const SAMPLES = 1000;
  const BATCH = 10; // calls a sample, for a clock coarser than one call
  // The clock's step: the least nonzero difference between two readings.
  let step = Infinity;
  for (let i = 0; i < 1000; i++) {
    const a = performance.now();
    let b = performance.now();
    while (b === a) b = performance.now();
    step = Math.min(step, b - a);
  }
  const figures: Record<string, number> = {
    "clock step (µs)": step * 1000,
    "cross-origin isolated (1 yes)": crossOriginIsolated ? 1 : 0,
    "other bodies": bodies.length / 2,
  };
  const pendings = counts.map((n) => {
    const pending = new Int32Array(2 * n);
    for (let i = 0; i < n; i++) {
      pending[2 * i] = IntentKind.Step;
      pending[2 * i + 1] = path[i] as number;
    }
    const end = r.predict(22, 22, Dir.N, bodies, pending);
    ok(end[0] !== 22 || end[1] !== 22, `the ${n} steps move the body (they ended at ${String(end)})`);
    for (let i = 0; i < 1000; i++) r.predict(22, 22, Dir.N, bodies, pending); // warm up
    return pending;
  });
  // The counts take turns, sample by sample, so that the page's and the
  // machine's ups and downs fall on each alike.
  const per = counts.map((): number[] => []);
  for (let s = 0; s < SAMPLES; s++) {
    pendings.forEach((pending, k) => {
      const t0 = performance.now();
      for (let i = 0; i < BATCH; i++) r.predict(22, 22, Dir.N, bodies, pending);
      per[k]?.push((performance.now() - t0) / BATCH);
    });
  }
  counts.forEach((n, k) => {
    const xs = (per[k] ?? []).sort((a, b) => a - b);
    figures[`${n} pending: median µs a call (${SAMPLES} samples of ${BATCH} calls)`] = (xs[SAMPLES / 2] as number) * 1000;
    figures[`${n} pending: p90 µs a call`] = (xs[Math.floor(SAMPLES * 0.9)] as number) * 1000;
  });
  return figures;
});
