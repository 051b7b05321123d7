// drive is the load driver of the peer comparison: the same Node.js
// clients for both servers. It connects --players players in rooms
// (Areas) of --per-area, has each step one square in a random one of 8
// directions every 200 ms (ley's walk5 pattern) from a random phase,
// waits --warmup seconds, then measures --seconds: the server's CPU
// (user and system, the whole process tree under --pid, from /proc),
// what the clients received, and the server's RSS at the end. It prints
// one JSON line (a Result) on stdout and progress on stderr.
//
// Against ley it plays through ley's own SDK (web/sdk, bundled in by
// compare.mjs): an admin provisions the accounts and Areas (the director
// runs with --load-provisioning), each player logs in and starts a
// Session. Against the peer it plays through Colyseus's SDK:
// joinOrCreate("grid") fills rooms of the server's --per-room in turn.
// Against the floor (bench/floorserver -ws, the least an epoll server can
// do to move the same frames) each player is a bare WebSocket whose step
// is a binary message of --step-bytes bytes, about what ley's SDK sends
// for one; the floor reads it and answers nothing.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { Client as ColyseusClient } from "@colyseus/sdk";
import WebSocket from "ws";

import { Director, Session, type Dir, type GameSocket } from "../../../web/sdk/src/index.js";

const { values: opt } = parseArgs({
  options: {
    target: { type: "string" },
    url: { type: "string" },
    pid: { type: "string" },
    players: { type: "string", default: "500" },
    "per-area": { type: "string", default: "20" },
    warmup: { type: "string", default: "10" },
    seconds: { type: "string", default: "30" },
    "admin-email": { type: "string", default: "demo@ley.local" },
    "admin-password": { type: "string", default: "demo-password" },
    "step-bytes": { type: "string", default: "12" },
    // Players sharing one client address (127.0.0.2 on): a host takes 256
    // connections and 16 handshakes at a time per address.
    "per-address": { type: "string", default: "200" },
  },
});

/** Result is what one run measured. */
export interface Result {
  target: string;
  players: number;
  perArea: number;
  seconds: number;
  /** Server CPU over the window, in seconds of a core. */
  userS: number;
  sysS: number;
  /** Server CPU per player-update: a player's update at the nominal 10 Hz. */
  usPerUpdate: number;
  /** Percent of one core over the window. */
  userPct: number;
  sysPct: number;
  /** WebSocket payload bytes received per client per second. */
  bytesPerClientS: number;
  /** WebSocket frame bytes (payload and frame heads) received per client per second. */
  frameBytesPerClientS: number;
  /** WebSocket messages received per client per second. */
  msgsPerClientS: number;
  /** Steps sent per client per second. */
  stepsPerClientS: number;
  /** Steps the server answered applied, per client per second (ley only: the peer answers none). */
  appliedPerClientS: number | null;
  /** The server's process tree's resident memory at the end, in MB (10^6 bytes): each process's VmRSS, summed. */
  rssMB: number;
  /**
   * The same tree's proportional set size at the end, in MB: each page shared
   * by n processes counts 1/n in each (/proc/<pid>/smaps_rollup, Pss), so a
   * server of several processes mapping one binary counts its pages once.
   */
  pssMB: number;
  /** Processes in the server's tree at the end. */
  processes: number;
  /** Each of them: its command and arguments' start, CPU over the window in seconds, RSS and PSS at the end in MB. */
  byProcess: { pid: number; cmd: string; cpuS: number; rssMB: number; pssMB: number }[];
  /** Players not in play at the end of the window. */
  lost: number;
}

const target = opt.target ?? "";
const url = opt.url ?? "";
const rootPid = Number(opt.pid);
const players = Number(opt.players);
const perArea = Number(opt["per-area"]);
const warmup = Number(opt.warmup);
const seconds = Number(opt.seconds);
const stepBytes = Number(opt["step-bytes"]);
const perAddress = Number(opt["per-address"]);
if (!["ley", "colyseus", "floor"].includes(target) || url === "" || !(rootPid > 0) || !(players > 0) || !(perArea > 0) ||
  !(stepBytes > 0 && stepBytes < 126) || !(perAddress >= 1 && perAddress <= 256)) {
  throw new Error("drive: --target ley|colyseus|floor, --url, --pid, --players and --per-area are required (--step-bytes 1..125, --per-address 1..256)");
}

