// compare runs ley and the Node.js peer (server/colyseus.mjs, Colyseus
// 0.18) side by side on the same work, driven by the same Node.js clients
// (src/drive.ts), and prints the figures of issue 27's table: server CPU
// per player-update, user and system CPU, bytes per client-second and the
// server's RSS at the end (and its PSS, which counts a page shared by
// several processes once: ley's director and hosts map one binary);
// medians over --rounds alternating runs, with the spread, and ley's
// figure over the peer's.
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
    targets: { type: "string", default: "colyseus,ley,floor" },
    players: { type: "string", default: "500" },
    // Players sharing one client address (drive.ts --per-address).
    "per-address": { type: "string", default: "200" },
    warmup: { type: "string", default: "10" },
    seconds: { type: "string", default: "30" },
    pin: { type: "string", default: "0:1" },
    ley: { type: "string", default: join(root, "bin", "ley") },
    out: { type: "string", default: "" },
    // A bar chart of the medians, with their spread.
    chart: { type: "string", default: "" },
    // Report a saved run (an --out file) instead of running.
    from: { type: "string", default: "" },
    // Everyone sees the whole room, as in the peer's rooms.
    "ley-args": { type: "string", default: "--interest-radius 0" },
    // More arguments of the floor: -uring batches its writes as ley's do.
    "floor-args": { type: "string", default: "" },
  },
});

// A workload is the players per room (Area): villages of 20, homes of 1.
const workloads = { villages: 20, homes: 1 };
// The floor's frames (bench/floorserver -frame and -every) are the size
// and rate of ley's on the same workload: ley's frame bytes over its
// messages per client-second at protocol 7 with --interest-radius 0 (259
// over 10.1 in villages, 35 over 5.0 in homes; bench/RESULTS.md, "Short
// snapshots"). Every client gets one frame per round in villages, one
// every other round in homes.
const floorFrames = { villages: { frame: 26, every: 1 }, homes: { frame: 7, every: 2 } };
const floorBin = join(here, "build", "floorserver");
// The columns of the tables and the bars of the chart, in order.
const columns = [["colyseus", "Colyseus 0.18"], ["ley", "ley"], ["floor", "floor"]];
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

/**
 * startLey starts a realm in dir. Its ports were free a moment before it
 * binds them; one taken in between (another process's socket) fails its
 * start with "address already in use", and it starts again on others.
 */
async function startLey(dir) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLeyOnce(dir);
    } catch (e) {
      if (attempt >= 3 || !/address already in use/.test(e.message)) throw e;
      log(`ley run: a port was taken before it bound it; starting again (${e.message.split("\n")[1]})`);
    }
  }
}

async function startLeyOnce(dir) {
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

async function startFloor(workload) {
  const { frame, every } = floorFrames[workload];
  const child = pinned(serverCPU, [floorBin, "-ws", "-frame", String(frame), "-every", String(every),
    ...opt["floor-args"].split(" ").filter((a) => a !== "")], {
    stdio: ["ignore", "pipe", "inherit"],
    // The loop blocks in epoll_wait holding its thread (bench.BenchmarkFloor does the same).
    env: { ...process.env, GODEBUG: "asyncpreemptoff=1" },
  });
  const addr = await new Promise((ok, fail) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/FLOOR (\S+)\n/);
      if (m) ok(m[1]);
    });
    child.once("exit", (code) => fail(new Error(`the floor exited at start (${code}): ${out}`)));
  });
  return { child, url: `ws://${addr}` };
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
      "--players", opt.players, "--per-area", String(perArea), "--per-address", opt["per-address"], "--warmup", opt.warmup,
      "--seconds", opt.seconds],
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
    const server = target === "ley" ? await startLey(dir) : target === "floor" ? await startFloor(workload) : await startPeer(perArea);
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

