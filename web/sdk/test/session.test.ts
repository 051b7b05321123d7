/**
 * The session against a scripted server: join correlation, states,
 * prediction and reconciliation through real messages (on the engine, the
 * server's own rules), the reconnect coordinator, takeover, closing
 * Areas, portals, and garbage.
 */

import {
  type AreaInfo,
  CONTAINER_SLOT,
  Code,
  ContainerFlag,
  Dir,
  DoorState,
  type Engine,
  type EngineReplica,
  type EntityState,
  Floor,
  IntentKind,
  ObjectKind,
  type Intent,
  type IntentOutcome,
  type Message,
  type ContainerState,
  type Offered,
  type Recipe,
  RecordWriter,
  Session,
  type SessionOptions,
  type SessionState,
  type Stack,
  type Trade,
  TradeConfirmed,
  TradeStatus,
  encodeMessage,
} from "../src/index.js";
import { engine } from "./engine.js";
import { eq, ok, test, unhex } from "./harness.js";
import { CaptureLogger, FakeClock, FakeDirector, FakeSocket, settle } from "./fakes.js";

const INFO: AreaInfo = {
  type: "area_info",
  area: 5,
  kind: "village",
  w: 24,
  h: 16,
  cellSize: 8,
  tickHz: 20,
  snapshotHz: 10,
  stepMs: 200,
  queueLen: 8,
  interestRadius: 0,
  resumeGraceMs: 30000,
  rules: 1,
  playerHp: 100,
  creatures: [{ name: "deer", hp: 15 }], items: [], plots: [],
};

interface Env {
  clock: FakeClock;
  dir: FakeDirector;
  sockets: FakeSocket[];
  s: Session;
  log: CaptureLogger;
  states: SessionState[];
}

/** newEnv makes a session on fakes, predicting with the engine unless opts say otherwise. */
function newEnv(opts: Partial<SessionOptions> = {}): Env {
  const clock = new FakeClock();
  const dir = new FakeDirector();
  const sockets: FakeSocket[] = [];
  const log = new CaptureLogger();
  const s = new Session({
    director: dir.client(),
    area: 5,
    clock,
    logger: log,
    random: () => 0.5,
    socket: (url) => {
      const ws = new FakeSocket(url);
      sockets.push(ws);
      return ws;
    },
    engine: engine(),
    ...opts,
  });
  const states: SessionState[] = [];
  s.on("state", (e) => states.push(e.state));
  return { clock, dir, sockets, s, log, states };
}

function lastSocket(env: Env): FakeSocket {
  const ws = env.sockets[env.sockets.length - 1];
  if (ws === undefined) throw new Error("no socket opened");
  return ws;
}

const EMPTY_STACK: Stack = { id: 0n, kind: 0, count: 0 };

const player = (id: number, x: number, y: number, hp = 100): EntityState => ({ id, kind: 0, look: 0, x, y, facing: 0, hp, flags: 0 });

/** whole returns records that show every cell of INFO whole, with entities placed in theirs. */
function whole(entities: EntityState[]): Uint8Array {
  const w = new RecordWriter();
  for (let c = 0; c < 6; c++) {
    w.cell(c, entities.filter((e) => Math.floor(e.y / 8) * 3 + Math.floor(e.x / 8) === c));
  }
  return w.bytes();
}

function intents(ws: FakeSocket): Intent[] {
  return ws.sent.filter((m): m is Intent => m.type === "intent");
}

/** bind plays a server through a join: hello_ack, area_info, presence, static, the first snapshot. */
async function bind(env: Env, first = true, at: [number, number] = [4, 4]): Promise<FakeSocket> {
  if (first) {
    env.s.start();
    await settle();
  }
  const ws = lastSocket(env);
  ws.open();
  const hello = ws.sent[0];
  if (hello === undefined || hello.type !== "hello") throw new Error(`first message ${hello?.type}; want hello`);
  env.clock.advance(12);
  ws.deliver({ type: "hello_ack", joinId: hello.joinId, entity: 1, tick: 1, area: 5, resumeToken: "r1", version: 7 });
  ws.deliver(INFO);
  ws.deliver({ type: "presence", area: 5, players: [{ entity: 1, name: "ada" }] });
  ws.deliver({ type: "static", cell: 0, version: 1, floor: [Floor.Grass, 64], objects: [] });
  ws.deliver({ type: "snapshot", tick: 2, ackSeq: 0, flags: 1, records: whole([player(1, at[0], at[1])]) });
  return ws;
}

function snapshot(ackSeq: number, x: number, y: number, reset = true): Message {
  return { type: "snapshot", tick: 3, ackSeq, flags: reset ? 1 : 0, records: whole([player(1, x, y)]) };
}

test("session: ready is bound with the first snapshot applied, not the socket open", async () => {
  const env = newEnv();
  env.s.start();
  await settle();
  eq(env.dir.joins, [5], "one join");
  const ws = lastSocket(env);
  eq(ws.url, "ws://host5.test/ws", "the join's ws_url");
  eq(env.s.state, "connecting", "before open");
  ws.open();
  eq(env.s.state, "binding", "socket open is not ready");
  const hello = ws.sent[0];
  eq(hello, { type: "hello", grant: "g1", joinId: env.dir.lastJoinId, versions: [7] }, "the hello");
  ws.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 1, area: 5, resumeToken: "r1", version: 7 });
  eq(env.s.state, "bound", "after hello_ack");
  ws.deliver(INFO);
  eq(env.s.ready, false, "not ready before a snapshot");
  ws.deliver(snapshot(0, 4, 4));
  eq(env.s.state, "ready", "after the first snapshot");
  eq(env.states, ["joining", "connecting", "binding", "bound", "ready"], "states");
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "own pose");
});

test("session: tickNow counts on from the last snapshot's tick at tick_hz", async () => {
  const env = newEnv();
  const ws = await bind(env);
  eq(env.s.tickNow(), 2, "the first snapshot's tick, at once");
  env.clock.advance(1000); // a second with nothing new: no snapshot came
  eq(env.s.tickNow(), 2 + INFO.tickHz, "a second later, tick_hz ticks on");
  ws.deliver({ type: "snapshot", tick: 40, ackSeq: 0, flags: 0, records: new Uint8Array() });
  eq(env.s.tickNow(), 40, "a snapshot sets it again");
  env.clock.advance(149);
  eq(env.s.tickNow(), 42, "whole ticks only");
});

test("session: a hello_ack or error of another join is dropped", async () => {
  const env = newEnv();
  env.s.start();
  await settle();
  const ws = lastSocket(env);
  ws.open();
  const other = env.dir.lastJoinId + 1n;
  ws.deliver({ type: "hello_ack", joinId: other, entity: 1, tick: 1, area: 5, resumeToken: "r1", version: 7 });
  ws.deliver({ type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: other, detail: "stale" });
  eq(env.s.state, "binding", "still waiting for this join's answer");
  eq(env.s.dropped, 2, "both dropped");
  ws.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 1, area: 5, resumeToken: "r1", version: 7 });
  eq(env.s.state, "bound", "this join's answer settles it");
});

test("session: leave while playing says leave{} before the close, so the body goes at once", async () => {
  const env = newEnv();
  const ws = await bind(env);
  env.s.leave();
  eq(ws.sent[ws.sent.length - 1], { type: "leave" }, "leave{} is the last thing sent");
  eq(ws.closed, { code: 1000, reason: "leave" }, "then the close");
  eq(env.s.state, "ended", "ended");
});