/**
 * clientAddress is player i's loopback address: --per-address players to
 * each, from 127.0.0.2 on (past 127.0.0.255 into 127.0.1.x and on).
 */
function clientAddress(i: number): string {
  const n = 2 + Math.floor(i / perAddress);
  return `127.${Math.floor(n / 65536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

const clockTick = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
const updateHz = 10;
const stepEveryMs = 200;

let payloadBytes = 0;
let frameBytes = 0;
let messages = 0;
let steps = 0;
let applied = 0; // steps ley answered applied (the peer answers none)
const progress = (msg: string) => process.stderr.write(`drive ${target}: ${msg}\n`);

// ---- /proc: the server's process tree ----

interface Proc {
  pid: number;
  ppid: number;
  utime: number;
  stime: number;
}

function readStat(pid: number): Proc | null {
  let s: string;
  try {
    s = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // gone
  }
  // The command sits in parentheses and may hold spaces: fields after the last ")".
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return { pid, ppid: Number(f[1]), utime: Number(f[11]), stime: Number(f[12]) };
}

/** tree returns root and every process descended from it. */
function tree(root: number): Proc[] {
  const all = new Map<number, Proc>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!(pid > 0)) continue;
    const p = readStat(pid);
    if (p !== null) all.set(pid, p);
  }
  const out: Proc[] = [];
  const want = new Set([root]);
  // Parents have lower pids only until pids wrap: repeat until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const p of all.values()) {
      if (!want.has(p.pid) && want.has(p.ppid)) {
        want.add(p.pid);
        added = true;
      }
    }
  }
  for (const pid of want) {
    const p = all.get(pid);
    if (p !== undefined) out.push(p);
  }
  return out;
}

function cpuTicks(procs: Proc[]): Map<number, [number, number]> {
  return new Map(procs.map((p) => [p.pid, [p.utime, p.stime]]));
}

function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0; // gone
  }
}

/** pssBytes is pid's proportional set size (0 once it is gone). */
function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0; // gone
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, 2).join(" ");
  } catch {
    return "";
  }
}

// ---- players ----

interface Player {
  step(dir: Dir): void;
  alive(): boolean;
}

function countMessages(ws: WebSocket): void {
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
    const n = Array.isArray(data) ? data.reduce((sum, b) => sum + b.byteLength, 0) : data.byteLength;
    messages++;
    payloadBytes += n;
    // A server's frame is unmasked: a 2-byte head, 2 or 8 more for a long payload.
    frameBytes += n + (n < 126 ? 2 : n < 65536 ? 4 : 10);
  });
}

async function adminCall(dir: Director, method: string, path: string, body: object): Promise<unknown> {
  const resp = await fetch(url + path, {
    method,
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${dir.token}` },
    body: JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${method} ${path}: ${resp.status} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

