/**
 * The play screen: one Session, drawn every animation frame, with the
 * connection's state and round-trip time, the players here, and clear
 * words for what ends or interrupts play.
 */

import {
  Code,
  type Director,
  EntityFlag,
  EntityKind,
  type EndReason,
  IntentKind,
  Session,
  codeMeaning,
  codeName,
} from "@leyworks/ley-sdk";

import { byId, li } from "./dom.js";
import { socketUrl } from "./hooks.js";
import { Input } from "./input.js";
import { PortalMemory } from "./portals.js";
import { Renderer } from "./render.js";

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

/** Play runs the play screen. */
export class Play {
  private session: Session | null = null;
  private readonly renderer: Renderer;
  private readonly input: Input;
  private readonly portals = new PortalMemory();
  private names = new Map<number, string>();
  private target: { x: number; y: number } | null = null;
  private drawn: { x: number; y: number } | null = null;
  private lastFrame = 0;
  private closingAt: number | null = null;
  private raf = 0;
  private playersKey = "";
  private toastTimer = 0;

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
    );
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
    const s = new Session({ director: this.director, area, socket: (url) => new WebSocket(socketUrl(url)) });
    this.session = s;
    this.wire(s);
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
      if (e.at !== null) this.portals.saw(e.from, e.at.x, e.at.y);
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
      if (e.code === Code.MALFORMED && e.intent.kind === IntentKind.Action) {
        this.toast("Actions are not part of this protocol version yet.");
      } else if (TOLD.has(e.code)) {
        this.toast(`${codeMeaning(e.code)} (${e.name}).`);
      }
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

  private toast(text: string): void {
    this.toastEl.textContent = text;
    window.clearTimeout(this.toastTimer);
    this.toastTimer = window.setTimeout(() => (this.toastEl.textContent = ""), 5000);
  }

  /** afterSnapshot updates what follows the world: position, players here, portals seen. */
  private afterSnapshot(s: Session): void {
    const v = s.view;
    const me = s.confirmed;
    if (me !== null) {
      this.pos.textContent = `(${me.x}, ${me.y})`;
      this.pos.dataset["x"] = String(me.x);
      this.pos.dataset["y"] = String(me.y);
    }
    for (const e of v.entities.values()) {
      if ((e.flags & EntityFlag.Transit) !== 0) this.portals.saw(s.area, e.x, e.y);
    }
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
    this.renderer.draw({
      session: s,
      now,
      centre: this.drawn,
      portals: this.portals.squares(s.area),
      target: this.target,
    });
  }
}