test("session: a join answer that comes after leave opens nothing", async () => {
  const env = newEnv();
  env.dir.hold = true;
  env.s.start();
  await settle();
  env.s.leave();
  env.dir.release();
  await settle();
  eq(env.sockets.length, 0, "no socket");
  eq(env.s.state, "ended", "ended");
});

test("session: steps apply at once; a refused step rolls back", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const outcome = env.s.step(Dir.E);
  eq(env.s.predicted, { x: 5, y: 4, facing: Dir.E }, "predicted at once");
  eq(intents(ws), [{ type: "intent", seq: 1, kind: 0, dir: Dir.E, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } }], "sent with seq 1");
  env.clock.advance(40);
  ws.deliver({ type: "intent_result", seq: 1, code: Code.BLOCKED });
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "rolled back");
  eq(await outcome, { status: "refused", seq: 1, code: Code.BLOCKED }, "the outcome");
  ok(env.s.rttMs !== null && env.s.rttMs > 12 && env.s.rttMs < 40, `rtt smoothed between the samples: ${env.s.rttMs}`);
});

test("session: every snapshot resets the prediction and replays what is pending; a lost one changes nothing", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const outcomes = [env.s.step(Dir.E), env.s.step(Dir.E), env.s.step(Dir.E)];
  const xs: number[] = [env.s.predicted?.x ?? -1];
  // The snapshot acking seq 1 is lost (latest-wins); the next acks 2.
  ws.deliver(snapshot(2, 6, 4, false));
  xs.push(env.s.predicted?.x ?? -1);
  ws.deliver(snapshot(3, 7, 4, false));
  xs.push(env.s.predicted?.x ?? -1);
  eq(xs, [7, 7, 7], "predicted x after each snapshot");
  eq(
    await Promise.all(outcomes),
    [1, 2, 3].map((seq): IntentOutcome => ({ status: "applied", seq })),
    "every step applied",
  );
  eq(env.s.pending, 0, "nothing pending");
});

test("session: a snapshot behind the prediction replays the pending steps on the server's pose", async () => {
  const env = newEnv();
  const ws = await bind(env);
  void env.s.step(Dir.S);
  void env.s.step(Dir.S);
  ws.deliver(snapshot(1, 4, 5, false));
  eq(env.s.predicted, { x: 4, y: 6, facing: Dir.S }, "one applied, one replayed");
  // The server moved the body elsewhere (a portal restore): the pending step replays there.
  ws.deliver(snapshot(1, 10, 10, false));
  eq(env.s.predicted, { x: 10, y: 11, facing: Dir.S }, "replayed on the new pose");
});

test("session: a dropped socket resumes within the grace and sends again what was in flight", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const inFlight = env.s.step(Dir.E);
  ws.drop();
  eq(env.s.state, "reconnecting", "reconnecting");
  const whileDown = env.s.step(Dir.E);
  eq(intents(ws).length, 1, "nothing sent on the dead socket");
  env.clock.advance(10_000);
  const ws2 = lastSocket(env);
  ok(ws2 !== ws && ws2.url === ws.url, "a new socket to the same host");
  ws2.open();
  eq(ws2.sent[0], { type: "resume", token: "r1", joinId: env.dir.lastJoinId }, "resume");
  ws2.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 9, area: 5, resumeToken: "r2", version: 7 });
  eq(
    intents(ws2).map((m) => m.seq),
    [1, 2],
    "the in-flight intent again (same seq), then the one made while down",
  );
  ws2.deliver({ type: "intent_result", seq: 1, code: Code.STALE_SEQ });
  ws2.deliver(INFO);
  ws2.deliver(snapshot(2, 6, 4));
  eq(env.s.state, "ready", "ready again");
  eq(
    await Promise.all([inFlight, whileDown]),
    [
      { status: "unknown", seq: 1 },
      { status: "applied", seq: 2 },
    ],
    "the one in flight at the drop: its answer may have gone with the connection; the one made while down: applied",
  );
  eq(env.dir.joins.length, 1, "no second join");
});

test("session: reconnect delays back off with jitter", async () => {
  const draws = [0.999, 0.999, 0.999, 0.999, 0, 0.5];
  const bindTimeoutMs = 77_777;
  // silenceMs 0: no silence watch, whose timers would mix with the backoffs.
  const env = newEnv({ random: () => draws.shift() ?? 0.5, backoff: { baseMs: 100, maxMs: 500, minMs: 20 }, bindTimeoutMs, silenceMs: 0 });
  const ws = await bind(env);
  const backoffs = (): number[] => env.clock.delays.filter((d) => d !== bindTimeoutMs);
  ws.drop();
  for (let i = 0; i < 5; i++) {
    env.clock.advance(backoffs()[backoffs().length - 1] ?? 0);
    // The host takes the connection and drops it: a resume's connection
    // refused outright would go to the director instead.
    lastSocket(env).open();
    lastSocket(env).drop();
  }
  eq(backoffs(), [99, 199, 399, 499, 20, 250], "full jitter of 100, 200, 400, 500 (capped), then the floor");
});

test("session: past the resume grace, the session joins again and voids what had no answer", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const lost = env.s.step(Dir.E);
  ws.drop();
  // Every resume's connection is taken and dropped until the grace is over.
  while (env.dir.joins.length === 1 && env.s.state !== "ended") {
    env.clock.advance(1000);
    await settle();
    const w = lastSocket(env);
    if (w !== ws && w.closed === null && w.sent.length === 0 && env.dir.joins.length === 1) {
      w.open();
      w.drop();
    }
  }
  ok(env.clock.t > 25_000, `the resumes went on until the grace was nearly over (${env.clock.t} ms)`);
  eq(env.dir.joins, [5, 5], "a second join");
  eq(await lost, { status: "voided", seq: 1 }, "the intent of the ended session");
  const ws3 = lastSocket(env);
  ws3.open();
  eq(ws3.sent[0]?.type, "hello", "a fresh hello");
});

test("session: a new session after a join starts its seqs at 1", async () => {
  const env = newEnv();
  const ws = await bind(env);
  void env.s.step(Dir.E);
  void env.s.step(Dir.E);
  ws.deliver({ type: "rehello", code: Code.INTERNAL, detail: "the Area failed" });
  ws.drop(1011);
  env.clock.advance(10_000);
  await settle();
  eq(env.dir.meCalls, 1, "asked where the character is");
  eq(env.dir.joins, [5, 5], "joined again");
  const ws2 = await bind(env, false);
  void env.s.step(Dir.W);
  eq(intents(ws2).map((m) => m.seq), [1], "seq 1 again");
});

test("session: taken over ends the session; nothing reconnects", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const pending = env.s.step(Dir.E);
  let told = 0;
  env.s.on("takenOver", () => told++);
  ws.deliver({ type: "taken_over" });
  ws.drop(1000);
  env.clock.advance(120_000);
  await settle();
  eq(told, 1, "told");
  eq(env.s.state, "ended", "ended");
  eq(env.s.ended, "taken_over", "why");
  eq(env.sockets.length, 1, "no new socket");
  eq(await pending, { status: "voided", seq: 1 }, "the pending intent was not applied");
  eq(await env.s.step(Dir.E), { status: "voided", seq: null }, "an intent after the end");
});

test("session: the Area closing is announced, then the session joins again", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const seen: number[] = [];
  env.s.on("areaClosing", (e) => seen.push(e.graceMs));
  ws.deliver({ type: "area_closing", reason: Code.AREA_CLOSING, graceMs: 5000 });
  eq(seen, [5000], "announced");
  eq(env.s.state, "ready", "play goes on during the grace");
  ws.deliver({ type: "rehello", code: Code.AREA_CLOSING, detail: "closed" });
  ws.drop(1001);
  env.clock.advance(10_000);
  await settle();
  eq(env.dir.joins, [5, 5], "joined again");
});

