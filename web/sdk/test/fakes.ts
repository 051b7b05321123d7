/**
 * Stand-ins for a session's world in tests: a clock whose time moves only
 * when told, a socket the test plays the server on, and a director
 * answering from a script.
 *
 * @module
 */

import {
  type Clock,
  Director,
  type GameSocket,
  type Logger,
  type Message,
  decodeClientMessage,
  encodeMessage,
} from "../src/index.js";

/** FakeClock: time moves only by advance, which runs the timers due on the way. */
export class FakeClock implements Clock {
  t = 1000;
  private timers: { at: number; id: number; fn: () => void; ms: number }[] = [];
  private nextId = 1;
  /** delays records every timer's delay, in the order they were set. */
  readonly delays: number[] = [];

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, id, fn, ms });
    this.delays.push(ms);
    return id;
  }

  clearTimeout(h: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== h);
  }

  /** pending is the number of timers not run yet. */
  get pending(): number {
    return this.timers.length;
  }

  /** advance moves time ms forward, running each timer due on the way at its time. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
}

/** FakeSocket: the session's socket, whose server side the test plays. */
export class FakeSocket implements GameSocket {
  binaryType: BinaryType = "blob";
  onopen: GameSocket["onopen"] = null;
  onmessage: GameSocket["onmessage"] = null;
  onclose: GameSocket["onclose"] = null;
  onerror: GameSocket["onerror"] = null;
  /** What the session sent, decoded. */
  readonly sent: Message[] = [];
  /** The session's close, if it closed the socket. */
  closed: { code: number | undefined; reason: string | undefined } | null = null;

  constructor(readonly url: string) {}

  private get self(): WebSocket {
    return this as unknown as WebSocket;
  }

  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
    if (!(data instanceof Uint8Array)) throw new Error("the session sends bytes");
    this.sent.push(decodeClientMessage(data));
  }

  /** close closes it from the session's side; the close event follows, as a browser's does. */
  close(code?: number, reason?: string): void {
    if (this.closed !== null) return;
    this.closed = { code, reason };
    queueMicrotask(() => this.onclose?.call(this.self, new CloseEvent("close", { code: code ?? 1005, reason: reason ?? "", wasClean: true })));
  }

  /** open: the connection is up. */
  open(): void {
    this.onopen?.call(this.self, new Event("open"));
  }

  /** deliver sends m as the server would. */
  deliver(m: Message): void {
    this.deliverRaw(encodeMessage(m));
  }

  /** deliverRaw sends bytes (or a text frame) as the server would. */
  deliverRaw(data: Uint8Array | string): void {
    const payload = typeof data === "string" ? data : data.slice().buffer;
    this.onmessage?.call(this.self, new MessageEvent("message", { data: payload }));
  }

  /** drop: the connection drops without a close frame (1006). */
  drop(code = 1006): void {
    this.closed = { code, reason: "" };
    this.onclose?.call(this.self, new CloseEvent("close", { code, reason: "", wasClean: false }));
  }
}

/** A scripted answer of the fake director. */
export type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * FakeDirector answers the director's API from a script: joins get a new
 * grant and join id each (or the answers queued in joinAnswers), and me
 * says where the character is.
 */
export class FakeDirector {
  readonly joins: number[] = [];
  /** The Areas spectator grants were asked for, in order. */
  readonly spectates: number[] = [];
  meCalls = 0;
  characterArea: number | null = null;
  /** Answers for the next joins, used before the default one. */
  readonly joinAnswers: Answer[] = [];
  /** While set, join answers wait until release is called. */
  hold = false;
  /** While set, no request gets an answer: fetch fails as a browser's does with the network down. */
  unreachable = false;
  private held: (() => void)[] = [];
  private nextJoin = 1n << 60n;

  /** lastJoinId is the join id of the last default join answer. */
  get lastJoinId(): bigint {
    return this.nextJoin - 1n;
  }

  /** release lets the held join answers go. */
  release(): void {
    for (const r of this.held.splice(0)) r();
  }

  /** client returns a Director that asks this fake. */
  client(): Director {
    return new Director("http://director.test", { token: "t", fetch: (input, init) => this.fetch(input, init) });
  }

  private async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const url = new URL(String(input));
    const method = init?.method ?? "GET";
    if (this.unreachable) throw new TypeError("Failed to fetch");
    const join = /^\/v1\/areas\/(\d+)\/join$/.exec(url.pathname);
    if (method === "POST" && join !== null) {
      const area = Number(join[1]);
      this.joins.push(area);
      if (this.hold) await new Promise<void>((r) => this.held.push(r));
      const a = this.joinAnswers.shift() ?? {
        status: 200,
        body: { grant: `g${this.joins.length}`, ws_url: `ws://host${area}.test/ws`, join_id: (this.nextJoin++).toString(), area },
      };
      return json(a);
    }
    const spectate = /^\/v1\/admin\/areas\/(\d+)\/spectate$/.exec(url.pathname);
    if (method === "POST" && spectate !== null) {
      const area = Number(spectate[1]);
      this.spectates.push(area);
      const a = this.joinAnswers.shift() ?? {
        status: 200,
        body: { grant: `s${this.spectates.length}`, ws_url: `ws://host${area}.test/ws`, join_id: (this.nextJoin++).toString(), area },
      };
      return json(a);
    }
    if (method === "GET" && url.pathname === "/v1/me") {
      this.meCalls++;
      const body: Record<string, unknown> = { id: 1, email: "a@t", name: "a", admin: false };
      if (this.characterArea !== null) body["character"] = { area: this.characterArea, home: 5, x: 0, y: 0, placed: true };
      return json({ status: 200, body });
    }
    return json({ status: 404, body: { code: "NOT_FOUND", message: "no such endpoint" } });
  }
}

function json(a: Answer): Response {
  return new Response(JSON.stringify(a.body), { status: a.status, headers: { "Content-Type": "application/json", ...a.headers } });
}

/** settle lets pending promises and tasks run (fetch answers, socket closes). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

/** CaptureLogger keeps the lines the SDK logs. */
export class CaptureLogger implements Logger {
  readonly lines: { level: string; msg: string }[] = [];
  debug(msg: string): void {
    this.lines.push({ level: "debug", msg });
  }
  info(msg: string): void {
    this.lines.push({ level: "info", msg });
  }
  warn(msg: string): void {
    this.lines.push({ level: "warn", msg });
  }
  error(msg: string): void {
    this.lines.push({ level: "error", msg });
  }
}
