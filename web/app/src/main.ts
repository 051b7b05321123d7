/**
 * ley's web client: log in or sign up, pick one of your Areas (or redeem
 * an invite), and play it. Served by the director at /, so the API is the
 * page's own origin.
 */

import "./style.css";

import { ApiError, Director, type Area, type MyInvites } from "@leyworks/ley-sdk";

import { byId, field, li, show } from "./dom.js";
import { Play } from "./play.js";

const TOKEN_KEY = "ley.token";

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

const director = new Director("", { token: sessionStorage.getItem(TOKEN_KEY) });
const names = new Map<number, string>();

const player = new Play(
  director,
  () => void toLobby(),
  () => toAuth("Your login ended (a login elsewhere ends this one). Log in again."),
);

/** words turns any failure of the API into a sentence for people. */
function words(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429 && e.retryAfterMs !== undefined) return `${e.message} (retry in ${Math.ceil(e.retryAfterMs / 1000)} s)`;
    return e.message;
  }
  return String(e);
}

function toAuth(message = ""): void {
  player.stop();
  director.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  who.textContent = "";
  logoutBtn.hidden = true;
  authError.textContent = message;
  show(auth, lobby, play);
}

async function toLobby(): Promise<void> {
  lobbyError.textContent = "";
  show(lobby, auth, play);
  refreshRealm();
// The count moves as players come and go: keep it current.
window.setInterval(refreshRealm, REALM_REFRESH_MS);
  try {
    const [me, areas, mine] = await Promise.all([director.me(), director.areas(), director.myInvites()]);
    who.textContent = `${me.name} (${me.email})`;
    logoutBtn.hidden = false;
    renderAreas(areas, me.id, me.character?.area);
    renderInvites(mine);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      toAuth(e.code === "SESSION_EXPIRED" ? "Your login ended. Log in again." : "");
      return;
    }
    lobbyError.textContent = words(e);
  }
}

function renderAreas(areas: Area[], me: number, current: number | undefined): void {
  names.clear();
  for (const a of areas) names.set(a.id, a.name);
  lobbyNote.textContent = areas.length === 0 ? "You are not a member of any Area yet: redeem an invite." : "";
  areasList.replaceChildren(
    ...areas.map((a) => {
      const item = li("", { area: String(a.id) });
      const name = document.createElement("span");
      name.className = "name";
      const what = a.template === a.kind ? a.kind : `${a.kind}, ${a.template === "empty" ? "open floor" : a.template}`;
      name.textContent = `${a.name} · ${what} ${a.w}×${a.h}${a.id === current ? " · you are here" : ""}`;
      const join = document.createElement("button");
      join.type = "button";
      join.textContent = "Join";
      join.dataset["join"] = String(a.id);
      join.addEventListener("click", () => toPlay(a.id));
      item.append(name, join);
      if (a.owner === me) {
        const inv = document.createElement("button");
        inv.type = "button";
        inv.textContent = "Invite";
        inv.title = "make an invite code for this Area";
        inv.addEventListener("click", () => void invite(a));
        item.append(inv);
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
  try {
    await director.createInvite(a.id, 1);
    renderInvites(await director.myInvites());
  } catch (e) {
    lobbyError.textContent = words(e);
  }
}

function toPlay(area: number): void {
  show(play, auth, lobby);
  player.start(area, names);
}

async function loggedIn(email: string, password: string): Promise<void> {
  await director.login(email, password);
  if (director.token !== null) sessionStorage.setItem(TOKEN_KEY, director.token);
  await toLobby();
}

function form(id: string, submit: (f: HTMLFormElement) => Promise<void>, errorEl: HTMLElement): void {
  const f = byId(id, HTMLFormElement);
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

form("login-form", (f) => loggedIn(field(f, "email"), field(f, "password")), authError);
form(
  "signup-form",
  async (f) => {
    const email = field(f, "email");
    const password = field(f, "password");
    await director.signUp(email, password, field(f, "name"));
    await loggedIn(email, password);
  },
  authError,
);
form(
  "redeem-form",
  async (f) => {
    const area = await director.redeemInvite(field(f, "code"));
    f.reset();
    await toLobby();
    lobbyNote.textContent = `You are now a member of ${names.get(area) ?? `Area ${area}`}.`;
  },
  lobbyError,
);

logoutBtn.addEventListener("click", () => {
  player.stop();
  void director.logout().finally(() => toAuth());
});

/** How often the header's realm line is asked again. */
const REALM_REFRESH_MS = 10_000;

/** refreshRealm shows the realm door: open or closed, players, the operator's message. */
function refreshRealm(): void {
  director
    .info()
    .then((i) => {
      realm.textContent = `${i.open ? "open" : "closed"} · ${i.players} playing${i.message === "" ? "" : ` · ${i.message}`}`;
    })
    .catch(() => (realm.textContent = "the realm does not answer"));
}

refreshRealm();

if (director.token === null) toAuth();
else void toLobby();
