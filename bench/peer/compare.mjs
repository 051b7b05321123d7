// compare runs ley and the Node.js peer (server/colyseus.mjs, Colyseus
// 0.18) side by side on the same work, driven by the same Node.js clients
// (src/drive.ts), and prints the figures of issue 27's table: server CPU
// per player-update, user and system CPU, bytes per client-second and the
// server's RSS at the end; medians over --rounds alternating runs, with
// the spread, and ley's figure over the peer's.
//
// Each server runs pinned to one core and the driver to the other (--pin
// server:driver, taskset), so the server's figures are its own.
//
//   make peer                       (npm ci here, make build, then this)
//   node compare.mjs --rounds 3 --workloads villages,homes --out ../peer-compare.json
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync, openSync, closeSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");

const { values: opt } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    workloads: { type: "string", default: "villages,homes" },
    targets: { type: "string", default: "colyseus,ley" },
    players: { type: "string", default: "500" },
    warmup: { type: "string", default: "10" },
    seconds: { type: "string", default: "30" },
    pin: { type: "string", default: "0:1" },
    ley: { type: "string", default: join(root, "bin", "ley") },
    out: { type: "string", default: "" },
    // Everyone sees the whole room, as in the peer's rooms.
    "ley-args": { type: "string", default: "--interest-radius 0" },
  },
});

// A workload is the players per room (Area): villages of 20, homes of 1.
const workloads = { villages: 20, homes: 1 };
const rounds = Number(opt.rounds);
const [serverCPU, driverCPU] = opt.pin.split(":");
const log = (msg) => process.stderr.write(`compare: ${msg}\n`);

