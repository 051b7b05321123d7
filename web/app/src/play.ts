/**
 * The play screen: one Session, drawn every animation frame, with the
 * connection's state and round-trip time, the player's health, the
 * players here, what the player faces and what the pointer is over, the
 * fighting (blows, damage, deaths), building (the inventory bar, placing,
 * taking back, chests: see build.ts), crafting (a cauldron's Craft, the
 * recipes the character knows, blueprints: see craft.ts), trading with
 * the player next to the body (trade.ts), stalls (stall.ts), and plain
 * words for what ends or interrupts play. While the session is not live
 * the map is dimmed and says so, and the banner counts down to the next
 * attempt.
 *
 * It plays an Area of the realm, or the offline Area of this browser (an
 * OfflineRealm: the same session, map and controls, with a bar that says
 * nothing of it reaches the realm). Once the engine has loaded, every
 * session predicts with it.
 */

import {
  ApiError,
  Code,
  DIR_DELTA,
  type Death,
  type Director,
  DoorState,
  type Engine,
  EntityFlag,
  EntityKind,
  type EndReason,
  type Hit,
  IntentKind,
  ItemFlag,
  OFFLINE_AREA,
  ObjectKind,
  type OfflineRealm,
  Session,
  type SessionState,
} from "@leyworks/ley-sdk";

import { Builder } from "./build.js";
import { Crafter } from "./craft.js";
import { Stall } from "./stall.js";
import { TRADE_INTENTS, Trader } from "./trade.js";
import { byId, li, onTap } from "./dom.js";
import { sessionStarted, socketUrl } from "./hooks.js";
import { BUILD_HINT, BUILD_TOUCH_HINT, HINT, Input, NO_BUILD_HINT, TOUCH_HINT } from "./input.js";
import { capital, itemName } from "./looks.js";
import { COLORS, Renderer, describeEntity, describeObject, objectOn } from "./render.js";

/** The words for each way a session ends. */
const ENDINGS: Record<EndReason, string> = {
  left: "You left the Area.",
  taken_over: "This session was taken over: you logged in and joined from another tab or device.",
  realm_closed: "The realm is closed to players right now.",
  realm_full: "The realm is full. Try again in a little while.",
  area_full: "This Area is full. Try again in a little while.",
  no_such_area: "This Area does not exist, or you are not one of its members.",
  unauthorized: "Your login ended (a login elsewhere ends this one). Log in again.",
  version_unsupported: "This realm speaks another version of the protocol than this page: reload the page.",
  gave_up: "The realm cannot take you right now.",
};

/** Refusals worth telling the player about, in plain words, by code. */
const REFUSALS: Partial<Record<number, string>> = {
  [Code.NO_PATH]: "There is no way there.",
  [Code.OUT_OF_BOUNDS]: "That is off the edge of the map.",
  [Code.NOT_ALLOWED]: "The rules of this Area do not allow that.",
  [Code.MALFORMED]: "The server did not understand that.",
  [Code.PORTAL_IN_PROGRESS]: "Wait a moment: you are crossing a portal.",
};

/** Why a portal refused a crossing, in plain words. */
const PORTAL_REFUSALS: Partial<Record<number, string>> = {
  [Code.NOT_MEMBER]: "you are not a member of the Area beyond it",
  [Code.AREA_FULL]: "the Area beyond it is full",
  [Code.INTERNAL]: "the Area beyond it cannot start right now",
  [Code.REALM_CLOSED]: "the realm is closed",
};

/** How long the flash over the map stays, in ms. */
const FLASH_MS = 4000;
/** How long the toast stays, in ms. */
const TOAST_MS = 5000;
/** Lines of the fight log kept. */
const LOG_LINES = 6;
/** A walk that has not moved the body for this long has stopped short, in ms. */
const STUCK_MS = 3000;

/** What is played: an Area of the realm (its id), or the offline Area. */
export type Playing = number | "offline";

/** The names of the offline Area's one Area, for the HUD. */
function offlineNames(): Map<number, string> {
  return new Map([[OFFLINE_AREA, "Your offline home"]]);
}

/** Play runs the play screen. */
export class Play {
  private loaded: Engine | undefined;

  /** The engine, once loaded: the session being played and every one started after predict with it. */
  get engine(): Engine | undefined {
    return this.loaded;
  }

