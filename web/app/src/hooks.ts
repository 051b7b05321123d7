/**
 * The test hooks of the page. A test that drives the browser defines
 * globalThis.__leyTest through DevTools before any script of the page runs
 * (chromedp's AddScriptToEvaluateOnNewDocument); nothing on the page or in
 * its URL can set it, so it cannot be used to send a player's grant
 * elsewhere.
 */

import type { Session } from "@leyworks/ley-sdk";

/** LeyTestHooks are what a test may change or watch. */
export interface LeyTestHooks {
  /** wsUrl maps the game socket's URL (to route it through a test's proxy). */
  wsUrl?: (url: string) => string;
  /** onSession is given each Session the play screen starts, so a test can read its view. */
  onSession?: (s: Session) => void;
  /** realmRefreshMs replaces the lobby's interval between two asks of the realm line (a test counts them). */
  realmRefreshMs?: number;
}

declare global {
  var __leyTest: LeyTestHooks | undefined;
}

/** socketUrl returns the URL to open for ws_url. */
export function socketUrl(url: string): string {
  const hook = globalThis.__leyTest?.wsUrl;
  return hook === undefined ? url : hook(url);
}

/** sessionStarted tells a test's hook about a new session. */
export function sessionStarted(s: Session): void {
  globalThis.__leyTest?.onSession?.(s);
}

/** realmRefreshMs returns the interval of the realm line: ms, unless a test's hook says otherwise. */
export function realmRefreshMs(ms: number): number {
  const v = globalThis.__leyTest?.realmRefreshMs;
  return v === undefined || !(v > 0) ? ms : v;
}
