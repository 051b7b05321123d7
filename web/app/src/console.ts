/**
 * The operator's console, served by the director at /console: the realm's
 * door (PUT /v1/realm), a live view of the hosts and live Areas, the
 * capacity charts of the director's samples, an Area's detail (owner,
 * members, invites) and its live map as a spectator sees it, the
 * accounts an admin acts on, an API explorer over the director's OpenAPI
 * document, and the audit log's newest changes. Admins only: any other
 * account is told so in plain words, from the API's own FORBIDDEN.
 *
 * Three screens, one shown at a time (auth, refused, console). The live
 * view is one chain of timeouts, each scheduled only after the last
 * refresh answered (so polls never pile up), running only while the
 * console shows and the page is visible: hidden, logged out or refused,
 * it stops. The door form is filled from the realm's settings and kept
 * current from /director/info while it has no unsaved change.
 */

import "./console.css";

import {
  ApiError,
  Director,
  EntityKind,
  Spectator,
  type AreaDetail,
  type Changes,
  type FoundAccounts,
  type HostStats,
  type LiveArea,
  type RealmInfo,
  type RealmSettings,
  type Samples,
} from "@leyworks/ley-sdk";

import { drawChart, mib, micros, type Chart } from "./chart.js";
import { operations, send, skeleton, target, type Doc, type Op } from "./explorer.js";
import { byId, field, show } from "./dom.js";
import { FloorImage, drawSpectate, squareAt, type Camera } from "./spectate.js";

/** The same key as the web client's, so that an admin who plays in this tab is logged in here too. */
const TOKEN_KEY = "ley.token";
/** How often the live view asks again while it shows. */
const LIVE_MS = 2_000;
/** A heartbeat older than this is shown as late. */
const LATE_BEAT_MS = 3_000;

const auth = byId("auth", HTMLElement);
const refused = byId("refused", HTMLElement);
const consoleEl = byId("console", HTMLElement);
const who = byId("who", HTMLElement);
const realmLine = byId("realm", HTMLElement);
const logoutBtn = byId("logout", HTMLButtonElement);
const loginForm = byId("login-form", HTMLFormElement);
const authError = byId("auth-error", HTMLElement);
const refusedText = byId("refused-text", HTMLElement);
const refusedLogout = byId("refused-logout", HTMLButtonElement);

const door = byId("door", HTMLFormElement);
const doorState = byId("door-state", HTMLElement);
const doorNote = byId("door-note", HTMLElement);
const doorError = byId("door-error", HTMLElement);
const doorReset = byId("door-reset", HTMLButtonElement);
const rail = byId("rail", HTMLElement);
const pool = byId("pool", HTMLElement);
const maxLive = byId("max-live", HTMLElement);
const confirmClose = byId("confirm-close", HTMLDialogElement);

const liveAge = byId("live-age", HTMLElement);
const liveError = byId("live-error", HTMLElement);
const hostsBody = byId("hosts", HTMLTableElement).tBodies[0]!;
const areasBody = byId("live-areas", HTMLTableElement).tBodies[0]!;
const hostsCount = byId("hosts-count", HTMLElement);
const areasCount = byId("areas-count", HTMLElement);

const findForm = byId("find", HTMLFormElement);
const foundCount = byId("found-count", HTMLElement);
const accountsError = byId("accounts-error", HTMLElement);
const accountsBody = byId("accounts", HTMLTableElement).tBodies[0]!;
const membershipForm = byId("membership", HTMLFormElement);
const takeBtn = byId("take", HTMLButtonElement);
const membershipNote = byId("membership-note", HTMLElement);

const explorer = byId("explorer", HTMLDetailsElement);
const explorerError = byId("explorer-error", HTMLElement);
const opSelect = byId("op", HTMLSelectElement);
const opText = byId("op-text", HTMLElement);
const opForm = byId("op-form", HTMLFormElement);
const opParams = byId("op-params", HTMLElement);
const opBodyLabel = byId("op-body-label", HTMLElement);
const opSend = byId("op-send", HTMLButtonElement);
const opStatus = byId("op-status", HTMLElement);
const opAnswer = byId("op-answer", HTMLElement);

const areaForm = byId("area-form", HTMLFormElement);
const areaError = byId("area-error", HTMLElement);
const areaDetailEl = byId("area-detail", HTMLElement);
const areaSummary = byId("area-summary", HTMLElement);
const areaMembersBody = byId("area-members", HTMLTableElement).tBodies[0]!;
const areaMembersCount = byId("area-members-count", HTMLElement);
const areaInvitesBody = byId("area-invites", HTMLTableElement).tBodies[0]!;
const areaInvitesCount = byId("area-invites-count", HTMLElement);
const spectateOpen = byId("spectate-open", HTMLButtonElement);
const spectateEl = byId("spectate", HTMLElement);
const spectateArea = byId("spectate-area", HTMLElement);
const spectateState = byId("spectate-state", HTMLElement);
const spectateStop = byId("spectate-stop", HTMLButtonElement);
const spectateNote = byId("spectate-note", HTMLElement);
const spectateStats = byId("spectate-stats", HTMLElement);
const spectateCanvas = byId("spectate-canvas", HTMLCanvasElement);
const followSelect = byId("follow", HTMLSelectElement);
const ovCells = byId("ov-cells", HTMLInputElement);
const ovPov = byId("ov-pov", HTMLInputElement);
const ovFlow = byId("ov-flow", HTMLInputElement);

