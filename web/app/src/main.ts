/**
 * ley's web client: a landing that says what the realm is (and offers its
 * demo login when it has one), log in or sign up, pick one of your Areas
 * (or redeem an invite), name the builders of your homes, and play it.
 * Served by the director at /, so the API is the page's own origin.
 *
 * Three screens, one shown at a time (auth, lobby, play). Whatever
 * belongs to an account (the forms, the lists, the names, the Area being
 * played) is cleared at every log out and log in, and every timer belongs
 * to a screen: the realm line is asked again only while the auth or lobby
 * screen shows, by one interval, stopped when play starts.
 *
 * Offline play: the landing and the lobby offer it (first of all when the
 * realm does not answer), and it plays the offline Area (the engine's,
 * in the page) on the same play screen, from the save this browser keeps
 * (offlinesave.ts). The engine loads in the background as the page
 * starts; online play needs none, and predicts with it once it is here.
 * A service worker (sw.ts) keeps the page and the engine, so that the
 * page loads, and plays offline, without the realm.
 */

import "go:wasm_exec"; // Go's runtime support, which the engine needs (it defines globalThis.Go)
import "./style.css";

import {
  ApiError,
  Director,
  type Engine,
  loadEngine,
  OfflineRealm,
  type Area,
  type Me,
  type Member,
  type MyInvites,
  type RealmInfo,
} from "@leyworks/ley-sdk";

import { button, byId, field, li, show } from "./dom.js";
import { realmRefreshMs } from "./hooks.js";
import { loadSave, SaveError, storeSave } from "./offlinesave.js";
import { Play } from "./play.js";

const TOKEN_KEY = "ley.token";
/** What is being played (an Area's id, or OFFLINE), kept while the play screen shows, so that a reload goes back to play. */
const PLAYING_KEY = "ley.playing";
/** PLAYING_KEY's value while the offline Area is played. */
const OFFLINE = "offline";

const auth = byId("auth", HTMLElement);
const lobby = byId("lobby", HTMLElement);
const play = byId("play", HTMLElement);
const who = byId("who", HTMLElement);
const realm = byId("realm", HTMLElement);
const logoutBtn = byId("logout", HTMLButtonElement);
const authError = byId("auth-error", HTMLElement);
const lobbyError = byId("lobby-error", HTMLElement);
const lobbyNote = byId("lobby-note", HTMLElement);
const areasList = byId("areas", HTMLUListElement);
const invites = byId("invites", HTMLUListElement);
const continueRow = byId("continue-row", HTMLElement);
const continueBtn = byId("continue", HTMLButtonElement);
const demoOffer = byId("demo-offer", HTMLElement);
const demoBtn = byId("demo-login", HTMLButtonElement);
const loginForm = byId("login-form", HTMLFormElement);
const signupForm = byId("signup-form", HTMLFormElement);
const redeemForm = byId("redeem-form", HTMLFormElement);
const buildersCard = byId("builders", HTMLElement);
const buildersTitle = byId("builders-title", HTMLElement);
const membersList = byId("members", HTMLUListElement);
const buildersNote = byId("builders-note", HTMLElement);
const buildersError = byId("builders-error", HTMLElement);
const offer = byId("offline-offer", HTMLElement);
const offerTitle = byId("offline-title", HTMLElement);
const offerText = byId("offline-text", HTMLElement);
const offlineBtn = byId("play-offline", HTMLButtonElement);
const freshBtn = byId("offline-fresh", HTMLButtonElement);
const offlineError = byId("offline-error", HTMLElement);
const offlineSaved = byId("offline-saved", HTMLElement);

const director = new Director("", { token: sessionStorage.getItem(TOKEN_KEY) });
const names = new Map<number, string>();
let demo: { email: string; password: string } | null = null;
/** The email of the account logged in ("" when none is known). */
let accountEmail = "";
/** Bumped at every screen change and log out: an answer of an older one is dropped. */
let epoch = 0;
/** The home whose Builders panel shows (null: none); an answer about another one is dropped. */
let buildersOf: Area | null = null;

const player = new Play(
  director,
  () => back(),
  (message, keepEmail) => toAuth(message, keepEmail ? accountEmail : ""),
  (playing) => {
    if (playing === null) sessionStorage.removeItem(PLAYING_KEY);
    else sessionStorage.setItem(PLAYING_KEY, String(playing));
  },
);

/** engine loads the engine: once per page, a failed load being tried again at the next call. */
function engine(): Promise<Engine> {
  return loadEngine(LEY_ENGINE);
}

