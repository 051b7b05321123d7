/**
 * The one test hook of the page. A test that drives the browser defines
 * globalThis.__leyTest through DevTools before any script of the page runs
 * (chromedp's AddScriptToEvaluateOnNewDocument); nothing on the page or in
 * its URL can set it, so it cannot be used to send a player's grant
 * elsewhere.
 */

/** LeyTestHooks are what a test may change. */
export interface LeyTestHooks {
  /** wsUrl maps the game socket's URL (to route it through a test's proxy). */
  wsUrl?: (url: string) => string;
}

declare global {
  var __leyTest: LeyTestHooks | undefined;
}

/** socketUrl returns the URL to open for ws_url. */
export function socketUrl(url: string): string {
  const hook = globalThis.__leyTest?.wsUrl;
  return hook === undefined ? url : hook(url);
}