const auditBody = byId("audit", HTMLTableElement).tBodies[0]!;
const auditCount = byId("audit-count", HTMLElement);

const range = byId("range", HTMLElement);
const chartGrid = byId("chart-grid", HTMLElement);
const chartsNote = byId("charts-note", HTMLElement);
const chartsError = byId("charts-error", HTMLElement);

const director = new Director("", { token: sessionStorage.getItem(TOKEN_KEY) });

/** Bumped at every screen change and log out: an answer of an older one is dropped. */
let epoch = 0;
/** The live view's pending timeout (0: none). */
let liveTimer = 0;
/** The door as the realm last said it, and whether the form differs from it. */
let saved: RealmSettings | null = null;
let dirty = false;
/** The charts' window, in seconds, and when they were last asked for (performance.now()). */
let since = 3600;
let chartsAt = -Infinity;
let everyS = 60;
/** The tick budget of the realm's hosts in µs (from its tick rate), for marking a slow tick. */
let tickBudgetUs = 0;

// ---- words ----

/** words turns a refusal of the API into a sentence for a person, naming its code. */
function words(e: unknown): string {
  if (!(e instanceof ApiError)) return String(e);
  const wait = e.retryAfterMs === undefined ? "in a moment" : `in ${Math.ceil(e.retryAfterMs / 1000)} s`;
  switch (e.code) {
    case "NETWORK":
      return "The director does not answer right now. Check the connection; the console tries again by itself.";
    case "FORBIDDEN":
      return "This account is not an admin of this realm, so the realm refuses it the console (FORBIDDEN). Log in with an admin account.";
    case "UNAUTHORIZED":
    case "SESSION_EXPIRED":
      return `Your login ended (${e.code}): a login elsewhere ends this one. Log in again.`;
    case "BAD_REQUEST":
      return `The realm refused these settings (BAD_REQUEST): ${e.message}. Nothing changed.`;
    case "TOO_LARGE":
      return "The settings are too large to send (TOO_LARGE). Nothing changed.";
    case "UNSUPPORTED_MEDIA_TYPE":
      return "The realm did not take the request's format (UNSUPPORTED_MEDIA_TYPE). Nothing changed.";
    case "RATE_LIMITED":
      return `Too many requests from this login (RATE_LIMITED). Try again ${wait}.`;
    case "UNAVAILABLE":
      return `The realm's database is unavailable for a moment (UNAVAILABLE): nothing changed, play goes on in the Areas already live. Try again ${wait}.`;
    case "INTERNAL":
      return `The director failed inside (INTERNAL): ${e.message}. Its log has the cause.`;
    case "NO_SUCH_AREA":
      return "There is no Area with this id (NO_SUCH_AREA).";
    case "SPECTATORS_FULL":
      return `This Area (or its host) has its maximum of spectators (SPECTATORS_FULL). Try again ${wait}, or when another operator stops watching.`;
    default:
      return `${e.message} (${e.code})`;
  }
}

function isAuthEnd(e: unknown): boolean {
  return e instanceof ApiError && e.status === 401;
}

function isForbidden(e: unknown): boolean {
  return e instanceof ApiError && e.code === "FORBIDDEN";
}

// ---- screens ----

function stopLive(): void {
  window.clearTimeout(liveTimer);
  liveTimer = 0;
}

/** forget clears what the last account left: forms, tables, charts, messages. */
function forget(): void {
  stopLive();
  stopSpectating();
  epoch++;
  loginForm.reset();
  areaForm.reset();
  areaDetailEl.hidden = true;
  areaMembersBody.replaceChildren();
  areaInvitesBody.replaceChildren();
  door.reset();
  saved = null;
  dirty = false;
  findForm.reset();
  membershipForm.reset();
  explorer.open = false;
  opParams.replaceChildren();
  opSend.dataset["armed"] = "";
  opSend.textContent = "Send";
  lastQuery = "";
  hostsBody.replaceChildren();
  areasBody.replaceChildren();
  accountsBody.replaceChildren();
  auditBody.replaceChildren();
  chartGrid.replaceChildren();
  for (const e of [authError, refusedText, doorNote, doorError, liveError, chartsError, chartsNote, liveAge, hostsCount, areasCount, who, realmLine,
    foundCount, accountsError, membershipNote, auditCount, explorerError, opStatus, opAnswer, areaError, areaSummary, areaMembersCount, areaInvitesCount,
    spectateNote, spectateStats]) e.textContent = "";
  chartsAt = -Infinity;
  logoutBtn.hidden = true;
}

function toAuth(message = ""): void {
  forget();
  director.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  authError.textContent = message;
  show(auth, refused, consoleEl);
}

function toRefused(e: unknown): void {
  forget();
  refusedText.textContent = words(e);
  logoutBtn.hidden = false;
  show(refused, auth, consoleEl);
}

/** toConsole asks for the door's settings (admins only) and shows the console, or the refusal. */
async function toConsole(): Promise<void> {
  const mine = ++epoch;
  try {
    const [me, settings, info] = await Promise.all([director.me(), director.realm(), director.info()]);
    if (mine !== epoch) return;
    who.textContent = `${me.name} (${me.email})`;
    logoutBtn.hidden = false;
    show(consoleEl, auth, refused);
    fillDoor(settings);
    showInfo(info);
    startLive();
  } catch (e) {
    if (mine !== epoch) return;
    if (isAuthEnd(e)) toAuth(words(e));
    else if (isForbidden(e)) toRefused(e);
    else toAuth(words(e));
  }
}