// The engine loads in the background: online play predicts with it once
// it is here, and offline play waits for it.
engine().then(
  (e) => (player.engine = e),
  (e: unknown) => console.warn("the engine did not load (offline play tries again):", e),
);

// The service worker keeps the page and the engine, so that the page
// loads and plays offline when the realm cannot be reached.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("sw.js").catch((e: unknown) => console.warn("no service worker:", e));
}

/** screen shows one of the three screens; the offer of offline play shows with the landing and the lobby. */
function screen(s: HTMLElement): void {
  show(s, ...[auth, lobby, play].filter((o) => o !== s));
  offer.hidden = s === play;
}

/** words turns any failure of the API into a sentence for people. */
function words(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 0) return "The realm does not answer right now. Check your connection, or try again in a moment.";
    if (e.status === 429 && e.retryAfterMs !== undefined) return `${e.message} (try again in ${Math.ceil(e.retryAfterMs / 1000)} s)`;
    return e.message;
  }
  return String(e);
}

/**
 * forget clears everything of the account that was logged in: the forms
 * (passwords too), the lists, the names, the Area being played, the
 * messages.
 */
function forget(): void {
  player.stop();
  epoch++;
  for (const f of [loginForm, signupForm, redeemForm]) f.reset();
  names.clear();
  areasList.replaceChildren();
  invites.replaceChildren();
  closeBuilders();
  continueRow.hidden = true;
  lobbyNote.textContent = "";
  lobbyError.textContent = "";
  authError.textContent = "";
  who.textContent = "";
  accountEmail = "";
  logoutBtn.hidden = true;
  sessionStorage.removeItem(PLAYING_KEY);
}

/** toAuth shows the landing and its forms, logged out; email, if given, is filled in for the next login. */
function toAuth(message = "", email = ""): void {
  forget();
  director.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  authError.textContent = message;
  const input = loginForm.elements.namedItem("email");
  if (input instanceof HTMLInputElement) input.value = email;
  screen(auth);
  startRealmLine();
}

/** back shows, after play, the lobby, or the landing when logged out (offline play needs no login). */
function back(): void {
  if (director.token !== null) {
    void toLobby();
    return;
  }
  epoch++;
  player.stop();
  screen(auth);
  startRealmLine();
}

async function toLobby(): Promise<void> {
  const mine = ++epoch;
  player.stop();
  sessionStorage.removeItem(PLAYING_KEY);
  lobbyError.textContent = "";
  screen(lobby);
  startRealmLine();
  try {
    const [me, areas, inv] = await Promise.all([director.me(), director.areas(), director.myInvites()]);
    if (mine !== epoch) return;
    who.textContent = `${me.name} (${me.email})`;
    accountEmail = me.email;
    logoutBtn.hidden = false;
    renderAreas(areas, me);
    renderInvites(inv);
    reachable(true);
  } catch (e) {
    if (mine !== epoch) return;
    if (e instanceof ApiError && e.status === 0) reachable(false);
    if (e instanceof ApiError && e.status === 401) {
      toAuth(e.code === "SESSION_EXPIRED" ? "Your login ended (a login elsewhere ends this one). Log in again." : "");
      return;
    }
    lobbyError.textContent = words(e);
  }
}

function areaWords(a: Area): string {
  const what = a.template === a.kind ? a.kind : `${a.kind}, ${a.template === "empty" ? "open floor" : a.template}`;
  return `${what} ${a.w}×${a.h}`;
}

/**
 * renderAreas lists the account's Areas. The one the character is in
 * (GET /v1/me) is where Continue goes and its own button says Play; any
 * other moves the character there (a join elsewhere brings it out of the
 * Area it was in), and says so.
 */
function renderAreas(areas: Area[], me: Me): void {
  names.clear();
  for (const a of areas) names.set(a.id, a.name);
  const here = me.character?.area;
  const current = areas.find((a) => a.id === here);
  lobbyNote.textContent = areas.length === 0 ? "You are not a member of any Area yet: redeem an invite." : "";
  const first = current ?? areas[0];
  continueRow.hidden = first === undefined;
  if (first !== undefined) {
    continueBtn.textContent = current !== undefined ? `Continue in ${first.name}` : `Play in ${first.name}`;
    continueBtn.dataset["join"] = String(first.id);
    continueBtn.onclick = () => toPlay(first.id);
  }
  areasList.replaceChildren(
    ...areas.map((a) => {
      const item = li("", { area: String(a.id) });
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = `${a.name} · ${areaWords(a)}${a.id === here ? " · you are here" : ""}`;
      const elsewhere = current !== undefined && a.id !== current.id;
      const join = elsewhere
        ? button("Go there", `Your character leaves ${current.name} and arrives here.`, () => toPlay(a.id))
        : button("Play", `Play in ${a.name}.`, () => toPlay(a.id));
      join.dataset["join"] = String(a.id);
      item.append(name, join);
      if (a.owner === me.id) item.append(button("Invite", "make an invite code for this Area", () => void invite(a)));
      if (a.owner === me.id && a.kind === "home") {
        const b = button("Builders", "see this home's members and name who may build in it", () => openBuilders(a));
        b.dataset["builders"] = String(a.id);
        item.append(b);
      }
      return item;
    }),
  );
}

