/**
 * The server's own rules in the browser: ley's Area simulation (the Go
 * packages ecs, systems and content) compiled to WebAssembly, which the
 * director serves as `engine-<hash>.wasm` beside the web client. Load it
 * once with {@link loadEngine}; give it to a {@link Session} (option
 * `engine`) and the session predicts its player's moves by running the
 * server's movement rules on a replica of the Area it was told of; give
 * it to an {@link OfflineRealm} and a whole Area with the `offline` rules
 * runs in the page, behind the same protocol as a host.
 *
 * Go's `wasm_exec.js` (from the Go toolchain that built the engine, at
 * `$(go env GOROOT)/lib/wasm/wasm_exec.js`) must have run first: it
 * defines `globalThis.Go`. ley's web client bundles it.
 *
 * @module
 */

/** A whole Area of a template of the engine's built-in content, run step by step. */
export interface EngineSim {
  /** join puts the player of account on the next spawn point (with the starter kit) and returns its entity id. */
  join(account: number): number;
  /** intent posts an intent of body id for the next tick (wire kinds and directions); false: the inbox is full. */
  intent(id: number, kind: number, dir: number, x: number, y: number, seq: number): boolean;
  /** step runs one tick. */
  step(): void;
  /** bodies lists every body as id, x, y, facing, hp, ordered by id. */
  bodies(): Int32Array;
  /** answers lists the last tick's answers as body, seq, wire code. */
  answers(): Int32Array;
  /** free lets the engine forget the Area (a call after it throws). */
  free(): void;
}

/** An Area as a client was told of it, on which the player's pending intents are replayed. */
export interface EngineReplica {
  /** static lays the map of one cell: a static frame, as received. */
  static(frame: Uint8Array): void;
  /**
   * predict returns [x, y, facing] where the body ends, standing at (x, y)
   * facing `facing`, once its pending intents (kind, dir pairs, wire
   * kinds) are answered by the server's rules, with other bodies on the
   * squares of `others` (x, y pairs).
   */
  predict(x: number, y: number, facing: number, others: Int32Array, pending: Int32Array): Int32Array;
  /** walkable reports whether the map, as told, lets a body stand on (x, y), bodies aside. */
  walkable(x: number, y: number): boolean;
  /** free lets the engine forget the replica (a call after it throws): a session frees the one it replaces. */
  free(): void;
}

/** A whole offline Area: a host behind the client protocol, in the page. */
export interface EngineOffline {
  /** receive takes one frame the client sent. */
  receive(frame: Uint8Array): void;
  /** step runs one tick (every 1000 / tick rate ms). */
  step(): void;
  /** take returns the frames for the client since the last take, in order. */
  take(): Uint8Array[];
  /** save returns the offline Area's state, for {@link Engine.offline} to build it again. */
  save(): Uint8Array;
  /** free lets the engine forget the Area (a call after it throws). */
  free(): void;
}

/**
 * The engine: what `engine-<hash>.wasm` sets as `globalThis.leyEngine`
 * (whose methods return an Error instead of throwing it), as
 * {@link loadEngine} gives it (whose methods throw).
 */
export interface Engine {
  /** The protocol version the engine speaks. */
  readonly protocol: number;
  /** sim builds an Area of a template of the built-in content (the server's Area, for divergence checks). */
  sim(template: string, seed: number): EngineSim;
  /** replica builds the Area an area_info frame describes, for prediction. */
  replica(areaInfo: Uint8Array): EngineReplica;
  /** offline builds the offline Area, from a save when given. */
  offline(save?: Uint8Array): EngineOffline;
}

/** The Go runtime's loader, as wasm_exec.js defines it. */
interface GoRuntime {
  importObject: WebAssembly.Imports;
  run(instance: WebAssembly.Instance): Promise<void>;
}

declare global {
  // eslint-disable-next-line no-var
  var leyEngine: Engine | undefined;
  // eslint-disable-next-line no-var
  var leyEngineReady: ((e: Engine) => void) | undefined;
}

/**
 * throwing wraps an object the engine returned so that its methods throw
 * the Error a failed call returns (a Go callback cannot throw), and wraps
 * the objects they return in turn.
 */
function throwing<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    out[k] =
      typeof v !== "function"
        ? v
        : (...args: unknown[]): unknown => {
            const r: unknown = (v as (...a: unknown[]) => unknown)(...args);
            if (r instanceof Error) throw r;
            const plain = typeof r === "object" && r !== null && Object.getPrototypeOf(r) === Object.prototype;
            return plain ? throwing(r) : r;
          };
  }
  return out as T;
}

/** The engine's exports that JavaScript calls directly (web/engine/wasm: go:wasmexport), with no syscall/js call in between. */
interface FastCalls {
  mem: WebAssembly.Memory;
  leyBuffer(n: number): number;
  leyPredict(handle: number, x: number, y: number, facing: number, others: number, pending: number): number;
}

/**
 * withFastPredict gives a replica of the engine its predict, which goes
 * through the engine's exports: its arguments written into, and its
 * result read from, the engine's memory (a call through syscall/js costs
 * tens of µs; this one a few).
 */
function withFastPredict(r: EngineReplica & { handle: number }, fast: FastCalls): EngineReplica {
  r.predict = (x, y, facing, others, pending) => {
    const n = others.length + pending.length;
    const at = fast.leyBuffer(Math.max(n, 3)) >>> 0;
    const args = new Int32Array(fast.mem.buffer, at, n);
    args.set(others, 0);
    args.set(pending, others.length);
    const rc = fast.leyPredict(r.handle, x, y, facing, others.length >> 1, pending.length >> 1);
    if (rc !== 0) throw new Error(rc === -1 ? "the engine's replica is gone (freed)" : "the engine failed this prediction");
    return new Int32Array(fast.mem.buffer, at, 3).slice(); // the memory may be reused or grow
  };
  return r;
}

let loading: Promise<Engine> | null = null;

/**
 * loadEngine fetches, compiles and starts the engine at url (once per
 * page: later calls return the same engine). It needs `globalThis.Go`
 * (wasm_exec.js).
 */
export function loadEngine(url: string): Promise<Engine> {
  if (loading !== null) return loading;
  loading = (async () => {
    const GoCtor = (globalThis as unknown as { Go?: new () => GoRuntime }).Go;
    if (GoCtor === undefined) throw new Error("the engine needs Go's wasm_exec.js loaded first (globalThis.Go is not defined)");
    const go = new GoCtor();
    const ready = new Promise<Engine>((resolve) => {
      globalThis.leyEngineReady = resolve;
    });
    const res = await fetch(url);
    if (!res.ok) throw new Error(`the engine ${url}: HTTP ${res.status}`);
    const { instance } = await WebAssembly.instantiateStreaming(res, go.importObject);
    void go.run(instance); // resolves only when the engine exits, which it never does
    const engine = throwing(await ready);
    const fast = instance.exports as unknown as FastCalls;
    const replica = engine.replica.bind(engine);
    return {
      ...engine,
      replica: (areaInfo: Uint8Array) => withFastPredict(replica(areaInfo) as EngineReplica & { handle: number }, fast),
    };
  })();
  loading.catch(() => {
    loading = null; // a failed load may be tried again
  });
  return loading;
}