test("session: portal_moved connects to the new Area with the grant given", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const pending = env.s.step(Dir.E);
  const moves: string[] = [];
  env.s.on("portalMoved", (e) => moves.push(`${e.from}->${e.to}`));
  ws.deliver({ type: "portal_moved", area: 6, wsUrl: "ws://h2.test/ws", grant: "g-portal", joinId: 99n });
  ws.drop(1000);
  eq(moves, ["5->6"], "told");
  eq(await pending, { status: "voided", seq: 1 }, "the old session's intent");
  const ws2 = lastSocket(env);
  eq(ws2.url, "ws://h2.test/ws", "the new host");
  ws2.open();
  eq(ws2.sent[0], { type: "hello", grant: "g-portal", joinId: 99n, versions: [7] }, "hello with the grant given");
  ws2.deliver({ type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: env.dir.lastJoinId, detail: "the old join" });
  eq(env.s.state, "binding", "an error of the old join is dropped");
  ws2.deliver({ type: "hello_ack", joinId: 99n, entity: 7, tick: 1, area: 6, resumeToken: "r6", version: 7 });
  ws2.deliver({ ...INFO, area: 6 });
  ws2.deliver({ type: "snapshot", tick: 1, ackSeq: 0, flags: 1, records: whole([player(7, 2, 2)]) });
  eq([env.s.state, env.s.area, env.s.entity], ["ready", 6, 7], "in the new Area");
  eq(env.s.view.maps.size, 0, "the old Area's maps are gone");
  eq(env.dir.joins, [5], "no join through the director");
});

test("session: malformed and unknown messages are logged and dropped, never thrown", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const garbage: (Uint8Array | string)[] = [
    new Uint8Array([0xff, 0x00, 0x13]),
    new Uint8Array([0x83, 0x03, 0x07, 0x80]), // unknown type 7
    "a text frame",
    new Uint8Array([0x83, 0x03, 0x0c, 0x84, 0x05, 0x00, 0x00, 0x41, 0x13]), // a record op 0x13
    new Uint8Array([0x83, 0x03, 0x03, 0x85, 0x01, 0x00, 0x00, 0x82, 0x00, 0x00, 0x83, 0x00, 0x00, 0x00]), // a client intent
    new Uint8Array([0x83, 0x03, 0x0b, 0x82, 0x09, 0x0f]), // an answer for seq 9, never sent
  ];
  for (const g of garbage) ws.deliverRaw(g);
  eq(env.s.dropped, garbage.length, "every one dropped");
  eq(env.log.lines.filter((l) => l.level === "warn" && l.msg.startsWith("message dropped")).length, garbage.length, "and logged");
  eq(env.s.state, "ready", "still ready");
  void env.s.step(Dir.E);
  eq(env.s.predicted?.x, 5, "play goes on");
});

test("session: a short snapshot counts on from the connection's last snapshot, of either form", async () => {
  const env = newEnv();
  const ws = await bind(env); // its first snapshot: tick 2, ack_seq 0, whole
  const seen: { tick: number; ackSeq: number }[] = [];
  env.s.on("snapshot", (e) => seen.push(e));
  const outcome = env.s.step(Dir.E);
  ws.deliver({ type: "short_snapshot", tick8: 12, ack8: 1, records: new RecordWriter().step(1, Dir.E).bytes() });
  eq(seen, [{ tick: 12, ackSeq: 1 }], "the snapshot event: tick and ack_seq expanded");
  eq([env.s.view.tick, env.s.view.ackSeq], [12, 1], "the view's tick and ack_seq");
  eq(env.s.view.entities.get(1)?.x, 5, "the step applied");
  eq(await outcome, { status: "applied", seq: 1 }, "the ack settled the step");
  // From a short one, across the tick's low byte: 12 + ((4 - 12) mod 256) = 260.
  ws.deliver({ type: "short_snapshot", tick8: 4, ack8: 1, records: new Uint8Array() });
  // A whole one, then a short one from it: 1000 + ((0xea - 0xe8) mod 256), 300 + ((0x2d - 0x2c) mod 256).
  ws.deliver({ type: "snapshot", tick: 1000, ackSeq: 300, flags: 0, records: new Uint8Array() });
  ws.deliverRaw(unhex("42ea2d"));
  eq(seen.slice(1), [{ tick: 260, ackSeq: 1 }, { tick: 1000, ackSeq: 300 }, { tick: 1002, ackSeq: 301 }], "ticks and acks");
  eq([env.s.dropped, env.s.state], [0, "ready"], "nothing dropped");
});

test("session: a short snapshot first on a connection is malformed: dropped, as any, even with a view from the connection before", async () => {
  const env = newEnv();
  env.s.start();
  await settle();
  const ws = lastSocket(env);
  ws.open();
  ws.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 1, area: 5, resumeToken: "r1", version: 7 });
  ws.deliver(INFO);
  ws.deliver({ type: "short_snapshot", tick8: 2, ack8: 0, records: whole([player(1, 4, 4)]) });
  eq([env.s.dropped, env.s.state], [1, "bound"], "no snapshot before it: dropped; not ready");
  ok(env.log.lines.some((l) => l.level === "warn" && l.msg.startsWith("message dropped") && l.msg.includes("short snapshot")), "and logged");
  ws.deliver({ type: "snapshot", tick: 2, ackSeq: 0, flags: 1, records: whole([player(1, 4, 4)]) });
  eq(env.s.state, "ready", "a whole one makes it ready");
  ws.deliver({ type: "short_snapshot", tick8: 3, ack8: 0, records: new Uint8Array() });
  eq([env.s.view.tick, env.s.dropped], [3, 1], "then a short one counts from it");
  // The connection drops; the resume's connection starts without a last snapshot.
  ws.drop();
  env.clock.advance(10_000);
  const ws2 = lastSocket(env);
  ok(ws2 !== ws, "a new socket");
  ws2.open();
  eq(ws2.sent[0]?.type, "resume", "resume");
  ws2.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 9, area: 5, resumeToken: "r2", version: 7 });
  ws2.deliver(INFO);
  ws2.deliver({ type: "short_snapshot", tick8: 10, ack8: 0, records: new Uint8Array() });
  eq([env.s.dropped, env.s.state, env.s.view.tick], [2, "bound", 3], "dropped: the last snapshot was another connection's");
  ws2.deliver({ type: "snapshot", tick: 10, ackSeq: 0, flags: 1, records: whole([player(1, 4, 4)]) });
  ws2.deliver({ type: "short_snapshot", tick8: 11, ack8: 0, records: new Uint8Array() });
  eq([env.s.dropped, env.s.state, env.s.view.tick], [2, "ready", 11], "the resume's whole snapshot, then short ones");
  // A short snapshot without its tick and ack bytes does not decode.
  ws2.deliverRaw(unhex("4105"));
  eq(env.s.dropped, 3, "one byte: dropped");
});

test("session: a snapshot that breaks the view reconnects and starts it over", async () => {
  const env = newEnv();
  const ws = await bind(env);
  ws.deliver({ type: "snapshot", tick: 5, ackSeq: 0, flags: 0, records: new RecordWriter().step(42, 0).bytes() });
  await settle();
  eq(ws.closed?.code, 4000, "closed");
  eq(env.s.state, "reconnecting", "reconnecting");
  env.clock.advance(10_000);
  eq(lastSocket(env).url, ws.url, "resuming");
});