async function leyPlayers(): Promise<Player[]> {
  const admin = new Director(url);
  await admin.login(opt["admin-email"] ?? "", opt["admin-password"] ?? "");
  await adminCall(admin, "PUT", "/v1/realm", { open: true, cap: 1 << 30, new_players_welcome: true, message: "peer comparison" });
  const password = "peer-compare-password";
  const got = (await adminCall(admin, "POST", "/v1/admin/provision", {
    prefix: `peer-${Date.now()}`,
    count: players,
    areas: Math.ceil(players / perArea),
    password,
    template: "empty",
    w: 64,
    h: 64,
  })) as { accounts: { email: string; area: number }[] };
  const out: Player[] = new Array(got.accounts.length);
  let ready = 0;
  let next = 0;
  // Logins hash a password each: a few at a time.
  const worker = async () => {
    for (let i = next++, a = got.accounts[i]; a !== undefined; i = next++, a = got.accounts[i]) {
      const director = new Director(url, { timeoutMs: 60_000 });
      await director.login(a.email, password);
      const session = new Session({
        director,
        area: a.area,
        socket: (u: string) => {
          const ws = new WebSocket(u, { localAddress: clientAddress(i) });
          countMessages(ws);
          return ws as unknown as GameSocket;
        },
      });
      await new Promise<void>((resolve, reject) => {
        session.on("ready", () => resolve());
        session.on("ended", (e) => reject(new Error(`player ${i} ended: ${e.reason}`)));
        session.start();
      });
      out[i] = {
        step: (d) =>
          void session
            .step(d)
            .then((o) => void (o.status === "applied" && applied++))
            .catch(() => undefined),
        alive: () => session.ready,
      };
      if (++ready % 100 === 0) progress(`${ready} in play`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

async function colyseusPlayers(): Promise<Player[]> {
  const client = new ColyseusClient(url);
  const out: Player[] = [];
  // One at a time: the matchmaker fills a room before it makes the next.
  for (let i = 0; i < players; i++) {
    const room = await client.joinOrCreate("grid");
    const ws = (room.connection.transport as unknown as { ws: WebSocket }).ws;
    countMessages(ws);
    let open = true;
    room.onLeave(() => (open = false));
    out.push({ step: (d) => room.send("step", d), alive: () => open });
    if ((i + 1) % 100 === 0) progress(`${i + 1} in play`);
  }
  return out;
}

async function floorPlayers(): Promise<Player[]> {
  const out: Player[] = [];
  const step = Buffer.alloc(stepBytes);
  for (let i = 0; i < players; i++) {
    // As many per client address as against ley.
    const ws = new WebSocket(url, { localAddress: clientAddress(i), perMessageDeflate: false });
    countMessages(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    out.push({
      step: (d) => {
        step[0] = d; // the bytes' content is not read
        ws.send(step);
      },
      alive: () => ws.readyState === WebSocket.OPEN,
    });
    if ((i + 1) % 100 === 0) progress(`${i + 1} in play`);
  }
  return out;
}

// ---- the run ----

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const all = target === "ley" ? await leyPlayers() : target === "floor" ? await floorPlayers() : await colyseusPlayers();
progress(`${all.length} in play; walking`);
for (const p of all) {
  setTimeout(() => {
    setInterval(() => {
      p.step(Math.floor(Math.random() * 8) as Dir);
      steps++;
    }, stepEveryMs);
  }, Math.random() * stepEveryMs);
}
await sleep(warmup * 1000);

const t0 = performance.now();
const cpu0 = cpuTicks(tree(rootPid));
const bytes0 = payloadBytes, frames0 = frameBytes, msgs0 = messages, steps0 = steps, applied0 = applied;
progress(`measuring ${seconds} s`);
await sleep(seconds * 1000);
const procs = tree(rootPid);
const cpu1 = cpuTicks(procs);
const dt = (performance.now() - t0) / 1000;
let user = 0, sys = 0;
const byProcess: Result["byProcess"] = [];
for (const [pid, [u1, s1]] of cpu1) {
  const [u0, s0] = cpu0.get(pid) ?? [0, 0]; // started inside the window: all of it
  user += (u1 - u0) / clockTick;
  sys += (s1 - s0) / clockTick;
  byProcess.push({ pid, cmd: cmdline(pid), cpuS: (u1 - u0 + s1 - s0) / clockTick, rssMB: rssBytes(pid) / 1e6, pssMB: pssBytes(pid) / 1e6 });
}
const perClientS = (n: number) => n / all.length / dt;
const result: Result = {
  target,
  players: all.length,
  perArea,
  seconds: dt,
  userS: user,
  sysS: sys,
  usPerUpdate: ((user + sys) * 1e6) / (all.length * updateHz * dt),
  userPct: (100 * user) / dt,
  sysPct: (100 * sys) / dt,
  bytesPerClientS: perClientS(payloadBytes - bytes0),
  frameBytesPerClientS: perClientS(frameBytes - frames0),
  msgsPerClientS: perClientS(messages - msgs0),
  stepsPerClientS: perClientS(steps - steps0),
  appliedPerClientS: target === "ley" ? perClientS(applied - applied0) : null,
  rssMB: byProcess.reduce((n, p) => n + p.rssMB, 0),
  pssMB: byProcess.reduce((n, p) => n + p.pssMB, 0),
  processes: procs.length,
  byProcess,
  lost: all.filter((p) => !p.alive()).length,
};
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);