/** freePort returns a loopback port that was free a moment ago. */
function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** pinned spawns argv on cpu with taskset (which execs: the pid is the program's). */
function pinned(cpu, argv, opts) {
  return spawn("taskset", ["-c", cpu, ...argv], opts);
}

/** exited resolves when child exits. */
function exited(child) {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", r)));
}

/** stop interrupts child (ley drains its hosts) and kills it after 20 s. */
async function stop(child) {
  child.kill("SIGINT");
  const t = setTimeout(() => child.kill("SIGKILL"), 20_000);
  await exited(child);
  clearTimeout(t);
}

async function startLey(dir) {
  const [http, control, metrics] = [await freePort(), await freePort(), await freePort()];
  const logFd = openSync(join(dir, "realm.log"), "w");
  const child = pinned(
    serverCPU,
    [opt.ley, "run", "--data-dir", dir, "--http", `127.0.0.1:${http}`, "--control", `127.0.0.1:${control}`,
      "--metrics", `127.0.0.1:${metrics}`, "--max-hosts", "32", "--log-level", "warn", "--host-log-level", "warn",
      "--host-shutdown-grace", "100ms",
      // Every player logs in from this one address.
      "--auth-burst", "100000", "--load-provisioning", "--demo-email", "demo@ley.local",
      ...opt["ley-args"].split(" ").filter((a) => a !== "")],
    { stdio: ["ignore", logFd, logFd], env: { ...process.env, LEY_DEMO_PASSWORD: "demo-password" } },
  );
  closeSync(logFd);
  const url = `http://127.0.0.1:${http}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`ley run exited at start:\n${readFileSync(join(dir, "realm.log"), "utf8")}`);
    try {
      if ((await fetch(url + "/readyz")).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 300) throw new Error("ley run: not ready after 30 s");
    await sleep(100);
  }
  return { child, url };
}

async function startPeer(perRoom) {
  const port = await freePort();
  const child = pinned(serverCPU, ["node", join(here, "server", "colyseus.mjs"), "--port", String(port), "--per-room", String(perRoom)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((ok, fail) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("colyseus peer:")) ok();
    });
    child.once("exit", (code) => fail(new Error(`the peer exited at start (${code}): ${out}`)));
  });
  return { child, url: `ws://127.0.0.1:${port}` };
}

/** drive runs the driver against a started server and returns its Result. */
async function drive(target, server, perArea) {
  const child = pinned(
    driverCPU,
    ["node", join(here, "build", "drive.mjs"), "--target", target, "--url", server.url, "--pid", String(server.child.pid),
      "--players", opt.players, "--per-area", String(perArea), "--warmup", opt.warmup, "--seconds", opt.seconds],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  await exited(child);
  if (child.exitCode !== 0) throw new Error(`drive ${target} failed (exit ${child.exitCode})`);
  return JSON.parse(out.trim().split("\n").pop());
}

async function run(target, workload) {
  const perArea = workloads[workload];
  const dir = mkdtempSync(join(tmpdir(), "ley-peer-"));
  try {
    const server = target === "ley" ? await startLey(dir) : await startPeer(perArea);
    try {
      return { workload, ...(await drive(target, server, perArea)) };
    } finally {
      await stop(server.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

for (const t of opt.targets.split(",")) {
  if (t !== "ley" && t !== "colyseus") throw new Error(`unknown target ${t} (ley, colyseus)`);
}
if (opt.targets.split(",").includes("ley") && !existsSync(opt.ley)) {
  throw new Error(`no ley binary at ${opt.ley}: make build (or --ley)`);
}

// ---- build the driver: ley's SDK from its TypeScript sources ----
await build({
  entryPoints: [join(here, "src", "drive.ts")],
  outfile: join(here, "build", "drive.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The SDK's one dependency, the copy the web client vendors.
  alias: { "cbor-x": join(root, "web", "third_party", "cbor-x", "index.js") },
  external: ["ws", "@colyseus/sdk"],
  logLevel: "warning",
});
execFileSync("taskset", ["-c", opt.pin.replace(":", ","), "true"]); // the cores exist

const results = [];
for (let r = 0; r < rounds; r++) {
  for (const workload of opt.workloads.split(",")) {
    if (!(workload in workloads)) throw new Error(`unknown workload ${workload} (villages, homes)`);
    // Alternate which server goes first, so drift favours neither.
    const targets = opt.targets.split(",");
    const order = r % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      log(`round ${r + 1}/${rounds}: ${workload}, ${target}`);
      const res = await run(target, workload);
      if (res.players !== Number(opt.players) || res.lost > 0) {
        // Not the workload asked for: its figures would mislead.
        throw new Error(`${target} ${workload}: ${res.players} players in play, ${res.lost} lost by the end`);
      }
      log(`  ${res.usPerUpdate.toFixed(1)} µs per player-update, user ${res.userPct.toFixed(1)}% sys ${res.sysPct.toFixed(1)}%, ` +
        `${res.bytesPerClientS.toFixed(0)} B/client-s, RSS ${res.rssMB.toFixed(0)} MB, lost ${res.lost}`);
      for (const p of res.byProcess) log(`    ${p.cmd}: ${p.cpuS.toFixed(2)} s of CPU, ${p.rssMB.toFixed(0)} MB`);
      results.push({ round: r + 1, ...res });
    }
  }
}

const rows = [
  ["server CPU per player-update (µs)", "usPerUpdate", 1],
  ["user CPU (% of a core)", "userPct", 1],
  ["system CPU (% of a core)", "sysPct", 1],
  ["payload bytes per client per second", "bytesPerClientS", 0],
  ["frame bytes per client per second", "frameBytesPerClientS", 0],
  ["messages per client per second", "msgsPerClientS", 1],
  ["server RSS at the end (MB)", "rssMB", 0],
];
let md = "";
for (const workload of opt.workloads.split(",")) {
  const of = (target, key) => results.filter((x) => x.workload === workload && x.target === target).map((x) => x[key]);
  md += `\n${workload}: ${opt.players} players in rooms of ${workloads[workload]}, medians of ${rounds} (min-max)\n\n`;
  md += "| figure | Colyseus 0.18 | ley | ley/peer |\n|---|---:|---:|---:|\n";
  for (const [name, key, digits] of rows) {
    const p = of("colyseus", key), l = of("ley", key);
    const cell = (xs) => xs.length === 0 ? "-" : `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
    const ratio = p.length === 0 || l.length === 0 ? "-" : `${(median(l) / median(p)).toFixed(2)}x`;
    md += `| ${name} | ${cell(p)} | ${cell(l)} | ${ratio} |\n`;
  }
}
process.stdout.write(md);
if (opt.out !== "") writeFileSync(opt.out, JSON.stringify({ when: new Date().toISOString(), options: opt, results }, null, 2) + "\n");