/** renderInvites lists the invites the account made that can still be redeemed. */
function renderInvites(mine: MyInvites): void {
  const items = mine.invites.map((i) => {
    const to = names.get(i.area) ?? `Area ${i.area}`;
    const until = new Date(i.expires);
    const when = Number.isNaN(until.getTime()) ? i.expires : until.toLocaleString();
    const uses = i.uses_left === 1 ? "one use left" : `${i.uses_left} uses left`;
    return li(`${i.code}: to ${to}, ${uses}, until ${when}`, { code: i.code, area: String(i.area) });
  });
  if (mine.more) items.push(li("… and older ones"));
  invites.replaceChildren(...items);
}

async function invite(a: Area): Promise<void> {
  const mine = epoch;
  try {
    await director.createInvite(a.id, 1);
    const inv = await director.myInvites();
    if (mine === epoch) renderInvites(inv);
  } catch (e) {
    if (mine === epoch) lobbyError.textContent = words(e);
  }
}

/** The words for each role of a member, in the Builders panel. */
const ROLES: Record<Member["role"], string> = {
  owner: "owner",
  builder: "builder",
  member: "member, may not build",
};

/** openBuilders shows the Builders panel of home a, the account's own. */
function openBuilders(a: Area): void {
  buildersOf = a;
  buildersTitle.textContent = `Builders of ${a.name}`;
  buildersNote.textContent = "";
  buildersError.textContent = "";
  membersList.replaceChildren();
  buildersCard.hidden = false;
  void showMembers(a);
}

/** closeBuilders hides the Builders panel. */
function closeBuilders(): void {
  buildersOf = null;
  buildersCard.hidden = true;
  membersList.replaceChildren();
}

/** showMembers lists home a's members by name, with their roles, in its Builders panel. */
async function showMembers(a: Area): Promise<void> {
  const mine = epoch;
  try {
    const members = await director.members(a.id);
    if (mine === epoch && buildersOf === a) renderMembers(a, members);
  } catch (e) {
    if (mine === epoch && buildersOf === a) buildersError.textContent = words(e);
  }
}

/** renderMembers lists members; each but the owner has a button to make it a builder, or a plain member again. */
function renderMembers(a: Area, members: Member[]): void {
  const rows = members.map((m) => {
    const item = li("", { account: String(m.account), name: m.name, role: m.role });
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = `${m.name} · ${ROLES[m.role]}`;
    item.append(name);
    if (m.role === "builder") item.append(button("Make plain member", `${m.name} may no longer build here`, () => void setRole(a, m, "member")));
    if (m.role === "member") item.append(button("Make builder", `${m.name} may build here`, () => void setRole(a, m, "builder")));
    return item;
  });
  if (members.length <= 1) rows.push(li("No one else is a member yet: make an invite, and name them a builder once it is redeemed.", {}, "muted"));
  membersList.replaceChildren(...rows);
}

/** setRole makes member m of home a a builder or a plain member, says so (or why not) in words, and lists the members again. */
async function setRole(a: Area, m: Member, role: "builder" | "member"): Promise<void> {
  const mine = epoch;
  buildersNote.textContent = "";
  buildersError.textContent = "";
  membersList.querySelectorAll("button").forEach((b) => (b.disabled = true));
  try {
    await director.setRole(a.id, m.account, role);
    if (mine === epoch && buildersOf === a) {
      buildersNote.textContent =
        role === "builder"
          ? `${m.name} is now a builder of ${a.name}, from their next arrival there.`
          : `${m.name} is a plain member of ${a.name} again, from their next arrival there.`;
    }
  } catch (e) {
    if (mine === epoch && buildersOf === a) buildersError.textContent = roleWords(e, m);
  }
  await showMembers(a);
}

