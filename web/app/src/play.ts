/**
 * The play screen: one Session, drawn every animation frame, with the
 * connection's state and round-trip time, the player's health, the
 * players here, what the player faces and what the pointer is over, and
 * clear words for what ends or interrupts play.
 */

import {
  Code,
  DIR_DELTA,
  type Director,
  DoorState,
  EntityFlag,
  EntityKind,
  type EndReason,
  IntentKind,
  ObjectKind,
  Session,
  codeMeaning,
  codeName,
} from "@leyworks/ley-sdk";

import { byId, li } from "./dom.js";
import { sessionStarted, socketUrl } from "./hooks.js";
import { HINT, Input } from "./input.js";
import { Renderer, describeEntity, describeObject } from "./render.js";

/** The words for each way a session ends. */
const ENDINGS: Record<EndReason, string> = {
  left: "You left the Area.",
  taken_over: "This session was taken over: you logged in and joined from another tab or device.",
  realm_closed: "The realm is closed to players right now.",
  realm_full: "The realm is full. Try again in a little while.",
  area_full: "This Area is full. Try again in a little while.",
  no_such_area: "This Area does not exist, or you are not one of its members.",
  unauthorized: "Your login ended (a login elsewhere ends this one). Log in again.",
  version_unsupported: "This realm speaks another version of the protocol than this page.",
  gave_up: "The realm cannot be reached right now.",
};

/** Refusals worth telling the player about, by code. */
const TOLD = new Set<number>([Code.NO_PATH, Code.OUT_OF_BOUNDS, Code.NOT_ALLOWED, Code.MALFORMED, Code.PORTAL_IN_PROGRESS]);

/** How long the flash over the map stays, in ms. */
const FLASH_MS = 4000;

/** Play runs the play screen. */
export class Play {
  private session: Session | null = null;
  private readonly renderer: Renderer;
  private readonly input: Input;
  private names = new Map<number, string>();
  private target: { x: number; y: number } | null = null;
  private drawn: { x: number; y: number } | null = null;
  private lastFrame = 0;
  private closingAt: number | null = null;
  private raf = 0;
  private playersKey = "";
  private toastTimer = 0;
  private flashTimer = 0;
  private pointer: { x: number; y: number } | null = null;
  private hpKey = "";

  private readonly canvas = byId("map", HTMLCanvasElement);
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
  private readonly hp = byId("hp", HTMLElement);
  private readonly hpText = byId("hp-text", HTMLElement);
  private readonly hpFill = byId("hp-fill", HTMLElement);
  private readonly facingEl = byId("facing", HTMLElement);
  private readonly tooltip = byId("tooltip", HTMLElement);
  private readonly flashEl = byId("flash", HTMLElement);

