/**
 * The spectator against a scripted director and host: it asks for a
 * spectator grant, says hello, keeps the view it is sent, chooses what it
 * watches, and ends on a refusal or its own close.
 */

import { type AreaInfo, Code, type EntityState, Floor, PROTOCOL_VERSION, RecordWriter, Spectator } from "../src/index.js";
import { eq, ok, test } from "./harness.js";
import { FakeDirector, FakeSocket, settle } from "./fakes.js";

const INFO: AreaInfo = {
  type: "area_info",
  area: 5,
  kind: "village",
  w: 16,
  h: 8,
  cellSize: 8,
  tickHz: 20,
  snapshotHz: 10,
  stepMs: 200,
  queueLen: 8,
  interestRadius: 8,
  resumeGraceMs: 30000,
  rules: 1,
  playerHp: 100,
  creatures: [],
  items: [],
  plots: [],
};

const player = (id: number, x: number, y: number): EntityState => ({ id, kind: 0, look: 0, x, y, facing: 0, hp: 100, flags: 0 });

/** whole returns the records of both cells of INFO whole, with the entities in theirs. */
function whole(entities: EntityState[]): Uint8Array {
  const w = new RecordWriter();
  for (let c = 0; c < 2; c++) w.cell(c, entities.filter((e) => Math.floor(e.x / 8) === c));
  return w.bytes();
}

function newSpectator(): { dir: FakeDirector; sockets: FakeSocket[]; s: Spectator } {
  const dir = new FakeDirector();
  const sockets: FakeSocket[] = [];
  const s = new Spectator({
    director: dir.client(),
    area: 5,
    socket: (url) => {
      const ws = new FakeSocket(url);
      sockets.push(ws);
      return ws;
    },
  });
  return { dir, sockets, s };
}

test("spectator: a spectator grant, hello, and the whole Area as it moves", async () => {
  const { dir, sockets, s } = newSpectator();
  const started = s.start();
  await settle();
  eq(dir.spectates, [5], "a spectator grant for the Area");
  eq(dir.joins, [], "no join");
  const ws = sockets[0];
  ok(ws !== undefined && ws.url === "ws://host5.test/ws", "the grant's ws_url");
  if (ws === undefined) return;
  ws.open();
  eq(ws.sent, [{ type: "hello", grant: "s1", joinId: dir.lastJoinId, versions: [PROTOCOL_VERSION] }], "the hello");
  ws.deliver({ type: "hello_ack", joinId: dir.lastJoinId, entity: 0, tick: 1, area: 5, resumeToken: "", version: 2 });
  await started;
  eq(s.state, "watching", "bound");
  const ticks: number[] = [];
  s.on("update", (u) => ticks.push(u.tick));
  ws.deliver(INFO);
  ws.deliver({ type: "presence", area: 5, players: [{ entity: 7, name: "ada" }] });
  ws.deliver({ type: "static", cell: 0, version: 1, floor: [Floor.Grass, 64], objects: [] });
  ws.deliver({ type: "snapshot", tick: 2, ackSeq: 0, flags: 1, records: whole([player(7, 3, 3), player(9, 12, 3)]) });
  ws.deliver({ type: "snapshot", tick: 4, ackSeq: 0, flags: 0, records: whole([player(7, 4, 3), player(9, 12, 3)]) });
  eq(s.view.entities.get(7)?.x, 4, "ada moved");
  eq(s.view.entities.size, 2, "every body of the Area");
  eq(s.view.players.get(7), "ada", "presence");
  eq(ticks[ticks.length - 1], 4, "the last update's tick");
});

test("spectator: watch asks for a player's point of view; ENTITY_GONE goes back to the whole Area", async () => {
  const { dir, sockets, s } = newSpectator();
  const started = s.start();
  await settle();
  const ws = sockets[0]!;
  ws.open();
  ws.deliver({ type: "hello_ack", joinId: dir.lastJoinId, entity: 0, tick: 1, area: 5, resumeToken: "", version: 2 });
  await started;
  s.watch(7);
  eq(s.watching, 7, "watching ada");
  eq(ws.sent[ws.sent.length - 1], { type: "watch", entity: 7 }, "watch sent");
  const notices: string[] = [];
  s.on("notice", (n) => notices.push(n.code));
  ws.deliver({ type: "error", code: Code.ENTITY_GONE, refSeq: 0, joinId: 0n, detail: "the player watched left the area" });
  eq(s.watching, 0, "the whole Area again");
  eq(notices, ["ENTITY_GONE"], "told");
  s.close();
  eq(ws.sent[ws.sent.length - 1], { type: "leave" }, "leave before the close");
  eq(ws.closed?.code, 1000, "closed");
  eq(s.state, "ended", "ended");
});