  set engine(e: Engine | undefined) {
    this.loaded = e;
    if (e !== undefined) this.session?.useEngine(e);
  }
  private session: Session | null = null;
  /** The offline Area being played (null: an Area of the realm, or none). */
  private realm: OfflineRealm | null = null;
  private readonly renderer: Renderer;
  private readonly input: Input;
  private readonly builder: Builder;
  private readonly crafter: Crafter;
  private readonly stall: Stall;
  private readonly trader: Trader;
  private names = new Map<number, string>();
  private target: { x: number; y: number } | null = null;
  private walk: { x: number; y: number; since: number } | null = null;
  private drawn: { x: number; y: number } | null = null;
  private lastFrame = 0;
  private closingAt: number | null = null;
  /** What the warning banner says before its countdown, while the session is not live. */
  private warn: string | null = null;
  private everReady = false;
  private raf = 0;
  private playersKey = "";
  private toastTimer = 0;
  private flashTimer = 0;
  private hurtTimer = 0;
  private pointer: { x: number; y: number } | null = null;
  private hpKey = "";
  private lastHitBy: { name: string; at: number } | null = null;

  private readonly canvas = byId("map", HTMLCanvasElement);
  private readonly view = byId("view", HTMLElement);
  private readonly offline = byId("offline", HTMLElement);
  private readonly conn = byId("conn", HTMLElement);
  private readonly rtt = byId("rtt", HTMLElement);
  private readonly areaName = byId("area-name", HTMLElement);
  private readonly pos = byId("pos", HTMLElement);
  private readonly droppedEl = byId("dropped", HTMLElement);
  private readonly banner = byId("banner", HTMLElement);
  private readonly bannerText = byId("banner-text", HTMLElement);
  private readonly bannerAction = byId("banner-action", HTMLButtonElement);
  private readonly players = byId("players", HTMLUListElement);
  private readonly toastEl = byId("toast", HTMLElement);
  private readonly logEl = byId("log", HTMLUListElement);
  private readonly hp = byId("hp", HTMLElement);
  private readonly hpText = byId("hp-text", HTMLElement);
  private readonly hpFill = byId("hp-fill", HTMLElement);
  private readonly facingEl = byId("facing", HTMLElement);
  private readonly tooltip = byId("tooltip", HTMLElement);
  private readonly flashEl = byId("flash", HTMLElement);
  private readonly actBtn = byId("act", HTMLButtonElement);
  private readonly placeBtn = byId("place", HTMLButtonElement);
  private readonly takeBtn = byId("take", HTMLButtonElement);
  private readonly hint = byId("hint", HTMLElement);
  private readonly buildHint = byId("build-hint", HTMLElement);
  private readonly offlineBar = byId("offline-bar", HTMLElement);

  /**
   * onLeave goes back to the lobby (or the landing); onLoggedOut to the
   * login, with words (and the account's email filled in, if keepEmail);
   * onPlaying is told what is being played (null: nothing), so that a
   * reload can come back to it.
   */
  constructor(
    private readonly director: Director,
    private readonly onLeave: () => void,
    private readonly onLoggedOut: (message: string, keepEmail: boolean) => void,
    private readonly onPlaying: (playing: Playing | null) => void,
  ) {
    this.renderer = new Renderer(this.canvas);
    const focusMap = (): void => this.canvas.focus({ preventScroll: true });
    this.builder = new Builder(() => this.session, (text) => this.toast(text), focusMap);
    this.crafter = new Crafter(() => this.session, this.builder, (text) => this.toast(text), focusMap);
    this.stall = new Stall(() => this.session, this.builder, (text) => this.toast(text), focusMap);
    this.trader = new Trader(() => this.session, (text) => this.toast(text), focusMap);
    this.builder.onChest = () => {
      this.crafter.show(this.session);
      this.stall.show(this.session);
    };
    this.input = new Input(
      () => this.session,
      (x, y) => {
        this.target = { x, y };
        this.walk = null;
        void this.session?.moveTo(x, y);
      },
      () => {
        this.target = null;
        this.walk = null;
        void this.session?.stop();
      },
      (text) => this.toast(text),
      this.builder,
    );
    this.hint.textContent = HINT;
    this.showBuilding(null);
    window.addEventListener("keydown", (ev) => {
      if (this.session !== null && this.input.keydown(ev)) ev.preventDefault();
    });
    window.addEventListener("keyup", (ev) => this.input.keyup(ev));
    window.addEventListener("blur", () => this.input.blur());
    window.addEventListener("online", () => this.session?.retryNow());
    onTap(this.canvas, (x, y, shift) => {
      const sq = this.renderer.squareAt(x, y);
      this.input.click(sq.x, sq.y, shift);
      this.canvas.focus({ preventScroll: true });
    });
    // A finger has no hover, no Shift and no keys: the Act, Build and
    // Take buttons show, and the hint speaks of taps.
    const touch = (): void => {
      for (const b of [this.actBtn, this.placeBtn, this.takeBtn]) b.classList.add("touch");
      this.hint.textContent = TOUCH_HINT;
      this.builder.setTouch(true);
      this.showBuilding(this.session);
    };
    if (window.matchMedia("(pointer: coarse)").matches) touch();
    this.canvas.addEventListener("pointerdown", (ev) => {
      if (ev.pointerType === "touch") touch();
    });
    onTap(this.actBtn, () => {
      this.input.act();
      focusMap();
    });
    onTap(this.placeBtn, () => {
      this.builder.placeFaced();
      focusMap();
    });
    onTap(this.takeBtn, () => {
      this.builder.takeFaced();
      focusMap();
    });
    this.canvas.addEventListener("mousemove", (ev) => (this.pointer = { x: ev.clientX, y: ev.clientY }));
    this.canvas.addEventListener("mouseleave", () => {
      this.pointer = null;
      this.tooltip.hidden = true;
    });
    byId("leave", HTMLButtonElement).addEventListener("click", () => {
      this.stop();
      this.onLeave();
    });
  }