// ---- the door ----

function input(name: string): HTMLInputElement | HTMLTextAreaElement {
  const e = door.elements.namedItem(name);
  if (!(e instanceof HTMLInputElement) && !(e instanceof HTMLTextAreaElement)) throw new Error(`no field ${name}`);
  return e;
}

function checkbox(name: string): HTMLInputElement {
  const e = input(name);
  if (!(e instanceof HTMLInputElement)) throw new Error(`${name} is no checkbox`);
  return e;
}

function fillDoor(s: RealmSettings): void {
  saved = s;
  dirty = false;
  checkbox("open").checked = s.open;
  input("cap").value = String(s.cap);
  checkbox("new_players_welcome").checked = s.new_players_welcome;
  input("message").value = s.message;
  doorStatus();
}

/** DoorForm is the door as the form holds it: a cap that is no whole number >= 0 is null. */
type DoorForm = Omit<RealmSettings, "cap"> & { cap: number | null };

/** formDoor reads the form. */
function formDoor(): DoorForm {
  const cap = input("cap").value.trim();
  return {
    open: checkbox("open").checked,
    cap: /^[0-9]+$/.test(cap) ? Number(cap) : null,
    new_players_welcome: checkbox("new_players_welcome").checked,
    message: input("message").value,
  };
}

function doorStatus(): void {
  const f = formDoor();
  dirty = saved !== null && (f.open !== saved.open || f.cap !== saved.cap || f.new_players_welcome !== saved.new_players_welcome || f.message !== saved.message);
  const open = saved?.open ?? false;
  doorState.textContent = dirty ? "unsaved changes" : open ? "open" : "closed";
  doorState.dataset["state"] = dirty ? "dirty" : open ? "open" : "closed";
  doorReset.disabled = !dirty;
}

door.addEventListener("input", () => {
  doorNote.textContent = "";
  doorStatus();
});

doorReset.addEventListener("click", () => {
  if (saved !== null) fillDoor(saved);
  doorError.textContent = "";
  doorNote.textContent = "";
});

/** confirmed asks, in a dialog, whether to close and drain the realm. */
function confirmed(): Promise<boolean> {
  return new Promise((resolve) => {
    confirmClose.returnValue = "";
    confirmClose.addEventListener("close", () => resolve(confirmClose.returnValue === "close"), { once: true });
    confirmClose.showModal();
  });
}

door.addEventListener("submit", (ev) => {
  ev.preventDefault();
  doorError.textContent = "";
  doorNote.textContent = "";
  const f = formDoor();
  if (f.cap === null) {
    doorError.textContent = "The player cap must be a whole number, 0 or more.";
    return;
  }
  const next: RealmSettings = { ...f, cap: f.cap };
  const closing = saved !== null && saved.open && !next.open;
  const mine = epoch;
  const button = byId("door-save", HTMLButtonElement);
  button.disabled = true;
  void (async () => {
    try {
      if (closing && !(await confirmed())) {
        doorNote.textContent = "Nothing changed: the realm stays open.";
        return;
      }
      const now = await director.setRealm(next);
      if (mine !== epoch) return;
      fillDoor(now);
      doorNote.textContent = `Saved at ${new Date().toLocaleTimeString()}${closing ? ": the realm is draining" : ""}.`;
    } catch (e) {
      if (mine !== epoch) return;
      if (isAuthEnd(e)) toAuth(words(e));
      else if (isForbidden(e)) toRefused(e);
      else doorError.textContent = words(e);
    } finally {
      button.disabled = false;
    }
  })();
});

// ---- the live view ----

function plural(n: number, what: string, many = `${what}s`): string {
  return `${n} ${n === 1 ? what : many}`;
}

/** showInfo shows the realm line and the knobs, and keeps an unchanged door form current. */
function showInfo(i: RealmInfo): void {
  realmLine.textContent = `${i.open ? "open" : "closed"} · ${i.players} playing of ${i.cap} · ${plural(i.live_areas, "live Area")} · ${plural(i.hosts, "host")}`;
  rail.textContent = plural(i.knobs.process_rail, "host");
  pool.textContent = String(i.knobs.pool_size);
  maxLive.textContent = String(i.knobs.max_live_areas);
  tickBudgetUs = i.knobs.tick_rate > 0 ? 1e6 / i.knobs.tick_rate : 0;
  if (!dirty && saved !== null) {
    const s = { open: i.open, cap: i.cap, new_players_welcome: i.new_players_welcome, message: i.message };
    if (s.open !== saved.open || s.cap !== saved.cap || s.new_players_welcome !== saved.new_players_welcome || s.message !== saved.message) fillDoor(s);
  }
}

function cell(text: string, cls = "", title = ""): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls !== "") td.className = cls;
  if (title !== "") td.title = title;
  return td;
}

function row(data: Record<string, string>, ...cells: HTMLTableCellElement[]): HTMLTableRowElement {
  const tr = document.createElement("tr");
  for (const [k, v] of Object.entries(data)) tr.dataset[k] = v;
  tr.append(...cells);
  return tr;
}

function empty(cols: number, text: string): HTMLTableRowElement {
  const td = cell(text, "muted");
  td.colSpan = cols;
  return row({}, td);
}

