/**
 * A spectator of an Area (docs/protocol.md, "Spectators"): the console's
 * read-only view. It asks the director for a spectator grant (admins),
 * opens the host's WebSocket, says hello, and keeps an {@link AreaView}
 * of what it is sent: the whole Area at first, or a player's point of
 * view after {@link Spectator.watch}. It has no body: it sends no
 * intents, and it does not resume (a dropped spectator asks the director
 * for a new grant: {@link Spectator.start} again).
 *
 * @module
 */

import { decodeMessage, encodeMessage } from "./codec.js";
import { codeName } from "./codes.js";
import type { Director } from "./director.js";
import { Emitter } from "./emitter.js";
import {
  PROTOCOL_VERSION,
  type ClientMessage,
  type Flow,
  type ServerMessage,
  type SnapshotBase,
  expandShortSnapshot,
} from "./protocol.js";
import type { GameSocket } from "./session.js";
import { AreaView } from "./view.js";

/** Where a spectator is. */
export type SpectatorState = "idle" | "connecting" | "watching" | "ended";

/** What a spectator tells its listeners. */
export interface SpectatorEvents {
  /** A message changed the view (a snapshot, a map, presence, area_info). */
  update: { tick: number };
  /**
   * The server said something of note: a refusal (an error with its code,
   * such as ENTITY_GONE when the player watched left), the Area closing.
   */
  notice: { code: string; detail: string };
  /** The spectator ended: why, in words, and the close code. */
  end: { reason: string; code: number };
}

/** How a spectator is made. */
export interface SpectatorOptions {
  director: Director;
  area: number;
  /** Opens the game socket; a browser WebSocket by default (tests give their own). */
  socket?: (url: string) => GameSocket;
}

/**
 * Spectator watches one Area. Its view is the Area as the host shows a
 * spectator: every body and creature of the whole Area, or those a
 * watched player sees.
 */
export class Spectator {
  /** The view of the Area as sent to the spectator. */
  readonly view = new AreaView();

  private readonly events = new Emitter<SpectatorEvents>();
  private readonly director: Director;
  private readonly area: number;
  private readonly socketFactory: (url: string) => GameSocket;
  private ws: GameSocket | null = null;
  private st: SpectatorState = "idle";
  private watched = 0;
  private field: Flow | null = null;
  /** The tick and ack_seq of the last snapshot of the connection (a short one counts from it); null before one. */
  private lastSnapshot: SnapshotBase | null = null;
  /** Rejects the start under way, if its socket is let go before the host bound it. */
  private abandon: ((e: Error) => void) | null = null;

  constructor(opts: SpectatorOptions) {
    this.director = opts.director;
    this.area = opts.area;
    this.socketFactory = opts.socket ?? ((url) => new WebSocket(url));
  }

  /** state is where the spectator is. */
  get state(): SpectatorState {
    return this.st;
  }

  /** watching is the entity it asked to watch: a player (its point of view), a creature (its flow field), or 0 (the whole Area). */
  get watching(): number {
    return this.watched;
  }

  /** flow is the flow field of the creature watched, as last sent; null when none is watched. */
  get flow(): Flow | null {
    return this.field;
  }

  /** on adds a listener; it returns a function that removes it. */
  on<K extends keyof SpectatorEvents>(name: K, fn: (p: SpectatorEvents[K]) => void): () => void {
    return this.events.on(name, fn);
  }