test("session: a host that never answers hello is dropped after the bind timeout, and resumed", async () => {
  const env = newEnv({ bindTimeoutMs: 3000 });
  const ws = await bind(env);
  ws.drop();
  env.clock.advance(1000);
  const silent = lastSocket(env);
  ok(silent !== ws, "a resume socket");
  silent.open();
  eq(silent.sent[0]?.type, "resume", "resume sent");
  const states: string[] = [];
  env.s.on("state", (e) => states.push(e.state));
  env.clock.advance(3000);
  eq(silent.closed?.code, 1000, "the silent socket is closed");
  eq(states, ["reconnecting", "connecting"], "and the session tries again");
  ok(lastSocket(env) !== silent, "with a new socket");
});

test("session: a bound connection that brings nothing for silenceMs is dropped, and resumed", async () => {
  const env = newEnv({ silenceMs: 3000 });
  const ws = await bind(env);
  env.clock.advance(2500);
  ws.deliver(snapshot(0, 4, 4, false)); // a keep-alive: the host is there
  env.clock.advance(2500);
  eq(ws.closed, null, "heard from 2.5 s ago: kept");
  const states: string[] = [];
  env.s.on("state", (e) => states.push(e.state));
  env.clock.advance(500);
  eq(ws.closed?.code, 4000, "3 s of silence: dropped");
  eq(states, ["reconnecting"], "as any dropped connection");
  env.clock.advance(10_000);
  const again = lastSocket(env);
  ok(again !== ws, "a new socket");
  again.open();
  eq(again.sent[0]?.type, "resume", "which resumes the session");
});

test("session: a portal crossing says which square it left from", async () => {
  const env = newEnv();
  const ws = await bind(env, true, [9, 3]);
  const seen: ({ x: number; y: number } | null)[] = [];
  env.s.on("portalMoved", (e) => seen.push(e.at));
  ws.deliver({ type: "portal_moved", area: 6, wsUrl: "ws://h2.test/ws", grant: "g", joinId: 9n });
  eq(seen, [{ x: 9, y: 3 }], "the square");
});

test("session: REALM_FULL is retried, then the session ends with it", async () => {
  const env = newEnv({ maxJoinAttempts: 3 });
  for (let i = 0; i < 3; i++) {
    env.dir.joinAnswers.push({ status: 503, body: { code: "REALM_FULL", message: "the realm is full" } });
  }
  const retries: boolean[] = [];
  env.s.on("joinRefused", (e) => retries.push(e.willRetry));
  env.s.start();
  for (let i = 0; i < 4; i++) {
    await settle();
    env.clock.advance(10_000);
  }
  eq(retries, [true, true, false], "two retries, then no more");
  eq(env.s.ended, "realm_full", "ended realm_full");
});

test("session: a first join refused IN_ANOTHER_AREA is retried for the Area asked for, not where the character is", async () => {
  // The player left Area 9 a moment ago; its body waits out the resume
  // grace there, and /v1/me still says the character is in 9.
  const env = newEnv();
  env.dir.characterArea = 9;
  env.dir.joinAnswers.push({ status: 409, body: { code: "IN_ANOTHER_AREA", message: "you are playing in another area; leave it first" } });
  env.s.start();
  await settle();
  env.clock.advance(10_000);
  await settle();
  eq(env.dir.joins, [5, 5], "both joins ask for Area 5");
  await bind(env, false);
  eq(env.s.state, "ready", "ready in Area 5");
  eq(env.s.area, 5, "the session's Area");
});

test("session: a session ended after it was bound joins again where /v1/me says the character is", async () => {
  const env = newEnv();
  const ws = await bind(env);
  env.dir.characterArea = 9; // moved on (a portal crossing the client never heard of)
  ws.deliver({ type: "rehello", code: Code.AREA_CLOSING, detail: "the area closed" });
  for (let i = 0; i < 3; i++) {
    await settle();
    env.clock.advance(10_000);
  }
  ok(env.dir.meCalls >= 1, "asked /v1/me");
  eq(env.dir.joins, [5, 9], "joined Area 9");
});

test("session: intents beyond the queue while disconnected are refused TOO_FAST", async () => {
  const env = newEnv();
  const ws = await bind(env);
  ws.drop();
  const outs = [];
  for (let i = 0; i < 9; i++) outs.push(env.s.step(Dir.N));
  eq(await outs[8], { status: "refused", seq: null, code: Code.TOO_FAST }, "the ninth");
  eq(env.s.pending, 8, "eight wait");
});

test("session: action sends the action intent in dir, turns the body, and is answered like a step", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const outcome = env.s.action(Dir.W);
  eq(intents(ws), [{ type: "intent", seq: 1, kind: IntentKind.Action, dir: Dir.W, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } }], "the intent");
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.W }, "turned, not moved");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.NOTHING_THERE });
  eq(await outcome, { status: "refused", seq: 1, code: Code.NOTHING_THERE }, "nothing there");
  const next = env.s.action(Dir.E);
  ws.deliver(snapshot(2, 4, 4, false));
  eq(await next, { status: "applied", seq: 2 }, "an applied action");
});

test("session: the inventory keeps its stash, and area_info's plots show", async () => {
  const env = newEnv();
  const ws = await bind(env);
  eq([env.s.inventory, env.s.stash, env.s.plots], [[], [], []], "nothing before the messages");
  const events: { slots: readonly Stack[]; stash: readonly Stack[] }[] = [];
  env.s.on("inventory", (e) => events.push(e));
  const wood: Stack = { id: (7n << 32n) | 1n, kind: 13, count: 12 };
  const stashed: Stack = { id: (3n << 32n) | 2n, kind: 14, count: 5 };
  const slots = [wood, ...Array.from({ length: 19 }, () => ({ id: 0n, kind: 0, count: 0 }))];
  ws.deliver({ type: "inventory", slots, stash: [stashed] });
  eq(env.s.inventory, slots, "the slots");
  eq(env.s.stash, [stashed], "the stash");
  eq(events, [{ slots, stash: [stashed] }], "one inventory event, with the stash");
  ws.deliver({ type: "inventory", slots, stash: [] });
  eq(env.s.stash, [], "given back: the stash is empty");
  eq(events[1]?.stash, [], "the event says so");
  ws.deliver({ ...INFO, plots: [{ x: 2, y: 3, w: 4, h: 2 }] });
  eq(env.s.plots, [{ x: 2, y: 3, w: 4, h: 2 }], "the plots of area_info");
  ws.deliver(INFO);
  eq(env.s.plots, [], "an area_info without plots");
});

test("session: prediction walks where the map lets it: a closed door stops it unless an action opens it, or its static says it is open", async () => {
  const env = newEnv();
  const ws = await bind(env);
  // A closed door east of the body, at (5, 4); water south of it, at (4, 5).
  const door = (state: number, version: number): Message => ({
    type: "static",
    cell: 0,
    version,
    floor: [Floor.Grass, 44, Floor.Water, 1, Floor.Grass, 19],
    objects: [{ id: 9, kind: ObjectKind.Door, x: 5, y: 4, state, text: "", item: 0 }],
  });
  ws.deliver(door(DoorState.Closed, 2));
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.E }, "a closed door: turned, not moved");
  void env.s.step(Dir.S);
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.S }, "water: turned, not moved");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.BLOCKED });
  ws.deliver({ type: "intent_result", seq: 2, code: Code.BLOCKED });
  void env.s.action(Dir.E);
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 5, y: 4, facing: Dir.E }, "the action opens it, as the server's does: the step goes through");
  ws.deliver({ type: "intent_result", seq: 3, code: Code.NOT_ALLOWED });
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.E }, "the action refused: the door stays closed, the step stops");
  ws.deliver(door(DoorState.Open, 3));
  ws.deliver(snapshot(3, 4, 4, false));
  eq(env.s.predicted, { x: 5, y: 4, facing: Dir.E }, "the door's static came: the pending step replays through it");
  eq(env.s.view.objectAt(5, 4)?.state, DoorState.Open, "the view's door");
});

