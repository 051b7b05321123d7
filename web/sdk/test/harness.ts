/**
 * A small test harness for the SDK's tests, which run in a browser: test
 * registers a case, the assertions throw on a mismatch, and run reports
 * every case to the page (window.__leyTests) for the Go test that drives
 * the browser. measure registers a measurement: it runs only when asked
 * for, and its figures go back to the Go test, which logs them.
 *
 * @module
 */

/** The fixtures the Go test serves: golden files, and what the Go view says of them. */
export interface Fixtures {
  /** The golden messages of net/wire/testdata, by file name, as hex. */
  golden: Record<string, string>;
  /** More messages (the new fields and kinds), as net/wire encodes them, by name, as hex. */
  more: Record<string, string>;
  /** The worked sequence of systems/interest/testdata/sequence applied to net/view. */
  sequence: {
    areaInfo: string;
    frames: {
      name: string;
      hex: string;
      entities: { id: number; kind: number; look: number; x: number; y: number; facing: number; hp: number; flags: number }[];
      held: number[];
    }[];
  };
}

/** What a measurement found, by what was measured. */
export type Figures = Record<string, number>;

/** The result of one case. */
export interface Result {
  name: string;
  ok: boolean;
  error: string;
  ms: number;
  /** A measurement's figures (none for a test). */
  figures: Figures;
}

type Case = { name: string; measure: boolean; fn: (fx: Fixtures) => void | Figures | Promise<void | Figures> };

const cases: Case[] = [];

function register(c: Case): void {
  if (cases.some((o) => o.name === c.name)) throw new Error(`case ${c.name} registered twice`);
  cases.push(c);
}

/** test registers a case; fn gets the fixtures. */
export function test(name: string, fn: (fx: Fixtures) => void | Promise<void>): void {
  register({ name, measure: false, fn });
}

/**
 * measure registers a measurement: fn returns its figures. Measurements
 * run only when run is asked for them, and never with the tests.
 */
export function measure(name: string, fn: (fx: Fixtures) => Figures | Promise<Figures>): void {
  register({ name, measure: true, fn });
}

/** AssertionError is a failed assertion. */
export class AssertionError extends Error {
  override readonly name = "AssertionError";
}

/** show renders a value for a message: bigints with n, bytes as hex. */
export function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === "bigint") return `${x}n`;
    if (x instanceof Uint8Array) return `bytes(${hex(x)})`;
    if (x instanceof Map) return { map: [...(x as Map<unknown, unknown>).entries()] };
    if (x instanceof Set) return { set: [...(x as Set<unknown>).values()] };
    return x;
  });
}

/** hex renders bytes as lowercase hex. */
export function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** unhex parses hex into bytes. */
export function unhex(s: string): Uint8Array {
  if (s.length % 2 !== 0) throw new Error(`odd hex ${s}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
    if (Array.isArray(a) || Array.isArray(b) || a instanceof Uint8Array || b instanceof Uint8Array) return false;
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return deepEqual(ka, kb) && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/** eq asserts that got deep-equals want. */
export function eq(got: unknown, want: unknown, what: string): void {
  if (!deepEqual(got, want)) throw new AssertionError(`${what}: got ${show(got)}; want ${show(want)}`);
}

/** ok asserts cond. */
export function ok(cond: boolean, what: string): void {
  if (!cond) throw new AssertionError(what);
}

/** throws asserts that fn throws an instance of cls, and returns it. */
export function throws<E extends Error>(fn: () => unknown, cls: abstract new (...args: never[]) => E, what: string): E {
  try {
    fn();
  } catch (e) {
    if (e instanceof cls) return e;
    throw new AssertionError(`${what}: threw ${String(e)}; want a ${cls.name}`);
  }
  throw new AssertionError(`${what}: did not throw; want a ${cls.name}`);
}

/**
 * run runs every test (or, with measurements, every measurement) whose
 * name only matches, in order, and returns the results.
 */
export async function run(fx: Fixtures, only: RegExp | undefined, measurements: boolean): Promise<Result[]> {
  const out: Result[] = [];
  for (const c of cases) {
    if (c.measure !== measurements || (only !== undefined && !only.test(c.name))) continue;
    const t0 = performance.now();
    try {
      const figures = (await c.fn(fx)) ?? {};
      out.push({ name: c.name, ok: true, error: "", ms: performance.now() - t0, figures });
    } catch (e) {
      const msg = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
      out.push({ name: c.name, ok: false, error: msg, ms: performance.now() - t0, figures: {} });
    }
  }
  return out;
}