  /**
   * start asks the director for a spectator grant and connects; it
   * resolves once the host bound the spectator, and rejects with the
   * director's refusal (an ApiError: FORBIDDEN to a non-admin,
   * SPECTATORS_FULL, ...) or the host's (an Error naming its code).
   */
  async start(): Promise<void> {
    this.close();
    this.st = "connecting";
    this.view.reset();
    this.watched = 0;
    this.field = null;
    this.lastSnapshot = null;
    const g = await this.director.spectate(this.area);
    if (this.st !== "connecting") return; // closed meanwhile
    const ws = this.socketFactory(g.wsUrl);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      let bound = false;
      this.abandon = (e) => {
        if (!bound) reject(e);
      };
      ws.onopen = () => this.send({ type: "hello", grant: g.grant, joinId: g.joinId, versions: [PROTOCOL_VERSION] });
      ws.onmessage = (ev: MessageEvent) => {
        let m: ServerMessage;
        try {
          const data: unknown = ev.data;
          if (!(data instanceof ArrayBuffer)) throw new Error("a text frame");
          const d = decodeMessage(new Uint8Array(data));
          if (d.type === "hello" || d.type === "resume" || d.type === "intent" || d.type === "leave" || d.type === "watch") {
            // A client's message from the server: it breaks the protocol.
            throw new Error(`a client's ${d.type} from the server`);
          }
          if (d.type === "short_snapshot") {
            // A player's point of view comes as that player's frames, short ones too.
            if (this.lastSnapshot === null) throw new Error("a short snapshot with no snapshot before it on this connection");
            m = expandShortSnapshot(this.lastSnapshot, d);
          } else {
            m = d;
          }
          if (m.type === "snapshot") this.lastSnapshot = { tick: m.tick, ackSeq: m.ackSeq };
        } catch (e) {
          // The start's own reason first: failing lets the socket go, which rejects it otherwise.
          if (!bound) reject(new Error("the host's answer could not be read"));
          this.fail(`the host sent what this client cannot read: ${e instanceof Error ? e.message : String(e)}`);
          return;
        }
        if (!bound && m.type === "error") {
          reject(new Error(`${codeName(m.code)}: ${m.detail}`));
          this.fail(`the host refused the spectator (${codeName(m.code)}): ${m.detail}`);
          return;
        }
        if (!bound && m.type === "hello_ack") {
          bound = true;
          this.st = "watching";
          resolve();
          return;
        }
        this.onMessage(m);
      };
      ws.onclose = (ev: CloseEvent) => {
        this.ws = null;
        this.abandon = null;
        if (!bound) reject(new Error("the connection closed before the host bound the spectator"));
        if (this.st !== "ended") this.end(ev.reason !== "" ? ev.reason : "the connection closed", ev.code);
      };
      ws.onerror = () => {};
    });
  }

  /**
   * watch chooses what the spectator is sent: a player's entity (from
   * `view.players`), that player's point of view (its interest cells, and
   * only what it sees where the Area has line of sight); a creature's,
   * the whole Area and the flow field the creature follows
   * ({@link Spectator.flow}); 0, the whole Area. The next snapshot resets
   * the view.
   */
  watch(entity: number): void {
    if (this.st !== "watching") return;
    this.watched = entity;
    this.field = null;
    this.send({ type: "watch", entity });
  }

  /** close ends the spectator: leave, then the connection closes. */
  close(): void {
    const ws = this.ws;
    if (ws !== null && this.st === "watching") this.send({ type: "leave" });
    this.detach();
    if (this.st !== "idle" && this.st !== "ended") this.end("closed", 1000);
  }

  private onMessage(m: ServerMessage): void {
    switch (m.type) {
      case "flow":
        if (m.creature === this.watched) {
          this.field = m;
          this.events.emit("update", { tick: this.view.tick });
        }
        return;
      case "error":
        if (codeName(m.code) === "ENTITY_GONE") {
          this.watched = 0;
          this.field = null;
        }
        this.events.emit("notice", { code: codeName(m.code), detail: m.detail });
        return;
      case "area_closing":
        this.events.emit("notice", { code: codeName(m.reason), detail: "the Area is closing" });
        return;
      case "left":
        return;
      default:
        try {
          this.view.apply(m);
        } catch (e) {
          this.fail(`the host broke the protocol: ${e instanceof Error ? e.message : String(e)}`);
          return;
        }
        if (m.type === "snapshot" || m.type === "static" || m.type === "presence" || m.type === "area_info") {
          this.events.emit("update", { tick: this.view.tick });
        }
    }
  }

  private send(m: ClientMessage): void {
    try {
      this.ws?.send(encodeMessage(m));
    } catch {
      // Closing: its close event ends the spectator.
    }
  }

  private fail(reason: string): void {
    this.detach();
    this.end(reason, 1000);
  }

  private end(reason: string, code: number): void {
    this.st = "ended";
    this.events.emit("end", { reason, code });
  }

  private detach(): void {
    const abandon = this.abandon;
    this.abandon = null;
    abandon?.(new Error("the spectator was closed before the host bound it"));
    const ws = this.ws;
    this.ws = null;
    if (ws === null) return;
    ws.onopen = null;
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = null;
    try {
      ws.close(1000);
    } catch {
      // Already closing.
    }
  }
}