test("session: drawables carry the look, the creature kind's name and full health", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const deer: EntityState = { id: 2, kind: 1, look: 1, x: 6, y: 4, facing: 0, hp: 9, flags: 0 };
  ws.deliver({ type: "snapshot", tick: 3, ackSeq: 0, flags: 1, records: whole([player(1, 4, 4, 80), deer]) });
  const d = env.s.drawables(env.clock.now()).sort((a, b) => a.id - b.id);
  eq(
    d.map((e) => [e.id, e.look, e.creature, e.hp, e.fullHp, e.self]),
    [
      [1, 0, undefined, 80, 100, true],
      [2, 1, "deer", 9, 15, false],
    ],
    "id, look, creature, hp, full hp, self",
  );
  eq(env.s.self?.hp, 80, "the own body's hp");
});

test("session: a body killed and brought back at full health is announced", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const seen: string[] = [];
  env.s.on("respawned", (e) => seen.push(`${e.from.x},${e.from.y}->${e.at.x},${e.at.y} hp ${e.hp}`));
  const at = (x: number, y: number, hp: number): Message => ({ type: "snapshot", tick: 5, ackSeq: 0, flags: 0, records: whole([player(1, x, y, hp)]) });
  ws.deliver(at(4, 4, 100));
  ws.deliver(at(5, 4, 40)); // hurt, and a step
  eq(seen, [], "hurt is not dead");
  ws.deliver(at(20, 12, 100)); // back at full health, far away
  eq(seen, ["5,4->20,12 hp 100"], "killed and back");
  ws.deliver(at(20, 12, 0)); // seen at 0 ...
  ws.deliver(at(20, 12, 100)); // ... and back where it fell
  eq(seen.length, 2, "seen at 0 hp, then full");
  ws.deliver(at(21, 12, 100));
  eq(seen.length, 2, "a step at full health is nothing");
  ws.deliver(at(21, 12, 10));
  ws.deliver(at(22, 12, 100)); // killed beside the spawn point: back one square away
  eq(seen[2], "21,12->22,12 hp 100", "killed next to where it comes back");
  ws.deliver(at(22, 12, 92));
  ws.deliver(at(23, 12, 92));
  eq(seen.length, 3, "hurt and walking is nothing");
});

test("session: after a resume, a resent intent whose first copy's answer was lost is settled, not left pending", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const first = env.s.step(Dir.E);
  const second = env.s.step(Dir.E);
  ws.drop();
  env.clock.advance(10_000);
  const ws2 = lastSocket(env);
  ws2.open();
  ws2.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 100, area: 5, resumeToken: "r2", version: 7 });
  eq(intents(ws2).map((m) => m.seq), [1, 2], "both sent again");
  // The server had both: 1 was applied, 2 refused on the lost connection.
  ws2.deliver({ type: "intent_result", seq: 1, code: Code.STALE_SEQ });
  ws2.deliver({ type: "intent_result", seq: 2, code: Code.STALE_SEQ });
  ws2.deliver(INFO);
  ws2.deliver({ type: "snapshot", tick: 101, ackSeq: 1, flags: 1, records: whole([player(1, 5, 4)]) });
  eq(await first, { status: "unknown", seq: 1 }, "the ack settles the first");
  eq(env.s.pending, 1, "the second may still be queued on the server");
  eq(env.s.predicted, { x: 6, y: 4, facing: Dir.E }, "and is replayed meanwhile");
  // (queue_len + 1) step periods: 9 x 200 ms at 20 ticks a second is 36 ticks.
  ws2.deliver({ type: "snapshot", tick: 135, ackSeq: 1, flags: 0, records: whole([player(1, 5, 4)]) });
  eq(env.s.pending, 1, "not yet");
  ws2.deliver({ type: "snapshot", tick: 136, ackSeq: 1, flags: 0, records: whole([player(1, 5, 4)]) });
  eq(await second, { status: "unknown", seq: 2 }, "its answer went with the connection");
  eq([env.s.pending, env.s.predicted], [0, { x: 5, y: 4, facing: 0 }], "re-based on the snapshot, nothing replayed");
  eq(env.s.dropped, 0, "no answer was taken for garbage");
});

test("session: a resume refused at the transport goes to the director at once, which says where the character is", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const lost = env.s.step(Dir.E);
  const t0 = env.clock.t;
  ws.drop(); // the host was killed
  env.clock.advance(300); // the first resume's backoff (at most 250 ms)
  const refused = lastSocket(env);
  ok(refused !== ws && refused.url === ws.url, "one resume tried on the old host");
  env.dir.characterArea = 5;
  env.dir.joinAnswers.push({ status: 200, body: { grant: "g-new", ws_url: "ws://host-b.test/ws", join_id: "77", area: 5 } });
  refused.drop(); // nothing listens there: refused before it opened
  await settle();
  eq(env.dir.meCalls, 1, "asked the director where the character is, at once");
  eq(env.dir.joins, [5, 5], "and joined through it");
  const ws2 = lastSocket(env);
  eq(ws2.url, "ws://host-b.test/ws", "the Area's new host");
  eq(await lost, { status: "voided", seq: 1 }, "the old session's intent: not applied as far as anyone will say");
  eq(env.clock.t - t0, 300, "no wait beyond the one resume");
  ws2.open();
  eq(ws2.sent[0], { type: "hello", grant: "g-new", joinId: 77n, versions: [7] }, "hello with the new grant");
  eq(env.sockets.filter((w) => w.url === ws.url).length, 2, "the dead address tried once, never again");
});

test("session: a director that does not answer either is retried without end, alternating with the resume, until it answers", async () => {
  const env = newEnv({ maxJoinAttempts: 2, backoff: { baseMs: 100, maxMs: 1000, minMs: 10 } });
  const ws = await bind(env);
  ws.drop();
  // Every socket is refused and no request reaches the director, for a minute.
  env.dir.unreachable = true;
  const refused: string[] = [];
  env.s.on("joinRefused", (e) => refused.push(`${e.code}:${e.willRetry}`));
  for (let i = 0; i < 60; i++) {
    env.clock.advance(1000);
    await settle();
    const w = lastSocket(env);
    if (w.closed === null && w.sent.length === 0) w.drop();
  }
  eq(env.s.state === "ended", false, `still trying (${env.s.ended})`);
  ok(refused.length > 2 && refused.every((r) => r === "NETWORK:true"), `every unanswered join retried: ${refused.join(" ")}`);
  const next = env.s.nextAttempt;
  ok(next !== null && next.at > env.clock.t && next.at - env.clock.t <= 1000, `the next attempt is scheduled, within the cap: ${JSON.stringify(next)}`);
  env.dir.unreachable = false;
  env.s.retryNow();
  await settle();
  if (env.s.state === "connecting") lastSocket(env).drop();
  await settle();
  env.clock.advance(1000);
  await settle();
  ok(env.dir.joins.length > 1, "the director asked again");
  await bind(env, false);
  eq(env.s.state, "ready", "back in play once the realm answers");
});