  constructor(
    private readonly director: Director,
    private readonly onLeave: () => void,
    private readonly onLoggedOut: () => void,
  ) {
    this.renderer = new Renderer(this.canvas);
    this.input = new Input(
      () => this.session,
      (x, y) => {
        this.target = { x, y };
        void this.session?.moveTo(x, y);
      },
      () => {
        this.target = null;
        void this.session?.stop();
      },
      (text) => this.toast(text),
    );
    byId("hint", HTMLElement).textContent = HINT;
    window.addEventListener("keydown", (ev) => {
      if (this.session !== null && this.input.keydown(ev)) ev.preventDefault();
    });
    window.addEventListener("keyup", (ev) => this.input.keyup(ev));
    window.addEventListener("blur", () => this.input.blur());
    this.canvas.addEventListener("click", (ev) => {
      const sq = this.renderer.squareAt(ev.clientX, ev.clientY);
      this.input.click(sq.x, sq.y, ev.shiftKey);
      this.canvas.focus();
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

  /** start plays Area area; names are the Areas' names, for the HUD. */
  start(area: number, names: Map<number, string>): void {
    this.stop();
    this.names = names;
    this.hideBanner();
    this.closingAt = null;
    this.target = null;
    this.drawn = null;
    this.playersKey = "";
    this.hpKey = "";
    this.hideFlash();
    // Nothing of the last session's HUD may pass for this one's.
    this.pos.textContent = "";
    delete this.pos.dataset["x"];
    delete this.pos.dataset["y"];
    this.hp.hidden = true;
    this.players.replaceChildren();
    this.facingEl.textContent = "";
    const s = new Session({ director: this.director, area, socket: (url) => new WebSocket(socketUrl(url)) });
    this.session = s;
    this.wire(s);
    sessionStarted(s);
    this.showArea(area);
    s.start();
    this.canvas.focus();
    const frame = (now: number): void => {
      this.frame(now);
      this.raf = requestAnimationFrame(frame);
    };
    this.raf = requestAnimationFrame(frame);
  }

  /** stop leaves the Area (if in one) and stops drawing. */
  stop(): void {
    cancelAnimationFrame(this.raf);
    const s = this.session;
    this.session = null;
    s?.leave();
  }

  private wire(s: Session): void {
    const current = (): boolean => this.session === s;
    s.on("state", (e) => {
      if (!current()) return;
      this.conn.dataset["state"] = e.state;
      this.conn.textContent = e.state === "reconnecting" ? "reconnecting" : e.state;
      this.conn.title = e.detail;
      // A drop of a session in play; a join being retried says its own
      // words (joinRefused).
      if (e.state === "reconnecting" && (e.previous === "ready" || e.previous === "bound") && this.banner.dataset["kind"] !== "bad") {
        this.showBanner(`Connection lost: ${e.detail}.`, "warn");
      }
    });
    s.on("ready", (e) => {
      if (!current()) return;
      this.closingAt = null;
      if (this.banner.dataset["kind"] !== "bad") this.hideBanner();
      this.showArea(e.area);
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
    s.on("areaClosing", (e) => {
      if (!current()) return;
      this.closingAt = performance.now() + e.graceMs;
      this.showBanner(this.closingText(), "warn");
    });
    s.on("takenOver", () => {
      if (current()) this.showBanner(ENDINGS.taken_over, "bad", "Play here", () => this.start(s.area, this.names));
    });
    s.on("portalMoved", (e) => {
      if (!current()) return;
      this.target = null;
      this.drawn = null;
      this.toast(`Through the portal to ${this.names.get(e.to) ?? `Area ${e.to}`}.`);
    });
    s.on("portalBlocked", (e) => {
      if (current()) this.toast(`The portal did not take you through (${codeName(e.reason)}).`);
    });
    s.on("portalRejected", (e) => {
      if (current()) this.toast(`The portal refused you: ${codeMeaning(e.reason)}.`);
    });
    s.on("joinRefused", (e) => {
      if (!current()) return;
      const what = e.code === "REALM_FULL" ? "The realm is full" : e.code === "AT_CAPACITY" ? "The realm has no room right now" : e.message;
      this.showBanner(`${what}${e.willRetry ? " (trying again shortly)." : "."}`, e.willRetry ? "warn" : "bad");
    });
    s.on("intentRefused", (e) => {
      if (!current()) return;
      if (e.intent.kind === IntentKind.MoveTo) this.target = null;
      if (e.intent.kind === IntentKind.Action && e.code === Code.NOTHING_THERE) {
        this.toast("There is nothing there to act on.");
      } else if (e.intent.kind === IntentKind.Action && e.code === Code.NOT_ALLOWED) {
        this.toast("You may not attack that here.");
      } else if (TOLD.has(e.code)) {
        this.toast(`${codeMeaning(e.code)} (${e.name}).`);
      }
    });
    s.on("respawned", () => {
      if (current()) this.flash("You were killed. You are back at a spawn point with full health.");
    });
    s.on("dropped", () => {
      if (current()) this.droppedEl.textContent = `${s.dropped} bad message${s.dropped === 1 ? "" : "s"} dropped`;
    });
    s.on("ended", (e) => {
      if (!current()) return;
      this.conn.dataset["state"] = "ended";
      this.conn.textContent = "ended";
      if (e.reason === "left") return;
      if (e.reason === "unauthorized") {
        this.stop();
        this.onLoggedOut();
        return;
      }
      if (e.reason !== "taken_over") {
        const why = e.reason === "gave_up" ? ` (${e.message})` : "";
        this.showBanner(ENDINGS[e.reason] + why, "bad", "Try again", () => this.start(s.area, this.names));
      }
    });
  }

  private showArea(area: number): void {
    this.areaName.dataset["area"] = String(area);
    this.areaName.textContent = this.names.get(area) ?? `Area ${area}`;
  }

  private closingText(): string {
    const left = this.closingAt === null ? 0 : Math.max(0, Math.ceil((this.closingAt - performance.now()) / 1000));
    return `This Area is closing in ${left} s; you will be brought back when it can take you.`;
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
    this.toastTimer = window.setTimeout(() => (this.toastEl.textContent = ""), 5000);
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
        return li(text, data, r.entity === s.entity ? "self" : r.away ? "away" : "");
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

  /** showFacing says what the player faces, and what Space would do to it. */
  private showFacing(s: Session, sq: { x: number; y: number } | null): void {
    let text = "";
    if (sq !== null && s.ready) {
      const v = s.view;
      const e = v.entityAt(sq.x, sq.y, s.entity);
      const o = v.objectAt(sq.x, sq.y);
      if (e !== undefined) {
        const what = describeEntity({
          ...e,
          name: v.players.get(e.id),
          creature: v.creatureKind(e.look)?.name,
          fullHp: v.fullHp(e),
          self: false,
        });
        text = `You face ${what}${e.kind === EntityKind.Creature ? ": Space attacks" : ""}.`;
      } else if (o !== undefined) {
        const verb =
          o.kind === ObjectKind.Door ? (o.state === DoorState.Open ? ": Space closes it" : ": Space opens it") : "";
        text = `You face ${describeObject(o)}${verb}.`;
      }
    }
    if (this.facingEl.textContent !== text) this.facingEl.textContent = text;
  }

  /** showTooltip says what is under the pointer, beside it. */
  private showTooltip(s: Session): void {
    const p = this.pointer;
    const text = p === null ? "" : this.renderer.describeAt(s.view, p.x, p.y);
    if (p === null || text === "") {
      this.tooltip.hidden = true;
      return;
    }
    if (this.tooltip.textContent !== text) this.tooltip.textContent = text;
    const r = this.canvas.getBoundingClientRect();
    this.tooltip.style.left = `${Math.round(p.x - r.left + 14)}px`;
    this.tooltip.style.top = `${Math.round(p.y - r.top + 14)}px`;
    this.tooltip.hidden = false;
  }

  private frame(now: number): void {
    const s = this.session;
    if (s === null) return;
    const dt = this.lastFrame === 0 ? 0 : now - this.lastFrame;
    this.lastFrame = now;
    this.input.tick(now);
    if (this.closingAt !== null && !this.banner.hidden && this.banner.dataset["kind"] === "warn") {
      this.bannerText.textContent = this.closingText();
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
    if (this.target !== null && p !== null && p.x === this.target.x && p.y === this.target.y) this.target = null;
    const faced = s.ready ? this.faced(s) : null;
    this.renderer.draw({ session: s, now, centre: this.drawn, faced, target: this.target });
    this.showFacing(s, faced);
    this.showTooltip(s);
  }
}