test("spectator: a host's refusal of the hello rejects start and ends it", async () => {
  const { dir, sockets, s } = newSpectator();
  const ends: string[] = [];
  s.on("end", (e) => ends.push(e.reason));
  const started = s.start();
  await settle();
  const ws = sockets[0]!;
  ws.open();
  ws.deliver({ type: "error", code: Code.AREA_FULL, refSeq: 0, joinId: dir.lastJoinId, detail: "this host has its maximum of spectators" });
  let refused = "";
  await started.catch((e: unknown) => (refused = e instanceof Error ? e.message : String(e)));
  ok(refused.startsWith("AREA_FULL"), `start rejected with the code: ${refused}`);
  eq(s.state, "ended", "ended");
  eq(ends.length, 1, "one end");
});

test("spectator: the director's refusal rejects start with the API's code", async () => {
  const { dir, sockets, s } = newSpectator();
  dir.joinAnswers.push({ status: 403, body: { code: "FORBIDDEN", message: "not allowed" } });
  let code = "";
  await s.start().catch((e: unknown) => (code = (e as { code?: string }).code ?? String(e)));
  eq(code, "FORBIDDEN", "refused");
  eq(sockets.length, 0, "no socket opened");
});

test("spectator: watching a creature keeps the flow field it is sent for that creature", async () => {
  const { dir, sockets, s } = newSpectator();
  const started = s.start();
  await settle();
  const ws = sockets[0]!;
  ws.open();
  ws.deliver({ type: "hello_ack", joinId: dir.lastJoinId, entity: 0, tick: 1, area: 5, resumeToken: "", version: 2 });
  await started;
  s.watch(12);
  eq(ws.sent[ws.sent.length - 1], { type: "watch", entity: 12 }, "watch sent");
  const dirs = new Uint8Array([2, 2, 8, 1, 0, 255]);
  ws.deliver({ type: "flow", creature: 11, target: 7, x: 0, y: 0, w: 3, h: 2, dirs });
  eq(s.flow, null, "another creature's field is not this one's");
  ws.deliver({ type: "flow", creature: 12, target: 7, x: 4, y: 1, w: 3, h: 2, dirs });
  eq(s.flow?.target, 7, "the field of the body it hunts");
  eq(s.flow?.dirs, dirs, "its steps");
  s.watch(0);
  eq(s.flow, null, "no field while the whole Area alone is watched");
  s.close();
});

test("spectator: a short snapshot counts on from the last snapshot; one first on the connection ends it", async () => {
  const { dir, sockets, s } = newSpectator();
  const started = s.start();
  await settle();
  const ws = sockets[0]!;
  ws.open();
  ws.deliver({ type: "hello_ack", joinId: dir.lastJoinId, entity: 0, tick: 1, area: 5, resumeToken: "", version: PROTOCOL_VERSION });
  await started;
  const ticks: number[] = [];
  s.on("update", (u) => ticks.push(u.tick));
  ws.deliver(INFO);
  ws.deliver({ type: "snapshot", tick: 250, ackSeq: 0, flags: 1, records: whole([player(7, 3, 3)]) });
  ws.deliver({ type: "short_snapshot", tick8: 4, ack8: 0, records: new RecordWriter().step(7, 2).bytes() });
  eq(ticks.slice(1), [250, 260], "250, then 250 + ((4 - 250) mod 256)");
  eq([s.view.tick, s.view.entities.get(7)?.x], [260, 4], "the view, expanded");
  eq(s.state, "watching", "still watching");

  // A new start is a new connection: a short snapshot first on it breaks the protocol.
  const ends: string[] = [];
  s.on("end", (e) => ends.push(e.reason));
  const again = s.start();
  await settle();
  const ws2 = sockets[1]!;
  ws2.open();
  ws2.deliver({ type: "hello_ack", joinId: dir.lastJoinId, entity: 0, tick: 1, area: 5, resumeToken: "", version: PROTOCOL_VERSION });
  await again;
  ends.length = 0;
  ws2.deliver(INFO);
  ws2.deliver({ type: "short_snapshot", tick8: 5, ack8: 0, records: new Uint8Array() });
  eq(s.state, "ended", "ended");
  ok(ends.length === 1 && (ends[0] ?? "").includes("short snapshot"), `why: ${ends.join("; ")}`);
  eq(ws2.closed?.code, 1000, "closed");
});