/** roleWords says why a role could not be set, in words. */
function roleWords(e: unknown, m: Member): string {
  if (!(e instanceof ApiError)) return words(e);
  switch (e.code) {
    case "FORBIDDEN":
      return "Only the home's owner names its builders.";
    case "NO_SUCH_MEMBER":
      return `${m.name} is no longer a member of this home.`;
    case "OWNER_STAYS":
      return "The owner always builds in their own home.";
    default:
      return words(e);
  }
}

function toPlay(area: number): void {
  epoch++;
  closeBuilders();
  stopRealmLine();
  realm.textContent = "";
  screen(play);
  window.scrollTo(0, 0);
  player.start(area, names);
}

/** The words of the offer of offline play, when the realm answers and when it does not. */
const OFFER_WORDS = "Your own home, kept in this browser: walk, build and gather with no realm at all. Nothing made offline reaches the realm.";
const UNREACHABLE_WORDS =
  "The realm does not answer (it may be restarting, or this device may be offline). You can still play offline: your own home, kept in this browser. Nothing made offline reaches the realm.";

/** reachable says whether the realm answered its last ask: when not, offline play is offered first, and says why. */
function reachable(yes: boolean): void {
  offer.dataset["unreachable"] = String(!yes);
  offerTitle.textContent = yes ? "Play offline" : "The realm cannot be reached";
  offerText.textContent = yes ? OFFER_WORDS : UNREACHABLE_WORDS;
  offlineBtn.classList.toggle("primary", !yes);
}

/** UnreadableSave: the offline save kept in this browser is none this engine reads (another version's, or damaged). */
class UnreadableSave extends Error {
  override name = "UnreadableSave";
}

/**
 * playOffline plays the offline Area from the save this browser keeps (a
 * new home when there is none, or when fresh): the play screen shows at
 * once, saying it is starting while the engine and the save load. What
 * fails is said on the offer, back on the landing or the lobby.
 */
async function playOffline(fresh = false): Promise<void> {
  const mine = ++epoch;
  closeBuilders();
  stopRealmLine();
  realm.textContent = "";
  offlineError.textContent = "";
  freshBtn.hidden = true;
  screen(play);
  window.scrollTo(0, 0);
  player.startingOffline();
  try {
    const [e, save] = await Promise.all([engine(), fresh ? undefined : loadSave()]);
    if (mine !== epoch) return;
    player.engine = e;
    let r: OfflineRealm;
    try {
      r = new OfflineRealm(e, { save, onSave: keep });
    } catch (err) {
      throw save === undefined ? err : new UnreadableSave(err instanceof Error ? err.message : String(err));
    }
    player.startOffline(r);
  } catch (e) {
    if (mine !== epoch) return;
    offlineError.textContent = offlineWords(e);
    freshBtn.hidden = !(e instanceof UnreadableSave);
    back();
  }
}

/** offlineWords says why offline play could not start, in words. */
function offlineWords(e: unknown): string {
  const why = e instanceof Error ? e.message : String(e);
  if (e instanceof UnreadableSave) {
    return `The offline home kept in this browser cannot be read by this version of the game (${why}). Start a new one in its place (the old one is lost), or try again after an update.`;
  }
  if (e instanceof SaveError) return e.message;
  return `Offline play cannot start: ${why}. Try again in a moment.`;
}

/** How many saves of the offline Area were made, and the number of the last one kept in the browser (on #offline-saved). */
let savesMade = 0;
let savesKept = 0;

/** keep keeps a save of the offline Area in this browser, and says when it was kept, or why it was not. */
function keep(save: Uint8Array): void {
  const n = ++savesMade;
  offlineSaved.dataset["made"] = String(n);
  storeSave(save).then(
    () => {
      if (n <= savesKept) return;
      savesKept = n;
      offlineSaved.dataset["kept"] = String(n);
      offlineSaved.dataset["failed"] = "false";
      offlineSaved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
    },
    (e: unknown) => {
      const words = e instanceof Error ? e.message : String(e);
      offlineSaved.dataset["failed"] = "true";
      offlineSaved.textContent = words;
      offlineError.textContent = words;
    },
  );
}

/** loggedIn logs in, forgetting whatever the last account left, and goes to the lobby. */
async function loggedIn(email: string, password: string): Promise<void> {
  await director.login(email, password);
  const token = director.token;
  forget();
  director.token = token;
  if (token !== null) sessionStorage.setItem(TOKEN_KEY, token);
  await toLobby();
}