test("session: leave closes the socket cleanly and ends the session", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const pending = env.s.step(Dir.E);
  env.s.leave();
  eq(ws.closed, { code: 1000, reason: "leave" }, "closed with 1000, leave");
  eq(env.s.ended, "left", "ended: left");
  eq(await pending, { status: "voided", seq: 1 }, "the pending intent voided");
  env.s.leave();
  env.clock.advance(60_000);
  await settle();
  eq(env.sockets.length, 1, "nothing reconnects");
});

test("session: blows and deaths are told from the snapshots", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const hits: string[] = [];
  const deaths: string[] = [];
  env.s.on("hit", (h) => hits.push(`${h.targetName}-${h.damage}=${h.hp}/${h.fullHp} by ${h.bySelf ? "me" : (h.byName ?? "?")}`));
  env.s.on("death", (d) => deaths.push(`${d.name}@${d.x},${d.y} by ${d.bySelf ? "me" : (d.byName ?? "?")}${d.self ? " (self)" : ""}`));
  ws.deliver({ type: "presence", area: 5, players: [{ entity: 1, name: "ada" }, { entity: 2, name: "bo" }] });
  const deer = (hp: number): EntityState => ({ id: 9, kind: 1, look: 1, x: 5, y: 4, facing: Dir.W, hp, flags: 0 });
  const bo = (x: number, y: number, hp: number, facing = 0): EntityState => ({ id: 2, kind: 0, look: 0, x, y, facing, hp, flags: 0 });
  const snap = (ack: number, es: EntityState[]): Message => ({ type: "snapshot", tick: 5, ackSeq: ack, flags: 0, records: whole(es) });
  ws.deliver(snap(0, [player(1, 4, 4), deer(15), bo(10, 10, 100)]));
  void env.s.action(Dir.E); // seq 1, at the deer
  ws.deliver(snap(1, [player(1, 4, 4), deer(7), bo(10, 10, 100)]));
  eq(hits, ["deer-8=7/15 by me"], "my blow");
  void env.s.action(Dir.E);
  const w = new RecordWriter();
  w.gone(9);
  ws.deliver({ type: "snapshot", tick: 6, ackSeq: 2, flags: 0, records: w.bytes() });
  eq(hits.slice(1), ["deer-7=0/15 by me"], "the killing blow: what was left");
  eq(deaths, ["deer@5,4 by me"], "the deer killed");
  // bo, next to ada and facing her (west), hurts her; then she dies.
  ws.deliver(snap(2, [player(1, 4, 4), bo(5, 4, 100, Dir.W)]));
  ws.deliver(snap(2, [player(1, 4, 4, 92), bo(5, 4, 100, Dir.W)]));
  eq(hits.slice(2), ["ada-8=92/100 by bo"], "bo hits ada");
  ws.deliver(snap(2, [player(1, 20, 12, 100), bo(5, 4, 100, Dir.W)]));
  eq(deaths.slice(1), ["ada@4,4 by bo (self)"], "ada killed by bo, where she stood");
  // A creature leaving the view (a forget) is no death.
  const f = new RecordWriter();
  f.forget(0);
  ws.deliver({ type: "snapshot", tick: 7, ackSeq: 2, flags: 0, records: f.bytes() });
  eq(deaths.length, 2, "no more deaths");
});

test("session: recipes are what the last recipes message said, whole, each with an event", async () => {
  const env = newEnv();
  const ws = await bind(env);
  eq(env.s.recipes, [], "none before the message");
  const events: (readonly Recipe[])[] = [];
  env.s.on("recipes", (e) => events.push(e.known));
  const planks: Recipe = { code: 1, name: "planks", station: "cauldron", inputs: [{ kind: 13, count: 2 }], outputs: [{ kind: 15, count: 4 }], seconds: 0 };
  const table: Recipe = {
    code: 3,
    name: "table",
    station: "cauldron",
    inputs: [
      { kind: 14, count: 1 },
      { kind: 15, count: 4 },
    ],
    outputs: [{ kind: 2, count: 1 }],
    seconds: 0,
  };
  ws.deliver({ type: "recipes", known: [] });
  eq([env.s.recipes, events], [[], [[]]], "a bind's empty list: an event, none known");
  ws.deliver({ type: "recipes", known: [planks] });
  eq(env.s.recipes, [planks], "one learned");
  ws.deliver({ type: "recipes", known: [planks, table] });
  eq(env.s.recipes, [planks, table], "replaced whole, not added to");
  eq(events, [[], [planks], [planks, table]], "one event a message");
  const dropped = env.s.dropped;
  ws.deliverRaw(unhex("8307181981818401" + "6170" + "6163" + "80")); // a recipe of four fields
  eq([env.s.dropped, env.s.recipes, events.length], [dropped + 1, [planks, table], 3], "a malformed recipes message is dropped and changes nothing");
});

test("session: craft sends the craft intent toward the station, and is answered like any intent", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const refused = env.s.craft(Dir.E);
  eq(intents(ws), [{ type: "intent", seq: 1, kind: IntentKind.Craft, dir: Dir.E, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: 0 } }], "the intent");
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "nothing predicted: the body neither moves nor turns");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.NO_RECIPE });
  eq(await refused, { status: "refused", seq: 1, code: Code.NO_RECIPE }, "no recipe matched");
  const applied = env.s.craft(Dir.S);
  ws.deliver(snapshot(2, 4, 4, false));
  eq(await applied, { status: "applied", seq: 2 }, "a craft applied");
});

test("session: use sends the use intent of an inventory slot; a known recipe is refused KNOWN", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const refusals: [number, string][] = [];
  env.s.on("intentRefused", (e) => refusals.push([e.code, e.name]));
  const known = env.s.use(3);
  eq(intents(ws), [{ type: "intent", seq: 1, kind: IntentKind.Use, dir: 0, target: { x: 0, y: 0 }, item: { from: 3, to: 0, count: 0 } }], "the intent");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.KNOWN });
  eq(await known, { status: "refused", seq: 1, code: Code.KNOWN }, "known already");
  eq(refusals, [[Code.KNOWN, "KNOWN"]], "the refusal, named");
  const learned = env.s.use(0);
  ws.deliver({ type: "recipes", known: [{ code: 3, name: "table", station: "cauldron", inputs: [{ kind: 15, count: 4 }], outputs: [{ kind: 2, count: 1 }], seconds: 0 }] });
  ws.deliver(snapshot(2, 4, 4, false));
  eq(await learned, { status: "applied", seq: 2 }, "applied");
  eq(env.s.recipes.map((r) => r.name), ["table"], "the recipe learned came before the snapshot that acknowledged it");
});

/** A trade as the server sends it to player 1 (ada), with player 2 (bo). */
function trade(rev: number, mine: Offered[], theirs: Offered[], confirmed = 0, status: number = TradeStatus.Open, reason: number = Code.OK): Trade {
  return { type: "trade", id: 4, with: 2, rev, mine, theirs, confirmed, status, reason };
}

const PLANKS: Offered = { slot: 2, stack: { id: 30n, kind: 15, count: 4 } };
const STONE: Offered = { slot: 0, stack: { id: 31n, kind: 14, count: 5 } };