function renderHosts(hosts: HostStats[]): void {
  hostsCount.textContent = `(${hosts.length})`;
  if (hosts.length === 0) {
    hostsBody.replaceChildren(empty(8, "No host is registered: the realm starts one at the first join."));
    return;
  }
  hostsBody.replaceChildren(
    ...hosts.map((h) => {
      const late = h.beat_age_ms > LATE_BEAT_MS;
      const slow = tickBudgetUs > 0 && h.tick_p99_us > tickBudgetUs;
      return row(
        { host: String(h.id), name: h.name },
        cell(h.name, "", `host ${h.id}, pid ${h.pid}${h.spawned ? ", started by this director" : ", registered from elsewhere"}`),
        cell(h.ws_url, "mono"),
        cell(String(h.areas), "num"),
        cell(String(h.active), "num"),
        cell(String(h.peers), "num"),
        cell(mib(h.rss_kib * 1024), "num"),
        cell(micros(h.tick_p99_us), slow ? "num warn" : "num", slow ? `over the tick budget of ${micros(tickBudgetUs)}` : ""),
        cell(`${(h.beat_age_ms / 1000).toFixed(1)} s ago`, late ? "num warn" : "num", late ? "the heartbeat is late" : ""),
      );
    }),
  );
}

function renderAreas(areas: LiveArea[], hosts: HostStats[]): void {
  const names = new Map(hosts.map((h) => [h.id, h.name]));
  areasCount.textContent = `(${areas.length})`;
  if (areas.length === 0) {
    areasBody.replaceChildren(empty(7, "No Area is live: an Area goes live when a player joins it."));
    return;
  }
  const sorted = [...areas].sort((a, b) => b.accounts.length - a.accounts.length || a.area - b.area);
  areasBody.replaceChildren(
    ...sorted.map((a) =>
      row(
        { area: String(a.area), players: String(a.accounts.length), closing: String(a.closing) },
        cell(String(a.area), "num"),
        cell(a.template),
        cell(names.get(a.host) ?? `host ${a.host}`),
        cell(String(a.epoch), "num"),
        cell(String(a.accounts.length), "num", `${a.peers} connected peers`),
        cell(a.closing ? "closing" : "live", a.closing ? "warn" : "good"),
        areaActions(a.area),
      ),
    ),
  );
}

/** areaActions is the cell of an Area's row with its Detail and Spectate buttons. */
function areaActions(area: number): HTMLTableCellElement {
  const td = cell("");
  const detail = document.createElement("button");
  detail.type = "button";
  detail.className = "small";
  detail.textContent = "Detail";
  detail.dataset["detail"] = String(area);
  detail.addEventListener("click", () => void showArea(area));
  const watch = document.createElement("button");
  watch.type = "button";
  watch.className = "small";
  watch.textContent = "Spectate";
  watch.dataset["spectate"] = String(area);
  watch.addEventListener("click", () => void spectate(area));
  td.append(detail, watch);
  return td;
}

// ---- an Area: its detail, and spectating it ----

function areaInput(): number | null {
  const v = field(areaForm, "area");
  return /^[1-9][0-9]*$/.test(v) ? Number(v) : null;
}

function setAreaInput(area: number): void {
  const e = areaForm.elements.namedItem("area");
  if (e instanceof HTMLInputElement) e.value = String(area);
}

/** showArea shows an Area's record, owner, members and invites. */
async function showArea(area: number): Promise<void> {
  const mine = epoch;
  setAreaInput(area);
  areaError.textContent = "";
  try {
    const d = await director.areaDetail(area);
    if (mine !== epoch) return;
    renderArea(d);
  } catch (e) {
    if (mine !== epoch) return;
    if (isAuthEnd(e)) return toAuth(words(e));
    if (isForbidden(e)) return toRefused(e);
    areaDetailEl.hidden = true;
    areaError.textContent = words(e);
  }
}

function renderArea(d: AreaDetail): void {
  areaDetailEl.hidden = false;
  areaDetailEl.dataset["area"] = String(d.id);
  const owner = d.owner_account === undefined ? `account ${d.owner} (gone)` : `${d.owner_account.name} (${d.owner_account.email}, account ${d.owner})`;
  const played = d.last_played === undefined ? "never played" : `last played ${new Date(d.last_played).toLocaleString()}`;
  const live = d.live === undefined ? "not live" : d.live.closing ? `closing on host ${d.live.host}` : `live on host ${d.live.host}, ${plural(d.live.accounts.length, "player")}`;
  areaSummary.textContent = `Area ${d.id}, “${d.name}”: a ${d.kind} of the template ${d.template}, ${d.w} × ${d.h} squares, owned by ${owner}; made ${new Date(d.created).toLocaleString()}, ${played}; ${live}.`;
  areaSummary.dataset["owner"] = String(d.owner);
  areaSummary.dataset["template"] = d.template;
  areaMembersCount.textContent = d.members_more ? `(the first ${d.members.length} of ${d.members_total})` : `(${d.members_total})`;
  areaMembersBody.replaceChildren(
    ...d.members.map((m) =>
      row(
        { account: String(m.id), role: m.role },
        cell(String(m.id), "num"),
        cell(m.name !== "" ? m.name : "(account gone)", m.name !== "" ? "" : "muted"),
        cell(m.email, "mono"),
        cell(m.role),
        cell(new Date(m.added).toLocaleDateString(), "", m.added),
      ),
    ),
  );
  areaInvitesCount.textContent = `(${d.invites.length})`;
  if (d.invites.length === 0) {
    areaInvitesBody.replaceChildren(empty(3, "No invite to this Area can be redeemed now."));
  } else {
    areaInvitesBody.replaceChildren(
      ...d.invites.map((i) => row({ code: i.code }, cell(i.code, "mono"), cell(String(i.uses_left), "num"), cell(new Date(i.expires).toLocaleString(), "", i.expires))),
    );
  }
}

areaForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const area = areaInput();
  if (area === null) {
    areaError.textContent = "Name an Area by its id.";
    return;
  }
  void showArea(area);
});

spectateOpen.addEventListener("click", () => {
  const area = areaInput();
  if (area === null) {
    areaError.textContent = "Name an Area by its id.";
    return;
  }
  void spectate(area);
});

/** The spectator of the Area watched, its floor's image, the frame it asked for (0: none), and where the last frame drew the Area. */
let spectator: Spectator | null = null;
let floorImage = new FloorImage();
let spectateFrame = 0;
let spectateCamera: Camera | null = null;

function stopSpectating(): void {
  spectateAgain = 0;
  const s = spectator;
  spectator = null;
  s?.close();
  if (spectateFrame !== 0) cancelAnimationFrame(spectateFrame);
  spectateFrame = 0;
  spectateEl.hidden = true;
  followSelect.replaceChildren(followSelect.options[0]!);
  ovCells.checked = false;
  ovPov.checked = false;
  ovFlow.checked = false;
}

/** spectate starts watching an Area (in place of the one watched before). */
async function spectate(area: number): Promise<void> {
  stopSpectating();
  setAreaInput(area);
  areaError.textContent = "";
  const mine = epoch;
  const s = new Spectator({ director, area });
  spectator = s;
  floorImage = new FloorImage();
  spectateCamera = null;
  spectateEl.hidden = false;
  spectateArea.textContent = String(area);
  spectateState.textContent = "connecting";
  spectateState.dataset["state"] = "connecting";
  spectateNote.textContent = "";
  s.on("update", () => {
    if (spectator !== s) return;
    syncFollow(s);
    redraw();
  });
  s.on("notice", (n) => {
    if (spectator !== s) return;
    if (n.code === "ENTITY_GONE") {
      const wasFlow = ovFlow.checked;
      ovPov.checked = false;
      ovFlow.checked = false;
      spectateNote.textContent = wasFlow ? "The creature watched is gone: showing the whole Area." : "The player followed left the Area: showing the whole Area.";
      redraw();
      return;
    }
    spectateNote.textContent = `${n.detail} (${n.code}).`;
  });
  s.on("end", (e) => {
    if (spectator !== s) return;
    spectateState.textContent = "ended";
    spectateState.dataset["state"] = "ended";
    spectateNote.textContent = `Watching ended: ${e.reason}. Spectate again to go on.`;
  });
  try {
    await s.start();
    if (spectator !== s || mine !== epoch) return;
    spectateState.textContent = "watching";
    spectateState.dataset["state"] = "watching";
    redraw();
  } catch (e) {
    if (spectator !== s || mine !== epoch) return;
    if (isAuthEnd(e)) return toAuth(words(e));
    if (isForbidden(e)) return toRefused(e);
    stopSpectating();
    areaError.textContent = e instanceof ApiError ? words(e) : `The Area's host refused to be watched: ${e instanceof Error ? e.message : String(e)}.`;
  }
}

/** syncFollow keeps the Follow list to the players present (presence), keeping the choice while its player is there. */
function syncFollow(s: Spectator): void {
  const want = [...s.view.players.entries()].sort((a, b) => a[1].localeCompare(b[1]) || a[0] - b[0]);
  const have = Array.from(followSelect.options).slice(1);
  if (have.length === want.length && have.every((o, i) => o.value === String(want[i]![0]) && o.textContent === want[i]![1])) return;
  const chosen = followSelect.value;
  followSelect.replaceChildren(
    followSelect.options[0]!,
    ...want.map(([id, name]) => {
      const o = document.createElement("option");
      o.value = String(id);
      o.textContent = name;
      return o;
    }),
  );
  followSelect.value = want.some(([id]) => String(id) === chosen) ? chosen : "0";
  if (followSelect.value === "0" && s.watching !== 0) {
    ovPov.checked = false;
    s.watch(0);
  }
}

function redraw(): void {
  if (spectateFrame !== 0) return;
  spectateFrame = requestAnimationFrame(() => {
    spectateFrame = 0;
    const s = spectator;
    if (s === null) return;
    spectateCamera = drawSpectate(spectateCanvas, floorImage, {
      view: s.view,
      follow: Number(followSelect.value),
      cells: ovCells.checked,
      pov: ovPov.checked && s.watching !== 0,
      flow: ovFlow.checked ? s.flow : null,
    });
    let players = 0;
    for (const e of s.view.entities.values()) if (e.kind === EntityKind.Player) players++;
    spectateStats.textContent = `tick ${s.view.tick} · ${plural(s.view.entities.size, "body", "bodies")} in view, ${plural(players, "player")}`;
  });
}

/**
 * A click on the map follows the player drawn nearest it (within two
 * squares); with the flow field overlay on, it watches the creature drawn
 * nearest it instead.
 */