function form(f: HTMLFormElement, submit: (f: HTMLFormElement) => Promise<void>, errorEl: HTMLElement): void {
  f.addEventListener("submit", (ev) => {
    ev.preventDefault();
    errorEl.textContent = "";
    const button = f.querySelector("button");
    if (button !== null) button.disabled = true;
    submit(f)
      .catch((e: unknown) => (errorEl.textContent = words(e)))
      .finally(() => {
        if (button !== null) button.disabled = false;
      });
  });
}

form(loginForm, (f) => loggedIn(field(f, "email"), field(f, "password")), authError);
form(
  signupForm,
  async (f) => {
    const email = field(f, "email");
    const password = field(f, "password");
    await director.signUp(email, password, field(f, "name"));
    await loggedIn(email, password);
  },
  authError,
);
form(
  redeemForm,
  async (f) => {
    const area = await director.redeemInvite(field(f, "code"));
    f.reset();
    await toLobby();
    lobbyNote.textContent = `You are now a member of ${names.get(area) ?? `Area ${area}`}.`;
  },
  lobbyError,
);

demoBtn.addEventListener("click", () => {
  if (demo === null) return;
  authError.textContent = "";
  demoBtn.disabled = true;
  loggedIn(demo.email, demo.password)
    .catch((e: unknown) => (authError.textContent = words(e)))
    .finally(() => (demoBtn.disabled = false));
});

byId("builders-close", HTMLButtonElement).addEventListener("click", closeBuilders);
offlineBtn.addEventListener("click", () => void playOffline());
freshBtn.addEventListener("click", () => void playOffline(true));
reachable(true);

logoutBtn.addEventListener("click", () => {
  player.stop();
  void director.logout().finally(() => toAuth());
});

// Leaving the page (closing the tab, navigating away, a reload) leaves
// the Area, best effort (the offline Area's socket closing saves it); a
// reload finds what it played in sessionStorage and goes back to it.
window.addEventListener("pagehide", () => player.unload());
// A page hidden (another tab, a phone's home screen) may never come
// back: the offline Area is saved then too.
document.addEventListener("visibilitychange", () => {
  const r = player.offlineRealm;
  if (document.visibilityState === "hidden" && r !== null) keep(r.save());
});
window.addEventListener("pageshow", (ev) => {
  if (ev.persisted) resume();
});

/** How often the header's realm line is asked again, while the auth or lobby screen shows. */
const REALM_REFRESH_MS = 10_000;
let realmTimer = 0;

function startRealmLine(): void {
  stopRealmLine();
  refreshRealm();
  // The count moves as players come and go: keep it current.
  realmTimer = window.setInterval(refreshRealm, realmRefreshMs(REALM_REFRESH_MS));
}

function stopRealmLine(): void {
  window.clearInterval(realmTimer);
  realmTimer = 0;
}

/** refreshRealm shows the realm door (open or closed, players, the operator's message) and whether it has a demo login. */
function refreshRealm(): void {
  director
    .info()
    .then((i: RealmInfo) => {
      realm.textContent = `${i.open ? "open" : "closed"} · ${i.players} playing${i.message === "" ? "" : ` · ${i.message}`}`;
      demo = i.demo ?? null;
      demoOffer.hidden = demo === null;
      reachable(true);
    })
    .catch(() => {
      realm.textContent = "the realm does not answer";
      reachable(false);
    });
}

/** resume shows the screen the page was on: play (offline, or an Area of the realm) if it was playing, else the lobby, or the landing when logged out. */
function resume(): void {
  if (sessionStorage.getItem(PLAYING_KEY) === OFFLINE) {
    void playOffline();
    return;
  }
  if (director.token === null) {
    toAuth();
    return;
  }
  const playing = Number(sessionStorage.getItem(PLAYING_KEY));
  if (!Number.isInteger(playing) || playing <= 0) {
    void toLobby();
    return;
  }
  // Back to play where the character is now (a portal may have moved it
  // since the Area was stored).
  const mine = ++epoch;
  director
    .me()
    .then(async (me) => {
      const areas = await director.areas();
      if (mine !== epoch) return;
      for (const a of areas) names.set(a.id, a.name);
      who.textContent = `${me.name} (${me.email})`;
      accountEmail = me.email;
      logoutBtn.hidden = false;
      toPlay(me.character?.area ?? playing);
    })
    .catch((e: unknown) => {
      if (mine !== epoch) return;
      if (e instanceof ApiError && e.status === 401) toAuth("Your login ended. Log in again.");
      else void toLobby();
    });
}

resume();
