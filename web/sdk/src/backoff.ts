/**
 * Reconnect delays: exponential backoff with full jitter (each delay drawn
 * uniformly between 0 and the capped exponential), so that the players a
 * restart dropped together do not come back together.
 *
 * @module
 */

/** BackoffPolicy sets the delays between reconnect attempts. */
export interface BackoffPolicy {
  /** The cap of the first attempt's delay, in ms. */
  baseMs: number;
  /** The largest cap, in ms. */
  maxMs: number;
  /** The least delay, in ms (so a failing server is never hammered). */
  minMs: number;
}

/** DEFAULT_BACKOFF: 250 ms doubling up to 8 s, at least 50 ms. */
export const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = { baseMs: 250, maxMs: 8000, minMs: 50 };

/**
 * backoffDelay returns the delay before attempt n (1 for the first retry)
 * given a random draw r in [0, 1).
 */
export function backoffDelay(p: BackoffPolicy, n: number, r: number): number {
  const cap = Math.min(p.maxMs, p.baseMs * 2 ** Math.max(n - 1, 0));
  return Math.max(p.minMs, Math.floor(r * cap));
}