spectateCanvas.addEventListener("click", (ev) => {
  const s = spectator;
  const cam = spectateCamera;
  if (s === null || cam === null) return;
  const r = spectateCanvas.getBoundingClientRect();
  const at = squareAt(cam, ev.clientX - r.left, ev.clientY - r.top);
  const kind = ovFlow.checked ? EntityKind.Creature : EntityKind.Player;
  let best = 0;
  let bestD = 3;
  for (const e of s.view.entities.values()) {
    const d = Math.max(Math.abs(e.x - at.x), Math.abs(e.y - at.y));
    if (e.kind === kind && d < bestD && (kind === EntityKind.Creature || s.view.players.has(e.id))) {
      best = e.id;
      bestD = d;
    }
  }
  if (best === 0) return;
  if (ovFlow.checked) {
    if (s.watching !== best) s.watch(best);
    spectateNote.textContent = `Creature ${best}'s flow field: the first step out of each square towards the body it hunts.`;
    redraw();
    return;
  }
  if (String(best) === followSelect.value) return;
  followSelect.value = String(best);
  followSelect.dispatchEvent(new Event("change"));
});

followSelect.addEventListener("change", () => {
  const s = spectator;
  if (s === null) return;
  const id = Number(followSelect.value);
  if (ovPov.checked) s.watch(id === 0 ? 0 : id);
  if (id === 0) ovPov.checked = false;
  redraw();
});
ovCells.addEventListener("change", redraw);
ovPov.addEventListener("change", () => {
  const s = spectator;
  if (s === null) return;
  const id = Number(followSelect.value);
  if (ovPov.checked && id === 0) {
    ovPov.checked = false;
    spectateNote.textContent = "Follow a player first: this shows what that player sees.";
    return;
  }
  if (ovPov.checked) ovFlow.checked = false; // the host sends one of the two
  s.watch(ovPov.checked ? id : 0);
  redraw();
});
ovFlow.addEventListener("change", () => {
  const s = spectator;
  if (s === null) return;
  if (ovFlow.checked) {
    if (ovPov.checked) {
      ovPov.checked = false; // the host sends one of the two
      s.watch(0);
    }
    spectateNote.textContent = "Click a creature on the map to see the flow field it follows.";
  } else if (s.watching !== 0 && s.view.entities.get(s.watching)?.kind === EntityKind.Creature) {
    s.watch(0);
  }
  redraw();
});
spectateStop.addEventListener("click", () => stopSpectating());
window.addEventListener("resize", () => {
  if (spectator !== null) redraw();
});

// ---- accounts ----

/** The last search, shown again after an act on one of its accounts. */
let lastQuery = "";

function renderAccounts(f: FoundAccounts): void {
  foundCount.textContent = f.more ? `(the newest ${f.accounts.length} of more)` : `(${f.accounts.length})`;
  if (f.accounts.length === 0) {
    accountsBody.replaceChildren(empty(6, "No account matches."));
    return;
  }
  accountsBody.replaceChildren(
    ...f.accounts.map((a) => {
      const end = document.createElement("button");
      end.type = "button";
      end.className = "danger small";
      end.textContent = "End sessions";
      end.dataset.account = String(a.id);
      end.addEventListener("click", () => void endSessions(end, a.id, a.name));
      const actions = cell("");
      actions.append(end);
      return row(
        { account: String(a.id), name: a.name },
        cell(String(a.id), "num"),
        cell(a.admin ? `${a.name} (admin)` : a.name),
        cell(a.email, "mono"),
        cell(a.character === undefined ? "never joined" : `area ${a.character.area}`, a.character === undefined ? "muted" : ""),
        cell(a.bound_in === 0 ? "not playing" : `area ${a.bound_in}`, a.bound_in === 0 ? "muted" : "good"),
        actions,
      );
    }),
  );
}

async function find(q: string): Promise<void> {
  const mine = epoch;
  lastQuery = q;
  try {
    const f = await director.findAccounts(q);
    if (mine !== epoch) return;
    accountsError.textContent = "";
    renderAccounts(f);
  } catch (e) {
    if (mine !== epoch) return;
    if (isAuthEnd(e)) return toAuth(words(e));
    accountsError.textContent = words(e);
  }
}

/** endSessions asks first (the button's first click), then ends the account's sessions and shows the search again. */
async function endSessions(btn: HTMLButtonElement, account: number, name: string): Promise<void> {
  if (btn.dataset.armed !== "true") {
    btn.dataset.armed = "true";
    btn.textContent = `Really end ${name}'s sessions?`;
    return;
  }
  btn.disabled = true;
  try {
    const n = await director.endSessions(account);
    accountsError.textContent = "";
    membershipNote.textContent = `${name}: ${plural(n, "session")} ended, and its play.`;
  } catch (e) {
    if (isAuthEnd(e)) return toAuth(words(e));
    accountsError.textContent = `${words(e)} Nothing changed.`;
  }
  await find(lastQuery);
}

findForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  void find(field(findForm, "q"));
});