  /** start plays Area area of the realm; names are the Areas' names, for the HUD. */
  start(area: number, names: Map<number, string>): void {
    this.begin(area, names, null);
  }

  /** startOffline plays the offline Area of realm. */
  startOffline(realm: OfflineRealm): void {
    this.begin(OFFLINE_AREA, offlineNames(), realm);
  }

  /**
   * startingOffline shows the offline play screen with no session yet,
   * its map dimmed and saying so, while the engine and the save load.
   */
  startingOffline(): void {
    this.stop();
    this.clear();
    this.names = offlineNames();
    this.showArea(OFFLINE_AREA);
    this.offlineBar.hidden = false;
    this.conn.dataset["state"] = "idle";
    this.conn.textContent = "starting";
    this.conn.title = "";
    this.offline.textContent = "Starting offline play…";
  }

  /** The offline Area being played, or null. */
  get offlineRealm(): OfflineRealm | null {
    return this.realm;
  }

  /** begin plays area: of the realm (realm null) or the offline Area of realm. */
  private begin(area: number, names: Map<number, string>, realm: OfflineRealm | null): void {
    this.stop();
    this.clear();
    this.names = names;
    this.realm = realm;
    this.offlineBar.hidden = realm === null;
    const s =
      realm === null
        ? new Session({ director: this.director, area, socket: (url) => new WebSocket(socketUrl(url)), engine: this.engine })
        : new Session({ director: realm, socket: realm.socket, area, engine: this.engine, silenceMs: 0 }); // no network to go silent
    this.session = s;
    this.wire(s);
    sessionStarted(s);
    this.showArea(area);
    this.onPlaying(this.playing(area));
    s.start();
    this.canvas.focus({ preventScroll: true });
    const frame = (now: number): void => {
      this.frame(now);
      this.raf = requestAnimationFrame(frame);
    };
    this.raf = requestAnimationFrame(frame);
  }

  /** clear clears the screen of whatever the last session showed. */
  private clear(): void {
    this.hideBanner();
    this.closingAt = null;
    this.warn = null;
    this.everReady = false;
    this.target = null;
    this.walk = null;
    this.drawn = null;
    this.playersKey = "";
    this.hpKey = "";
    this.lastHitBy = null;
    // Nothing of the last session's HUD may pass for this one's.
    this.pos.textContent = "";
    delete this.pos.dataset["x"];
    delete this.pos.dataset["y"];
    this.rtt.textContent = "";
    this.droppedEl.textContent = "";
    this.hp.hidden = true;
    this.players.replaceChildren();
    this.logEl.replaceChildren();
    this.facingEl.textContent = "";
    this.facingEl.title = "";
    this.toastEl.textContent = "";
    this.renderer.clearEffects();
    this.builder.reset();
    this.crafter.reset();
    this.stall.reset();
    this.trader.reset();
    this.showBuilding(null);
    this.setLive("joining");
  }

  /** playing is what onPlaying is told while area is played. */
  private playing(area: number): Playing {
    return this.realm === null ? area : "offline";
  }

  /** stop leaves the Area (if in one), stops drawing and every timer of the screen. */
  stop(): void {
    this.unload();
    this.onPlaying(null);
  }