/** measure builds the driver and runs every round; it returns the results. */
async function measure() {
  for (const t of opt.targets.split(",")) {
    if (!columns.some(([c]) => c === t)) throw new Error(`unknown target ${t} (colyseus, ley, floor)`);
  }
  if (opt.targets.split(",").includes("ley") && !existsSync(opt.ley)) {
    throw new Error(`no ley binary at ${opt.ley}: make build (or --ley)`);
  }
  if (opt.targets.split(",").includes("floor")) {
    execFileSync("go", ["build", "-o", floorBin, "./bench/floorserver"], { cwd: root, stdio: "inherit" });
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
          `${res.bytesPerClientS.toFixed(0)} B/client-s, RSS ${res.rssMB.toFixed(0)} MB (PSS ${res.pssMB.toFixed(0)}), lost ${res.lost}, ` +
        `steps ${res.stepsPerClientS.toFixed(2)}/client-s` + (res.appliedPerClientS === null ? "" : ` (${res.appliedPerClientS.toFixed(2)} applied)`));
        for (const p of res.byProcess) log(`    ${p.cmd}: ${p.cpuS.toFixed(2)} s of CPU, RSS ${p.rssMB.toFixed(0)} MB, PSS ${p.pssMB.toFixed(0)} MB`);
        results.push({ round: r + 1, ...res });
      }
    }
  }
  return results;
}

let results, players = Number(opt.players), nrounds = rounds, names = opt.workloads.split(",");
if (opt.from !== "") {
  const saved = JSON.parse(readFileSync(opt.from, "utf8"));
  results = saved.results;
  players = Number(saved.options.players);
  nrounds = Number(saved.options.rounds);
  names = saved.options.workloads.split(",");
} else {
  results = await measure();
}