/** membership gives (or, with take, takes) the membership the form names. */
async function membership(take: boolean): Promise<void> {
  const account = Number(field(membershipForm, "account"));
  const area = Number(field(membershipForm, "area"));
  const role = (membershipForm.elements.namedItem("role") as HTMLSelectElement).value === "builder" ? "builder" : "member";
  if (!Number.isInteger(account) || account < 1 || !Number.isInteger(area) || area < 1) {
    membershipNote.textContent = "Name an account and an Area by their ids.";
    return;
  }
  let note: string;
  try {
    if (take) await director.takeMembership(area, account);
    else await director.giveMembership(area, account, role);
    note = take ? `Account ${account} is no longer a member of area ${area}.` : `Account ${account} is a ${role} of area ${area}.`;
  } catch (e) {
    if (isAuthEnd(e)) return toAuth(words(e));
    note = `${words(e)} Nothing changed.`;
  }
  // The accounts are shown again first, and the note says the act is done
  // only then: a button armed after the note (End sessions' first click)
  // is not replaced under the operator's hand by a late redraw.
  if (lastQuery !== "" || accountsBody.rows.length > 0) await find(lastQuery);
  membershipNote.textContent = note;
}

membershipForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  void membership(false);
});
takeBtn.addEventListener("click", () => void membership(true));

// ---- the API explorer ----

let doc: Doc | null = null;
let ops: Op[] = [];

/** loadExplorer reads the director's OpenAPI document once, when the explorer is first opened. */
async function loadExplorer(): Promise<void> {
  if (doc !== null) return;
  try {
    const resp = await fetch("/v1/openapi.json");
    if (!resp.ok) throw new Error(`GET /v1/openapi.json answered ${resp.status}`);
    doc = (await resp.json()) as Doc;
    ops = operations(doc);
    opSelect.replaceChildren(
      ...ops.map((o, i) => {
        const opt = document.createElement("option");
        opt.value = String(i);
        opt.textContent = `${o.method} ${o.path}${o.op.summary !== undefined ? ` — ${o.op.summary}` : ""}`;
        opt.dataset["route"] = `${o.method} ${o.path}`;
        return opt;
      }),
    );
    explorerError.textContent = "";
    showOp();
  } catch (e) {
    doc = null;
    explorerError.textContent = e instanceof Error ? e.message : String(e);
  }
}

/** showOp shows the chosen operation's words and its form: a field per parameter, the body to start from. */
function showOp(): void {
  const o = ops[Number(opSelect.value)];
  if (o === undefined || doc === null) return;
  opText.textContent = o.op.description ?? o.op.summary ?? "";
  opParams.replaceChildren(
    ...o.params
      .filter((p) => p.in === "path" || p.in === "query")
      .map((p) => {
        const label = document.createElement("label");
        label.textContent = `${p.name}${p.in === "path" || p.required === true ? "" : " (optional)"} `;
        label.title = p.description ?? "";
        const input = document.createElement("input");
        input.name = p.name;
        input.dataset["in"] = p.in;
        label.append(input);
        return label;
      }),
  );
  opBodyLabel.hidden = o.body === null;
  (opForm.elements.namedItem("body") as HTMLTextAreaElement).value = skeleton(doc, o.body);
  opSend.dataset["armed"] = "";
  opSend.textContent = "Send";
  opStatus.textContent = "";
  opStatus.dataset["status"] = "";
  opAnswer.textContent = "";
}

/** sendOp sends the chosen operation with the form's values; one that changes the realm asks first. */
async function sendOp(): Promise<void> {
  const o = ops[Number(opSelect.value)];
  if (o === undefined) return;
  let url: string;
  try {
    const values: Record<string, string> = {};
    opParams.querySelectorAll("input").forEach((input) => (values[input.name] = input.value));
    url = target(o, values);
  } catch (e) {
    opStatus.textContent = e instanceof Error ? e.message : String(e);
    return;
  }
  if (o.method !== "GET" && opSend.dataset["armed"] !== "true") {
    opSend.dataset["armed"] = "true";
    opSend.textContent = `Send: this ${o.method} changes the realm`;
    return;
  }
  opSend.dataset["armed"] = "";
  opSend.textContent = "Send";
  opSend.disabled = true;
  opStatus.textContent = `${o.method} ${url}: sending`;
  opStatus.dataset["status"] = "";
  opAnswer.textContent = "";
  try {
    const body = o.body === null ? "" : (opForm.elements.namedItem("body") as HTMLTextAreaElement).value;
    const a = await send(o.method, url, sessionStorage.getItem(TOKEN_KEY) ?? "", body);
    opStatus.textContent = `${o.method} ${url}: ${a.status}`;
    opStatus.dataset["status"] = String(a.status);
    opAnswer.textContent = a.text;
  } catch (e) {
    opStatus.textContent = e instanceof Error ? e.message : String(e);
  } finally {
    opSend.disabled = false;
  }
}

explorer.addEventListener("toggle", () => {
  if (explorer.open) void loadExplorer();
});
opSelect.addEventListener("change", showOp);
opForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  void sendOp();
});

/** AUDIT_SHOWN is how many of the newest changes the console lists. */
const AUDIT_SHOWN = 20;

function renderAudit(a: Changes): void {
  auditCount.textContent = a.more ? `(the newest ${a.changes.length})` : `(${a.changes.length})`;
  if (a.changes.length === 0) {
    auditBody.replaceChildren(empty(4, "No change has been made from the console or the API yet."));
    return;
  }
  auditBody.replaceChildren(
    ...a.changes.map((c) =>
      row(
        { change: String(c.id), action: c.action },
        cell(new Date(c.at).toLocaleString(), "", c.at),
        cell(c.actor_name !== "" ? c.actor_name : `account ${c.actor}`, "", `account ${c.actor}`),
        cell(`${c.action} (${c.target})`),
        cell(c.detail),
      ),
    ),
  );
}

