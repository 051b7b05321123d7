/**
 * The session's sense of time, injectable so that tests can drive
 * reconnect timers and round-trip times by hand.
 *
 * @module
 */

/** An opaque timer handle. */
export type TimerHandle = unknown;

/** Clock tells the time in milliseconds and runs timers. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
}

/** realClock is performance.now and the global timers. */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof globalThis.setTimeout>),
};
