/**
 * Offline play: a whole Area with the `offline` rules, run in the page by
 * the engine ({@link Engine.offline}) behind the client protocol. An
 * {@link OfflineRealm} stands in for the director and the host: give it
 * to a {@link Session} as its `director` and its `socket`, and the
 * session, its view and everything drawn from it work as online.
 *
 * What is made offline stays offline: the save is the page's own (kept
 * where the game keeps it: ley's web client uses IndexedDB), never the
 * realm's, because nothing a client simulates can be trusted to become an
 * item of the realm (docs/offline.md).
 *
 * @module
 */

import type { JoinAnswer, Me } from "./director.js";
import type { Engine, EngineOffline } from "./engine.js";
import type { GameSocket } from "./session.js";

/** OfflineOptions configure an {@link OfflineRealm}. */
export interface OfflineOptions {
  /** A save to start from (what {@link OfflineRealm.save} or onSave gave); a fresh Area without. */
  save?: Uint8Array;
  /** Called with a save every saveEveryMs while the Area runs, and when its socket closes. */
  onSave?: (save: Uint8Array) => void;
  /** How often onSave is called while the Area runs, in ms (5000). */
  saveEveryMs?: number;
  /** The tick, in ms (50: the engine's 20 Hz). */
  tickMs?: number;
}

/** The offline Area's one Area id (its hello_ack and area_info say so too). */
export const OFFLINE_AREA = 1;

/**
 * OfflineRealm is an offline Area and the realm around it, for one
 * {@link Session}: `new Session({ director: realm, socket: realm.socket,
 * area: OFFLINE_AREA, engine, silenceMs: 0 })` (the engine also predicts,
 * as online; no network can go silent, and a page in the background ticks
 * the Area on throttled timers, so the silence watch is off).
 * The Area ticks while a socket is open.
 */
export class OfflineRealm {
  /** The engine's offline Area. */
  readonly area: EngineOffline;
  private readonly onSave: ((save: Uint8Array) => void) | undefined;
  private readonly saveEveryMs: number;
  private readonly tickMs: number;
  private joins = 0n;
  private ticker: ReturnType<typeof setInterval> | null = null;
  private saver: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(engine: Engine, opts: OfflineOptions = {}) {
    this.area = engine.offline(opts.save);
    this.onSave = opts.onSave;
    this.saveEveryMs = opts.saveEveryMs ?? 5000;
    this.tickMs = opts.tickMs ?? 50;
  }

  /** join answers a session's join: a grant to the offline Area. */
  join(): Promise<JoinAnswer> {
    this.joins++;
    return Promise.resolve({ grant: "offline", wsUrl: "offline:", joinId: this.joins, area: OFFLINE_AREA });
  }

  /** me answers a session's question: the offline player, with no character in the realm. */
  me(): Promise<Me> {
    return Promise.resolve({ id: 1, email: "", name: "you", admin: false });
  }

  /** save returns the offline Area's state now. */
  save(): Uint8Array {
    return this.area.save();
  }

  /**
   * close ends the offline Area for good: its socket, if open, closes
   * (saving it, as onSave says), and the engine forgets it. A session of
   * it that tries to connect again finds it closed.
   */
  close(): void {
    if (this.closed) return;
    this.closing?.();
    this.stop();
    this.closed = true;
    this.area.free();
  }

  private closing: (() => void) | null = null;

  /** socket opens the offline Area's socket (a {@link SessionOptions.socket}). */
  readonly socket = (_url: string): GameSocket => {
    if (this.closed) throw new Error("the offline Area is closed");
    this.closing?.();
    this.stop();
    const ws: GameSocket = {
      binaryType: "arraybuffer",
      onopen: null,
      onmessage: null,
      onclose: null,
      onerror: null,
      send: (data: string | ArrayBufferLike | Blob | ArrayBufferView) => {
        if (!(data instanceof Uint8Array)) throw new TypeError("the offline Area takes binary frames");
        this.area.receive(data);
      },
      close: () => {
        if (this.closing !== close) return;
        this.closing = null;
        this.stop();
        this.onSave?.(this.area.save());
        queueMicrotask(() => ws.onclose?.call(ws as WebSocket, new CloseEvent("close", { code: 1000, reason: "offline Area closed" })));
      },
    };
    const close = ws.close;
    this.closing = close;
    this.ticker = setInterval(() => {
      this.area.step();
      for (const f of this.area.take()) {
        const data = f.buffer.slice(f.byteOffset, f.byteOffset + f.byteLength);
        ws.onmessage?.call(ws as WebSocket, new MessageEvent("message", { data }));
      }
    }, this.tickMs);
    if (this.onSave !== undefined) {
      const onSave = this.onSave;
      this.saver = setInterval(() => onSave(this.area.save()), this.saveEveryMs);
    }
    queueMicrotask(() => ws.onopen?.call(ws as WebSocket, new Event("open")));
    return ws;
  };

  /** stop stops the Area ticking (its socket is closed). */
  stop(): void {
    if (this.ticker !== null) clearInterval(this.ticker);
    if (this.saver !== null) clearInterval(this.saver);
    this.ticker = null;
    this.saver = null;
  }
}