function startLive(): void {
  stopLive();
  if (document.visibilityState !== "visible" || consoleEl.hidden) return;
  void refresh(epoch);
}

/** refresh asks for the live view (and the charts when due), then schedules the next refresh of the same epoch. */
async function refresh(mine: number): Promise<void> {
  try {
    const chartsDue = performance.now() - chartsAt >= Math.max(everyS * 1000, LIVE_MS);
    const [hosts, areas, info, samples, changes] = await Promise.all([
      director.hosts(),
      director.liveAreas(),
      director.info(),
      chartsDue ? director.samples(since) : Promise.resolve(null),
      director.audit(0, AUDIT_SHOWN),
    ]);
    if (mine !== epoch) return;
    liveError.textContent = "";
    renderHosts(hosts);
    renderAreas(areas, hosts);
    renderAudit(changes);
    showInfo(info);
    liveAge.textContent = `as of ${new Date().toLocaleTimeString()}`;
    if (samples !== null) {
      chartsAt = performance.now();
      renderCharts(samples);
    }
  } catch (e) {
    if (mine !== epoch) return;
    if (isAuthEnd(e)) return toAuth(words(e));
    if (isForbidden(e)) return toRefused(e);
    liveError.textContent = words(e);
  }
  if (mine !== epoch || consoleEl.hidden || document.visibilityState !== "visible") return;
  window.clearTimeout(liveTimer);
  liveTimer = window.setTimeout(() => void refresh(mine), LIVE_MS);
}

/** The Area watched when the page was hidden, to watch again when it shows (0: none). */
let spectateAgain = 0;

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") {
    startLive();
    const area = spectateAgain;
    spectateAgain = 0;
    if (area !== 0 && !consoleEl.hidden) void spectate(area);
  } else {
    stopLive();
    // A hidden page draws nothing: its spectator's place (4 an Area) goes
    // back to the host until the page shows again.
    if (spectator !== null && spectator.state !== "ended") {
      const area = Number(spectateArea.textContent);
      stopSpectating();
      spectateAgain = area;
    }
  }
});

// ---- the charts ----

const charts: Chart[] = [
  { key: "players", title: "Players", unit: "", lines: [{ name: "players", value: (s) => s.players }], format: (v) => String(Math.round(v)) },
  {
    key: "areas",
    title: "Areas",
    unit: "",
    lines: [
      { name: "live", value: (s) => s.live_areas },
      { name: "frozen", value: (s) => s.frozen_areas },
    ],
    format: (v) => String(Math.round(v)),
  },
  { key: "hosts", title: "Hosts", unit: "", lines: [{ name: "hosts", value: (s) => s.hosts }], format: (v) => String(Math.round(v)) },
  { key: "cpu", title: "Director CPU", unit: "cores", lines: [{ name: "cpu", value: (s) => s.cpu }], format: (v) => v.toFixed(2) },
  { key: "rss", title: "Director RSS", unit: "", lines: [{ name: "rss", value: (s) => s.rss_bytes }], format: mib, round: 1 << 20 },
  { key: "tick", title: "Worst tick p99", unit: "", lines: [{ name: "p99", value: (s) => s.worst_tick_p99_us }], format: micros },
];

let lastSamples: Samples | null = null;

function renderCharts(s: Samples): void {
  lastSamples = s;
  everyS = s.every_s;
  const n = s.samples.length;
  const span = since === 3600 ? "hour" : since === 86400 ? "day" : "week";
  chartsNote.textContent =
    n === 0
      ? `No samples in the last ${span} yet: the director writes one every ${s.every_s} s.`
      : `${n} samples over the last ${span}, one every ${s.every_s} s; a gap is time the director wrote none.`;
  chartGrid.replaceChildren(...charts.map((c) => drawChart(c, s, since, Date.now())));
}

const rangeButtons = Array.from(range.querySelectorAll<HTMLButtonElement>("button[data-since]"));
for (const b of rangeButtons) {
  b.addEventListener("click", () => {
    since = Number(b.dataset["since"]);
    for (const o of rangeButtons) o.setAttribute("aria-checked", String(o === b));
    chartsError.textContent = "";
    const mine = epoch;
    director
      .samples(since)
      .then((s) => {
        if (mine !== epoch) return;
        chartsAt = performance.now();
        renderCharts(s);
      })
      .catch((e: unknown) => {
        if (mine === epoch) chartsError.textContent = words(e);
      });
  });
}

window.addEventListener("resize", () => {
  if (lastSamples !== null && !consoleEl.hidden) renderCharts(lastSamples);
});

// ---- log in, log out ----

loginForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  authError.textContent = "";
  const button = loginForm.querySelector("button");
  if (button !== null) button.disabled = true;
  const email = field(loginForm, "email");
  const password = field(loginForm, "password");
  director
    .login(email, password)
    .then(() => {
      const token = director.token;
      forget();
      director.token = token;
      if (token !== null) sessionStorage.setItem(TOKEN_KEY, token);
      return toConsole();
    })
    .catch((e: unknown) => (authError.textContent = words(e)))
    .finally(() => {
      if (button !== null) button.disabled = false;
    });
});

function logOut(): void {
  stopLive();
  epoch++;
  void director.logout().finally(() => toAuth());
}

logoutBtn.addEventListener("click", logOut);
refusedLogout.addEventListener("click", logOut);

if (director.token === null) toAuth();
else void toConsole();