  /**
   * unload leaves the Area (if in one) and stops drawing, but keeps the
   * Area as the one being played: the page is going away (pagehide), and
   * a reload comes back to it. Leaving the offline Area closes its
   * socket, which saves it (OfflineRealm's onSave).
   */
  unload(): void {
    cancelAnimationFrame(this.raf);
    window.clearTimeout(this.toastTimer);
    window.clearTimeout(this.flashTimer);
    window.clearTimeout(this.hurtTimer);
    this.view.classList.remove("hurt");
    const s = this.session;
    const realm = this.realm;
    this.session = null;
    this.realm = null;
    s?.leave();
    realm?.close(); // saved as its socket closed; the engine forgets it
  }

  private wire(s: Session): void {
    const current = (): boolean => this.session === s;
    s.on("state", (e) => {
      if (!current()) return;
      this.conn.dataset["state"] = e.state;
      this.conn.textContent = e.state;
      this.conn.title = e.detail;
      this.setLive(e.state);
      // A drop of a session in play; a join being retried says its own
      // words (joinRefused).
      if (e.state === "reconnecting" && (e.previous === "ready" || e.previous === "bound") && this.banner.dataset["kind"] !== "bad") {
        this.warn = this.closingAt !== null ? "This Area closed" : "Connection lost";
        this.closingAt = null;
        this.showBanner(this.warn, "warn", "Try now", () => s.retryNow());
      }
    });
    s.on("ready", (e) => {
      if (!current()) return;
      this.everReady = true;
      this.closingAt = null;
      this.warn = null;
      if (this.banner.dataset["kind"] !== "bad") this.hideBanner();
      this.showArea(e.area);
      this.onPlaying(this.playing(e.area));
    });
    s.on("rtt", (e) => {
      if (current()) this.rtt.textContent = `rtt ${Math.round(e.smoothedMs)} ms`;
    });
    s.on("snapshot", () => {
      if (current()) this.afterSnapshot(s);
    });
    s.on("presence", () => {
      if (current()) this.afterSnapshot(s);
    });
    s.on("areaInfo", () => {
      if (!current()) return;
      this.builder.showRules(s);
      this.builder.showInventory(s);
      this.crafter.show(s);
      this.showBuilding(s);
    });
    s.on("inventory", () => {
      if (!current()) return;
      this.builder.showInventory(s);
      this.crafter.show(s);
      this.trader.showInventory(s);
    });
    s.on("trade", (t) => {
      if (current()) this.trader.onTrade(s, t);
    });
    s.on("recipes", () => {
      if (current()) this.crafter.show(s);
    });
    s.on("container", (e) => {
      if (current()) this.builder.onContainer(s, e);
    });
    s.on("areaClosing", (e) => {
      if (!current()) return;
      this.closingAt = performance.now() + e.graceMs;
      this.showBanner(this.closingText(), "warn");
    });
    s.on("takenOver", () => {
      if (current()) this.showBanner(ENDINGS.taken_over, "bad", "Play here", () => void this.playHere(s.area));
    });
    s.on("portalMoved", (e) => {
      if (!current()) return;
      this.target = null;
      this.walk = null;
      this.drawn = null;
      this.renderer.clearEffects();
      this.builder.closeChest();
      this.toast(`Through the portal to ${this.names.get(e.to) ?? `Area ${e.to}`}.`);
    });
    s.on("portalBlocked", () => {
      if (current()) this.toast("The portal did not take you through in time: you are back where you stepped from.");
    });
    s.on("portalRejected", (e) => {
      if (current()) this.toast(`The portal did not take you through: ${PORTAL_REFUSALS[e.reason] ?? "it refused you"}.`);
    });
    s.on("joinRefused", (e) => {
      if (!current()) return;
      const what =
        e.status === 0
          ? "The realm does not answer (it may be restarting)"
          : e.code === "REALM_FULL"
            ? "The realm is full"
            : e.code === "AT_CAPACITY"
              ? "The realm has no room right now"
              : e.code === "GRANT_FAILED"
                ? "The realm could not open this Area yet"
                : e.code === "IN_ANOTHER_AREA"
                  ? "You are still crossing a portal"
                  : e.status === 429
                    ? "Too many tries at once"
                    : e.message;
      if (e.willRetry) {
        this.warn = what;
        this.showBanner(what, "warn", "Try now", () => s.retryNow());
      } else if (e.status !== 401) {
        this.showBanner(`${what}.`, "bad");
      }
    });
    s.on("intentRefused", (e) => {
      if (!current()) return;
      if (e.intent.kind === IntentKind.MoveTo) {
        this.target = null;
        this.walk = null;
      }
      // Crafting, using an item, trading and stalls say their refusals
      // themselves (craft.ts, trade.ts, stall.ts), knowing what was tried.
      const own = [IntentKind.Craft, IntentKind.Use, IntentKind.Price, IntentKind.Buy] as number[];
      if (own.includes(e.intent.kind) || TRADE_INTENTS.has(e.intent.kind)) return;
      const building = this.builder.refusal(e.intent, e.code);
      if (building !== undefined) {
        this.toast(building);
      } else if (e.intent.kind === IntentKind.Action && e.code === Code.NOTHING_THERE) {
        this.toast(this.nothingThere(s, e.intent.dir));
      } else if (e.intent.kind === IntentKind.Action && e.code === Code.NOT_ALLOWED) {
        this.toast("You may not attack that here.");
      } else {
        const w = REFUSALS[e.code];
        if (w !== undefined) this.toast(w);
      }
    });
    s.on("hit", (h) => {
      if (current()) this.onHit(h);
    });
    s.on("death", (d) => {
      if (current()) this.onDeath(d);
    });
    s.on("respawned", () => {
      if (!current()) return;
      const by = this.lastHitBy !== null && performance.now() - this.lastHitBy.at < 3000 ? ` by ${this.lastHitBy.name}` : "";
      this.flash(`You were killed${by}. You are back at a spawn point with full health.`);
      this.log(`You were killed${by}.`, "bad");
    });
    s.on("dropped", () => {
      if (current()) this.droppedEl.textContent = `${s.dropped} bad message${s.dropped === 1 ? "" : "s"} dropped`;
    });
    s.on("ended", (e) => {
      if (!current()) return;
      this.conn.dataset["state"] = "ended";
      this.conn.textContent = "ended";
      this.rtt.textContent = "";
      this.setLive("ended");
      if (e.reason === "left") return;
      if (e.reason === "unauthorized") {
        this.stop();
        this.onLoggedOut(ENDINGS.unauthorized, true);
        return;
      }
      if (e.reason !== "taken_over") {
        const realm = this.realm;
        this.showBanner(ENDINGS[e.reason], "bad", "Try again", () => (realm === null ? this.start(s.area, this.names) : this.startOffline(realm)));
      }
    });
  }