test("session: a trade opens toward a player, offers and confirms the revision it last saw, and ends done", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const events: Trade[] = [];
  env.s.on("trade", (t) => events.push(t));
  eq(env.s.trade, null, "no trade before one opens");
  const opened = env.s.tradeWith(Dir.E);
  ws.deliver(trade(0, [], []));
  ws.deliver(snapshot(1, 4, 4, false));
  eq(await opened, { status: "applied", seq: 1 }, "opened");
  eq(env.s.trade, trade(0, [], []), "the open trade");
  void env.s.offer(2, 4);
  ws.deliver(trade(1, [PLANKS], []));
  ws.deliver(trade(2, [PLANKS], [STONE]));
  void env.s.confirmTrade();
  ws.deliver(trade(2, [PLANKS], [STONE], TradeConfirmed.Mine));
  void env.s.offer(2, 0);
  eq(
    intents(ws).map((m) => [m.kind, m.dir, m.item.from, m.item.count]),
    [
      [IntentKind.Trade, Dir.E, 0, 0],
      [IntentKind.Offer, 0, 2, 4],
      [IntentKind.Confirm, 0, 0, 2],
      [IntentKind.Offer, 0, 2, 0],
    ],
    "trade toward the player, an offer, a confirm of the revision seen (2), the offer taken off",
  );
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "nothing predicted: trading neither moves nor turns the body");
  ws.deliver({ type: "inventory", slots: Array.from({ length: 20 }, () => ({ id: 0n, kind: 0, count: 0 })), stash: [] });
  ws.deliver(trade(2, [PLANKS], [STONE], TradeConfirmed.Mine | TradeConfirmed.Theirs, TradeStatus.Done));
  eq(env.s.trade, null, "no open trade once it is done");
  eq(
    events.map((t) => [t.rev, t.confirmed, t.status]),
    [
      [0, 0, TradeStatus.Open],
      [1, 0, TradeStatus.Open],
      [2, 0, TradeStatus.Open],
      [2, TradeConfirmed.Mine, TradeStatus.Open],
      [2, TradeConfirmed.Mine | TradeConfirmed.Theirs, TradeStatus.Done],
    ],
    "one event a trade message, the last one done",
  );
});

test("session: a confirm of a revision the server has passed is refused STALE; with no trade it names revision 0", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const none = env.s.confirmTrade();
  eq(intents(ws)[0]?.item, { from: 0, to: 0, count: 0 }, "revision 0 with no trade known");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.NOT_TRADING });
  eq(await none, { status: "refused", seq: 1, code: Code.NOT_TRADING }, "not trading");
  ws.deliver(trade(3, [PLANKS], [STONE]));
  const stale = env.s.confirmTrade();
  eq(intents(ws)[1]?.item.count, 3, "the revision seen");
  ws.deliver(trade(4, [PLANKS], []));
  ws.deliver({ type: "intent_result", seq: 2, code: Code.STALE });
  eq(await stale, { status: "refused", seq: 2, code: Code.STALE }, "the server had passed it");
  const cancelled = env.s.cancelTrade();
  eq(intents(ws)[2]?.kind, IntentKind.Cancel, "cancel");
  ws.deliver(trade(4, [PLANKS], [], 0, TradeStatus.Void, Code.TRADE_CANCELLED));
  ws.deliver(snapshot(3, 4, 4, false));
  eq(await cancelled, { status: "applied", seq: 3 }, "cancelled");
  eq(env.s.trade, null, "void: no open trade");
});

test("session: a trade open when the binding is lost ends void with it, once, unless the server said so first", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const ends: [number, number][] = [];
  env.s.on("trade", (t) => {
    if (t.status !== TradeStatus.Open) ends.push([t.status, t.reason]);
  });
  ws.deliver(trade(1, [PLANKS], [], TradeConfirmed.Theirs));
  ws.drop();
  eq(env.s.trade?.rev, 1, "still shown while the resume is under way");
  env.clock.advance(10_000);
  const ws2 = lastSocket(env);
  ws2.open();
  ws2.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 9, area: 5, resumeToken: "r2", version: 7 });
  eq([env.s.trade, ends], [null, [[TradeStatus.Void, Code.TRADE_LEFT]]], "void, TRADE_LEFT, on the new binding");
  ws2.deliver(INFO);
  ws2.deliver(snapshot(0, 4, 4));
  ws2.deliver(trade(0, [], []));
  ws2.deliver({ type: "portal_moved", area: 6, wsUrl: "ws://h2.test/ws", grant: "g", joinId: 99n });
  eq(ends.at(-1), [TradeStatus.Void, Code.TRADE_PORTAL], "a portal ends it: TRADE_PORTAL");
  ws2.drop(1000);
  const ws3 = lastSocket(env);
  ws3.open();
  ws3.deliver({ type: "hello_ack", joinId: 99n, entity: 7, tick: 1, area: 6, resumeToken: "r6", version: 7 });
  ws3.deliver(trade(0, [], []));
  ws3.deliver(trade(0, [], [], 0, TradeStatus.Void, Code.TRADE_FAR));
  ws3.deliver({ type: "taken_over" });
  eq(ends, [
    [TradeStatus.Void, Code.TRADE_LEFT],
    [TradeStatus.Void, Code.TRADE_PORTAL],
    [TradeStatus.Void, Code.TRADE_FAR],
  ], "the server's own end, and none made up after it");
  const env2 = newEnv();
  const w = await bind(env2);
  const last: Trade[] = [];
  env2.s.on("trade", (t) => last.push(t));
  w.deliver(trade(2, [PLANKS], [STONE], TradeConfirmed.Mine));
  w.deliver({ type: "taken_over" });
  eq(last.map((t) => [t.status, t.reason, t.confirmed, t.mine.length]), [
    [TradeStatus.Open, Code.OK, TradeConfirmed.Mine, 1],
    [TradeStatus.Void, Code.TRADE_TAKEN_OVER, 0, 1],
  ], "taken over: TRADE_TAKEN_OVER, the sides as they stood");
});

test("session: containers are kept by square with their prices, owner's flag and ready tick; a new Area forgets them", async () => {
  const env = newEnv();
  const ws = await bind(env);
  const seen: ContainerState[] = [];
  env.s.on("container", (c) => seen.push(c));
  const stock: Stack = { id: 40n, kind: 15, count: 8 };
  ws.deliver({ type: "container", x: 4, y: 3, slots: [stock, EMPTY_STACK], prices: [{ kind: 14, count: 3 }, { kind: 0, count: 0 }], flags: ContainerFlag.Owned, ready: 0 });
  ws.deliver({ type: "container", x: 5, y: 4, slots: [EMPTY_STACK, EMPTY_STACK], prices: [], flags: 0, ready: 120 });
  eq(env.s.containerAt(4, 3), { x: 4, y: 3, slots: [stock, EMPTY_STACK], prices: [{ kind: 14, count: 3 }, { kind: 0, count: 0 }], flags: 1, owned: true, ready: 0 }, "the stall, to its owner");
  eq([env.s.containerAt(5, 4)?.ready, env.s.containerAt(5, 4)?.owned], [120, false], "a working station");
  eq(env.s.containerAt(1, 1), undefined, "none seen there");
  eq(seen.map((c) => [c.x, c.y, c.owned]), [[4, 3, true], [5, 4, false]], "the events");
  ws.deliver({ type: "portal_moved", area: 6, wsUrl: "ws://h2.test/ws", grant: "g", joinId: 99n });
  ws.drop(1000);
  const ws2 = lastSocket(env);
  ws2.open();
  ws2.deliver({ type: "hello_ack", joinId: 99n, entity: 7, tick: 1, area: 6, resumeToken: "r6", version: 7 });
  eq(env.s.containerAt(4, 3), undefined, "another Area's containers are forgotten");
});