const rows = [
  ["server CPU per player-update (µs)", "usPerUpdate", 1],
  ["user CPU (% of a core)", "userPct", 1],
  ["system CPU (% of a core)", "sysPct", 1],
  ["payload bytes per client per second", "bytesPerClientS", 0],
  ["frame bytes per client per second", "frameBytesPerClientS", 0],
  ["messages per client per second", "msgsPerClientS", 1],
  ["server RSS at the end (MB)", "rssMB", 0],
  // Shared pages once: ley's director and hosts map one binary.
  ["server PSS at the end (MB)", "pssMB", 0],
];
// Runs saved before a figure was measured (PSS) have none of it.
const of = (workload, target, key) => results.filter((x) => x.workload === workload && x.target === target && x[key] !== undefined).map((x) => x[key]);
let md = "";
// The ratios the tables give, where both sides ran.
const ratios = [["ley", "colyseus", "ley/peer"], ["ley", "floor", "ley/floor"], ["floor", "colyseus", "floor/peer"]];
for (const workload of names) {
  const ran = columns.filter(([t]) => results.some((x) => x.workload === workload && x.target === t));
  // The peer and ley always; the floor where it ran.
  const shown = columns.filter(([t]) => t !== "floor" || ran.some(([r]) => r === t));
  const rs = ratios.filter(([a, b]) => shown.some(([t]) => t === a) && shown.some(([t]) => t === b));
  md += `\n${workload}: ${players} players in rooms of ${workloads[workload]}, medians of ${nrounds} (min-max)\n\n`;
  md += `| figure | ${shown.map(([, n]) => n).join(" | ")} | ${rs.map(([, , n]) => n).join(" | ")} |\n`;
  md += `|---|${shown.map(() => "---:").join("|")}|${rs.map(() => "---:").join("|")}|\n`;
  for (const [name, key, digits] of rows) {
    const cell = (xs) => xs.length === 0 ? "-" : `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
    const ratio = (a, b) => {
      const x = of(workload, a, key), y = of(workload, b, key);
      return x.length === 0 || y.length === 0 ? "-" : `${(median(x) / median(y)).toFixed(2)}x`;
    };
    md += `| ${name} | ${shown.map(([t]) => cell(of(workload, t, key))).join(" | ")} | ${rs.map(([a, b]) => ratio(a, b)).join(" | ")} |\n`;
  }
}
process.stdout.write(md);
if (opt.out !== "" && opt.from === "") {
  writeFileSync(opt.out, JSON.stringify({ when: new Date().toISOString(), options: opt, results }, null, 2) + "\n");
}
if (opt.chart !== "") writeFileSync(opt.chart, chart());

/**
 * chart draws the medians of three figures (CPU per player-update, payload
 * bytes per client-second, RSS) as bars, the peer's, ley's and the floor's
 * (where it ran) side by side for each workload, each with a whisker from
 * its runs' least to most.
 */
function chart() {
  const panels = [
    ["server CPU per player-update (µs)", "usPerUpdate", 1],
    ["payload bytes per client per second", "bytesPerClientS", 0],
    ["server RSS at the end (MB)", "rssMB", 0],
  ];
  const colors = { colyseus: "#9a9a9a", ley: "#2f6db5", floor: "#5a9a5a" };
  const shown = columns.filter(([t]) => results.some((x) => x.target === t));
  const pw = 300, ph = 220, top = 80, left = 40, bar = shown.length > 2 ? 26 : 34;
  const width = left + panels.length * (pw + 30), height = top + ph + 70;
  const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">\n`;
  svg += `<rect width="100%" height="100%" fill="#fff"/>\n`;
  svg += `<text x="${left}" y="24" font-size="15">ley beside its Node.js peer (Colyseus 0.18): ${players} players, medians of ${nrounds} runs, whiskers min-max</text>\n`;
  shown.forEach(([t, name], k) => {
    svg += `<rect x="${left + k * 120}" y="34" width="12" height="12" fill="${colors[t]}"/><text x="${left + k * 120 + 16}" y="45" font-size="12">${esc(name)}</text>\n`;
  });
  panels.forEach(([title, key, digits], i) => {
    const x0 = left + i * (pw + 30);
    const all = names.flatMap((w) => shown.flatMap(([t]) => of(w, t, key)));
    const max = Math.max(...all) * 1.15 || 1;
    const y = (v) => top + ph - (v / max) * ph;
    svg += `<text x="${x0}" y="${top - 4}" font-size="12">${esc(title)}</text>\n`;
    svg += `<line x1="${x0}" y1="${top + ph}" x2="${x0 + pw}" y2="${top + ph}" stroke="#000"/>\n`;
    names.forEach((w, j) => {
      const gx = x0 + 20 + j * (pw / names.length);
      const mid = gx + (shown.length * (bar + 6) - 6) / 2;
      shown.forEach(([t], k) => {
        const xs = of(w, t, key);
        if (xs.length === 0) return;
        const m = median(xs), bx = gx + k * (bar + 6);
        svg += `<rect x="${bx}" y="${y(m)}" width="${bar}" height="${top + ph - y(m)}" fill="${colors[t]}"/>\n`;
        const cx = bx + bar / 2;
        svg += `<line x1="${cx}" y1="${y(Math.min(...xs))}" x2="${cx}" y2="${y(Math.max(...xs))}" stroke="#000"/>\n`;
        svg += `<text x="${cx}" y="${y(Math.max(...xs)) - 4}" font-size="11" text-anchor="middle">${m.toFixed(digits)}</text>\n`;
      });
      svg += `<text x="${mid}" y="${top + ph + 16}" font-size="12" text-anchor="middle">${esc(w)}</text>\n`;
      const p = of(w, "colyseus", key), l = of(w, "ley", key), f = of(w, "floor", key);
      const notes = [];
      if (p.length > 0 && l.length > 0) notes.push(`ley ${(median(l) / median(p)).toFixed(2)}x peer`);
      if (f.length > 0 && l.length > 0) notes.push(`${(median(l) / median(f)).toFixed(2)}x floor`);
      notes.forEach((n, k) => {
        svg += `<text x="${mid}" y="${top + ph + 32 + 14 * k}" font-size="11" text-anchor="middle">${esc(n)}</text>\n`;
      });
    });
  });
  return svg + "</svg>\n";
}