  /**
   * playHere plays again after a takeover. The other login has most
   * likely ended this one (a login ends the account's earlier sessions):
   * then the login screen says so, with the email filled in.
   */
  private async playHere(area: number): Promise<void> {
    try {
      await this.director.me();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        this.stop();
        this.onLoggedOut(
          "Playing here needs a new login: logging in on the other tab or device ended this one. Log in again (that ends the other one).",
          true,
        );
        return;
      }
      this.showBanner("The realm does not answer right now. Try again in a moment.", "bad", "Play here", () => void this.playHere(area));
      return;
    }
    this.start(area, this.names);
  }

  /**
   * showBuilding offers building only where area_info's rules say this
   * player may build: there the Build and Take buttons show and the hint
   * says how; elsewhere they hide and the hint says why not (nothing,
   * while no area_info has come).
   */
  private showBuilding(s: Session | null): void {
    const may = s !== null && this.builder.may(s);
    this.placeBtn.hidden = !may;
    this.takeBtn.hidden = !may;
    const touch = this.actBtn.classList.contains("touch");
    this.buildHint.textContent = may ? (touch ? BUILD_TOUCH_HINT : BUILD_HINT) : (s?.view.info ?? null) === null ? "" : NO_BUILD_HINT;
  }

  /** setLive dims the map and says why while the session is not live. */
  private setLive(state: SessionState): void {
    const live = state === "ready";
    this.view.dataset["live"] = String(live);
    if (live) {
      this.offline.textContent = "";
      return;
    }
    this.tooltip.hidden = true;
    this.offline.textContent =
      state === "ended"
        ? "Not in play."
        : state === "reconnecting"
          ? "Not live: reconnecting."
          : this.everReady
            ? "Not live: rejoining."
            : "Joining…";
  }

  private showArea(area: number): void {
    this.areaName.dataset["area"] = String(area);
    this.areaName.textContent = this.names.get(area) ?? `Area ${area}`;
  }

  private closingText(): string {
    const left = this.closingAt === null ? 0 : Math.max(0, Math.ceil((this.closingAt - performance.now()) / 1000));
    return `This Area is closing in ${left} s; you will be brought back when it can take you.`;
  }

  /** countdown says when the session tries again, as of now. */
  private countdown(s: Session): string {
    const next = s.nextAttempt;
    if (next === null) return s.state === "reconnecting" ? "Trying again…" : "Reconnecting…";
    const ms = Math.max(0, next.at - performance.now());
    return `Trying again in ${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.ceil(ms / 1000)} s.`;
  }

  private showBanner(text: string, kind: "warn" | "bad", action?: string, onAction?: () => void): void {
    this.banner.hidden = false;
    this.banner.dataset["kind"] = kind;
    this.bannerText.textContent = text;
    this.bannerAction.hidden = action === undefined;
    this.bannerAction.textContent = action ?? "";
    this.bannerAction.onclick = onAction === undefined ? null : () => onAction();
  }

  private hideBanner(): void {
    this.banner.hidden = true;
    this.banner.dataset["kind"] = "";
    this.bannerText.textContent = "";
  }

  private flash(text: string): void {
    this.flashEl.textContent = text;
    this.flashEl.hidden = false;
    window.clearTimeout(this.flashTimer);
    this.flashTimer = window.setTimeout(() => this.hideFlash(), FLASH_MS);
  }

  private hideFlash(): void {
    window.clearTimeout(this.flashTimer);
    this.flashEl.hidden = true;
    this.flashEl.textContent = "";
  }

  private toast(text: string): void {
    this.toastEl.textContent = text;
    window.clearTimeout(this.toastTimer);
    this.toastTimer = window.setTimeout(() => (this.toastEl.textContent = ""), TOAST_MS);
  }

  /** log adds a line to the fight log (the newest first). */
  private log(text: string, cls: "good" | "bad" | "" = ""): void {
    this.logEl.prepend(li(text, {}, cls));
    while (this.logEl.children.length > LOG_LINES) this.logEl.lastElementChild?.remove();
  }

  private onHit(h: Hit): void {
    this.renderer.effect(h.x, h.y, `-${h.damage}`, h.self ? COLORS.hpLow : COLORS.damage);
    this.renderer.struck(h.target);
    const what = h.targetName === undefined ? "it" : h.targetKind === EntityKind.Creature ? `the ${h.targetName}` : h.targetName;
    if (h.self) {
      const who = h.byName === undefined ? "Something" : h.by !== null && this.kindOf(h.by) === EntityKind.Creature ? `The ${h.byName}` : h.byName;
      if (h.byName !== undefined) this.lastHitBy = { name: h.by !== null && this.kindOf(h.by) === EntityKind.Creature ? `a ${h.byName}` : h.byName, at: performance.now() };
      this.log(`${who} hits you: ${h.damage} (${h.hp}/${h.fullHp} left).`, "bad");
      this.view.classList.add("hurt");
      window.clearTimeout(this.hurtTimer);
      this.hurtTimer = window.setTimeout(() => this.view.classList.remove("hurt"), 350);
    } else if (h.bySelf) {
      this.log(h.hp > 0 ? `You hit ${what}: ${h.damage} (${h.hp}/${h.fullHp} left).` : `You hit ${what}: ${h.damage}.`);
    }
  }

  private onDeath(d: Death): void {
    if (d.self) return; // respawned says it, with the flash
    this.renderer.effect(d.x, d.y, "✕", COLORS.hpLow, 1400);
    const what = d.name === undefined ? "Something" : d.kind === EntityKind.Creature ? `The ${d.name}` : d.name;
    if (d.bySelf) this.log(`You killed ${d.kind === EntityKind.Creature ? `the ${d.name ?? "creature"}` : (d.name ?? "them")}.`, "good");
    else if (d.byName !== undefined) this.log(`${what} was killed by ${d.byName}.`);
    else this.log(`${what} died.`);
  }

  private kindOf(entity: number): number | undefined {
    return this.session?.view.entities.get(entity)?.kind;
  }

  /** nothingThere says why an action on the square in dir did nothing, in words. */
  private nothingThere(s: Session, dir: number): string {
    const p = s.confirmed ?? s.predicted;
    if (p === null) return "There is nothing there to act on.";
    const [dx, dy] = DIR_DELTA[dir & 7] as readonly [number, number];
    const o = objectOn(s.view, p.x + dx, p.y + dy);
    switch (o?.kind) {
      case ObjectKind.Chest:
        return "The chest is shut fast: it does not open.";
      case ObjectKind.Item: {
        const what = capital(itemName(s.view.itemKind(o.item)));
        if (!this.builder.may(s)) return `${what}: you may not take it back here.`;
        return `${what}: ${this.actBtn.classList.contains("touch") ? "Take" : "T"} takes it back.`;
      }
      case ObjectKind.Sign:
        return `The sign reads: “${o.text}”`;
      case ObjectKind.Tree:
      case ObjectKind.Rock:
        return `Nothing happens: ${describeObject(o)} cannot be moved.`;
      default:
        return "There is nothing there to act on.";
    }
  }

  /** afterSnapshot updates what follows the world: position, health, players here. */
  private afterSnapshot(s: Session): void {
    const v = s.view;
    const me = s.confirmed;
    if (me !== null) {
      this.pos.textContent = `(${me.x}, ${me.y})`;
      this.pos.dataset["x"] = String(me.x);
      this.pos.dataset["y"] = String(me.y);
    }
    this.showHealth(s);
    this.builder.follow(s);
    this.trader.follow(s);
    const rows: { name: string; entity: number; x?: number; y?: number; away: boolean }[] = [];
    for (const [entity, name] of v.players) {
      const e = v.entities.get(entity);
      rows.push(
        e !== undefined && e.kind === EntityKind.Player
          ? { name, entity, x: e.x, y: e.y, away: (e.flags & EntityFlag.Away) !== 0 }
          : { name, entity, away: false },
      );
    }
    rows.sort((a, b) => a.name.localeCompare(b.name));
    const key = JSON.stringify(rows);
    if (key === this.playersKey) return;
    this.playersKey = key;
    this.players.replaceChildren(
      ...rows.map((r) => {
        const data: Record<string, string> = { entity: String(r.entity), name: r.name };
        if (r.x !== undefined && r.y !== undefined) {
          data["x"] = String(r.x);
          data["y"] = String(r.y);
        }
        const text = r.x === undefined ? `${r.name} (out of sight)` : `${r.name} (${r.x}, ${r.y})${r.away ? ", away" : ""}`;
        const item = li(text, data, r.entity === s.entity ? "self" : r.away ? "away" : "");
        item.title = text;
        return item;
      }),
    );
  }

  /** showHealth shows the own body's health of the Area's player_hp. */
  private showHealth(s: Session): void {
    const self = s.self;
    const full = s.view.info?.playerHp ?? 0;
    const key = self === undefined ? "" : `${self.hp}/${full}`;
    if (key === this.hpKey) return;
    this.hpKey = key;
    this.hp.hidden = self === undefined || full === 0;
    if (self === undefined || full === 0) return;
    const f = Math.min(1, self.hp / full);
    this.hp.dataset["hp"] = String(self.hp);
    this.hp.dataset["max"] = String(full);
    this.hp.dataset["level"] = f > 0.5 ? "good" : f > 0.25 ? "mid" : "low";
    this.hpText.textContent = `HP ${self.hp}/${full}`;
    this.hpFill.style.width = `${Math.round(f * 100)}%`;
  }

  /** faced returns the square the own body faces, as predicted. */
  private faced(s: Session): { x: number; y: number } | null {
    const p = s.predicted;
    if (p === null) return null;
    const [dx, dy] = DIR_DELTA[p.facing & 7] as readonly [number, number];
    return { x: p.x + dx, y: p.y + dy };
  }

  /** showFacing says what the player faces, and what acting would do to it. */
  private showFacing(s: Session, sq: { x: number; y: number } | null): void {
    let text = "";
    const touch = this.actBtn.classList.contains("touch");
    const key = touch ? "Act" : "Space";
    if (sq !== null && s.ready) {
      const v = s.view;
      const e = v.entityAt(sq.x, sq.y, s.entity);
      const o = objectOn(v, sq.x, sq.y);
      const build = this.builder.facing(s, sq.x, sq.y, touch);
      if (e !== undefined) {
        const what = describeEntity({
          ...e,
          name: v.players.get(e.id),
          creature: v.creatureKind(e.look)?.name,
          fullHp: v.fullHp(e),
          self: false,
        });
        const attackable = e.kind === EntityKind.Creature || this.input.pvp(s);
        text = `You face ${what}${attackable ? `: ${key} attacks` : ""}.`;
      } else if (o !== undefined) {
        const verbs = [this.verb(s, o.kind, o.state, o.item, key), build].filter((w) => w !== "");
        text = `You face ${describeObject(o, v.itemKind(o.item), (c) => v.itemKind(c))}${verbs.length > 0 ? `: ${verbs.join(", ")}` : ""}.`;
      } else if (build !== "") {
        text = `${build} here.`;
      }
    }
    if (this.facingEl.textContent !== text) {
      this.facingEl.textContent = text;
      this.facingEl.title = text; // whole, where the line cuts it
    }
  }

  /** verb says what the act key does to a static object of kind, in state, of item kind item (0: the map's own); "" for nothing. */
  private verb(s: Session, kind: number, state: number, item: number, key: string): string {
    switch (kind) {
      case ObjectKind.Door:
        return state === DoorState.Open ? `${key} closes it` : `${key} opens it`;
      case ObjectKind.Tree:
      case ObjectKind.Rock:
        return this.builder.may(s) ? `${key} gathers from it` : "";
      case ObjectKind.Item: {
        const kind = s.view.itemKind(item);
        if ((kind?.container ?? 0) === 0) return "";
        if (((kind?.flags ?? 0) & ItemFlag.Stall) !== 0) return `${key} opens it to see what it sells`;
        return kind?.station ? `${key} opens it to craft` : `${key} opens it`;
      }
      default:
        return "";
    }
  }

  /** showTooltip says what is under the pointer, beside it, kept inside the map. */
  private showTooltip(s: Session): void {
    const p = this.pointer;
    const text = p === null || !s.ready ? "" : this.renderer.describeAt(s.view, p.x, p.y);
    if (p === null || text === "") {
      this.tooltip.hidden = true;
      return;
    }
    if (this.tooltip.textContent !== text) this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    const r = this.canvas.getBoundingClientRect();
    const w = this.tooltip.offsetWidth;
    const h = this.tooltip.offsetHeight;
    let left = p.x - r.left + 14;
    let top = p.y - r.top + 14;
    if (left + w > r.width - 4) left = Math.max(4, p.x - r.left - 14 - w);
    if (top + h > r.height - 4) top = Math.max(4, p.y - r.top - 14 - h);
    this.tooltip.style.left = `${Math.round(left)}px`;
    this.tooltip.style.top = `${Math.round(top)}px`;
  }

  /**
   * watchWalk tells a walk that stopped short: the server ends a move-to
   * whose way is shut without a word (a closed door, bodies in the way),
   * so a body that has not moved for a while, short of its target, is
   * one.
   */
  private watchWalk(s: Session, now: number): void {
    const t = this.target;
    const p = s.confirmed;
    if (t === null || p === null || !s.ready) {
      this.walk = null;
      return;
    }
    if (p.x === t.x && p.y === t.y) {
      this.target = null;
      this.walk = null;
      return;
    }
    if (this.walk === null || this.walk.x !== p.x || this.walk.y !== p.y) {
      this.walk = { x: p.x, y: p.y, since: now };
      return;
    }
    if (now - this.walk.since < STUCK_MS || s.pending > 0) return;
    this.target = null;
    this.walk = null;
    const v = s.view;
    let door = false;
    for (const [dx, dy] of DIR_DELTA) {
      const o = objectOn(v, p.x + dx, p.y + dy);
      if (o?.kind === ObjectKind.Door && o.state === DoorState.Closed) door = true;
    }
    this.toast(door ? "A closed door is in the way: open it first." : "You cannot get there from here: the way is shut.");
  }

  private frame(now: number): void {
    const s = this.session;
    if (s === null) return;
    const dt = this.lastFrame === 0 ? 0 : now - this.lastFrame;
    this.lastFrame = now;
    this.input.tick(now);
    if (!this.banner.hidden && this.banner.dataset["kind"] === "warn") {
      const text = this.closingAt !== null && s.ready ? this.closingText() : !s.ready && this.warn !== null ? `${this.warn}. ${this.countdown(s)}` : null;
      if (text !== null && this.bannerText.textContent !== text) this.bannerText.textContent = text;
    }
    const p = s.predicted;
    if (p === null) {
      this.drawn = null;
    } else if (this.drawn === null || Math.max(Math.abs(this.drawn.x - p.x), Math.abs(this.drawn.y - p.y)) > 3) {
      this.drawn = { x: p.x, y: p.y };
    } else {
      // Ease towards the predicted square, a little faster than the
      // Area's pace so the body never lags a step behind.
      const step = (dt * 1.4) / (s.view.info?.stepMs ?? 200);
      const dx = p.x - this.drawn.x;
      const dy = p.y - this.drawn.y;
      const d = Math.hypot(dx, dy);
      this.drawn = d <= step ? { x: p.x, y: p.y } : { x: this.drawn.x + (dx / d) * step, y: this.drawn.y + (dy / d) * step };
    }
    this.watchWalk(s, now);
    const faced = s.ready ? this.faced(s) : null;
    this.renderer.draw({ session: s, now, centre: this.drawn, faced, target: this.target });
    this.builder.showReady(s);
    this.showFacing(s, faced);
    this.showTooltip(s);
  }
}