test("session: price names the stall's slot and the ask; buy says the stack and price of the last container seen there", async () => {
  const env = newEnv();
  const ws = await bind(env); // the body on (4, 4)
  void env.s.price(Dir.N, 1, 14, 3);
  eq(intents(ws)[0], { type: "intent", seq: 1, kind: IntentKind.Price, dir: Dir.N, target: { x: 14, y: 3 }, item: { from: CONTAINER_SLOT + 1, to: 0, count: 0 } }, "price");
  ws.deliver({
    type: "container",
    x: 4,
    y: 3,
    slots: [EMPTY_STACK, { id: 41n, kind: 15, count: 8 }],
    prices: [{ kind: 0, count: 0 }, { kind: 14, count: 3 }],
    flags: 0,
    ready: 0,
  });
  const bought = env.s.buy(Dir.N, 1);
  eq(intents(ws)[1], { type: "intent", seq: 2, kind: IntentKind.Buy, dir: Dir.N, target: { x: 14, y: 3 }, item: { from: CONTAINER_SLOT + 1, to: 0, count: 8 } }, "buy: the stack and the price seen");
  ws.deliver({ type: "intent_result", seq: 2, code: Code.STALE });
  eq(await bought, { status: "refused", seq: 2, code: Code.STALE }, "the stall changed meanwhile");
  void env.s.buy(Dir.E, 0);
  eq(intents(ws)[2]?.target, { x: 0, y: 0 }, "no container seen east: no price said");
  eq(intents(ws)[2]?.item, { from: CONTAINER_SLOT, to: 0, count: 0 }, "and no stack");
  void env.s.buy(Dir.N, 0);
  eq([intents(ws)[3]?.target, intents(ws)[3]?.item.count], [{ x: 0, y: 0 }, 0], "an empty slot of no price");
});

/** A cell 0 of INFO with a wall at (5, 4), east of where bind puts the body. */
const WALLED: Message = { type: "static", cell: 0, version: 2, floor: [Floor.Grass, 37, Floor.Wall, 1, Floor.Grass, 26], objects: [] };

test("session: without an engine nothing is predicted: a step shows once a snapshot has it", async () => {
  const env = newEnv({ engine: undefined });
  const ws = await bind(env);
  void env.s.step(Dir.E);
  eq([env.s.predicted, env.s.confirmed], [{ x: 4, y: 4, facing: 0 }, { x: 4, y: 4, facing: 0 }], "neither moved nor turned");
  ws.deliver(snapshot(1, 5, 4, false));
  eq(env.s.predicted, { x: 5, y: 4, facing: 0 }, "the server's pose");
  ws.deliver(WALLED);
  eq(env.s.walkable(5, 4), true, "nor does it say where a body may stand: the server decides");
});

test("session: the engine given after the session started predicts from then on, on what the session was told", async () => {
  const env = newEnv({ engine: undefined });
  await bind(env);
  lastSocket(env).deliver(WALLED);
  eq([env.s.predicting, env.s.walkable(5, 4)], [false, true], "without it: no replica, and the server decides");
  env.s.useEngine(engine());
  eq([env.s.predicting, env.s.walkable(5, 4)], [true, false], "with it: a replica of the area_info and the maps told before");
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.E }, "the wall: turned, not moved");
  void env.s.step(Dir.S);
  eq(env.s.predicted, { x: 4, y: 5, facing: Dir.S }, "a step south moves at once");
});

test("session: a resume's area_info rebuilds the replica with the maps the view keeps; a new Area's starts bare", async () => {
  const env = newEnv();
  const ws = await bind(env);
  ws.deliver(WALLED);
  eq([env.s.walkable(5, 4), env.s.walkable(3, 4)], [false, true], "walkable is the engine's answer: the wall stops bodies");
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.E }, "the wall: turned, not moved");
  ws.deliver({ type: "intent_result", seq: 1, code: Code.BLOCKED });
  ws.drop();
  env.clock.advance(10_000);
  const ws2 = lastSocket(env);
  ws2.open();
  ws2.deliver({ type: "hello_ack", joinId: env.dir.lastJoinId, entity: 1, tick: 9, area: 5, resumeToken: "r2", version: 7 });
  ws2.deliver(INFO); // the cell's static is not sent again: it did not change
  ws2.deliver(snapshot(1, 4, 4));
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: Dir.E }, "the wall is still known after the resume");
  ws2.deliver({ type: "portal_moved", area: 6, wsUrl: "ws://h2.test/ws", grant: "g-portal", joinId: 99n });
  const ws3 = lastSocket(env);
  ws3.open();
  ws3.deliver({ type: "hello_ack", joinId: 99n, entity: 1, tick: 1, area: 6, resumeToken: "r6", version: 7 });
  ws3.deliver({ ...INFO, area: 6 });
  ws3.deliver({ type: "snapshot", tick: 1, ackSeq: 0, flags: 1, records: whole([player(1, 4, 4)]) });
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 5, y: 4, facing: Dir.E }, "Area 6 has no wall there (nor any map yet: open ground until a static says)");
});

/** spyEngine is the engine with a replica that records the frames it is given before it lays them. */
function spyEngine(frames: Uint8Array[]): Engine {
  const real = engine();
  return {
    ...real,
    replica: (info: Uint8Array): EngineReplica => {
      frames.push(info);
      const r = real.replica(info);
      return {
        ...r,
        static: (f) => {
          frames.push(f);
          r.static(f);
        },
      };
    },
  };
}

test("session: the replica is given area_info and static frames as received; one it cannot lay is logged and prediction stops, play goes on", async () => {
  const frames: Uint8Array[] = [];
  const env = newEnv({ engine: spyEngine(frames) });
  const ws = await bind(env);
  eq(
    frames,
    [encodeMessage(INFO), encodeMessage({ type: "static", cell: 0, version: 1, floor: [Floor.Grass, 64], objects: [] })],
    "area_info, then the static, byte for byte",
  );
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 5, y: 4, facing: Dir.E }, "predicted");
  // The view takes it (it keeps objects as told); the engine refuses an object outside its cell.
  ws.deliver({ type: "static", cell: 1, version: 1, floor: [Floor.Grass, 64], objects: [{ id: 3, kind: ObjectKind.Tree, x: 0, y: 0, state: 0, text: "", item: 0 }] });
  ok(env.log.lines.some((l) => l.level === "error" && l.msg.startsWith("the engine could not lay")), "logged");
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "no prediction: the server's pose");
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "nor for the next step");
  ws.deliver(snapshot(2, 6, 4, false));
  eq([env.s.state, env.s.predicted, env.s.pending], ["ready", { x: 6, y: 4, facing: 0 }, 0], "play goes on");
  eq(env.s.view.maps.has(1), true, "the view took the static");
});

test("session: an area_info the engine cannot build is logged, and nothing is predicted", async () => {
  const env = newEnv();
  const ws = await bind(env);
  ws.deliver({ ...INFO, tickHz: 0 }); // the view takes it; the engine does not
  ok(env.log.lines.some((l) => l.level === "error" && l.msg.startsWith("the engine could not build the Area")), "logged");
  void env.s.step(Dir.E);
  eq(env.s.predicted, { x: 4, y: 4, facing: 0 }, "the server's pose");
  ws.deliver(snapshot(1, 5, 4, false));
  eq([env.s.state, env.s.predicted], ["ready", { x: 5, y: 4, facing: 0 }], "play goes on");
});
