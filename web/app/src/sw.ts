/**
 * The web client's service worker: it keeps the player's page, its
 * script, style, icon and engine (web/dist, as LEY_OFFLINE_FILES lists
 * them) in a cache named by them (LEY_OFFLINE_CACHE), so that the page
 * loads, and plays offline, when the realm cannot be reached. Pages and
 * scripts come from the network first (a new bundle shows at once) and
 * from the cache when the network fails; the engine, whose name changes
 * with its contents, from the cache first. Nothing else is touched: the
 * API and the game sockets always go to the realm.
 */

declare const LEY_OFFLINE_FILES: string[];
declare const LEY_OFFLINE_CACHE: string;

/** What this script uses of a service worker's events and scope (the DOM lib has no WebWorker types). */
interface WaitEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends WaitEvent {
  readonly request: Request;
  respondWith(r: Promise<Response> | Response): void;
}
interface WorkerScope {
  addEventListener(type: "install" | "activate", fn: (e: WaitEvent) => void): void;
  addEventListener(type: "fetch", fn: (e: FetchEvent) => void): void;
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  readonly registration: { readonly scope: string };
}

const scope = self as unknown as WorkerScope;
const base = new URL(scope.registration.scope);
const kept = new Set(LEY_OFFLINE_FILES.map((f) => new URL(f, base).pathname));
const engine = LEY_OFFLINE_FILES.find((f) => f.endsWith(".wasm"));

scope.addEventListener("install", (e) => {
  e.waitUntil(
    caches
      .open(LEY_OFFLINE_CACHE)
      .then((c) => c.addAll(LEY_OFFLINE_FILES.map((f) => new URL(f, base).href)))
      .then(() => scope.skipWaiting()),
  );
});

scope.addEventListener("activate", (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("ley-") && k !== LEY_OFFLINE_CACHE).map((k) => caches.delete(k))))
      .then(() => scope.clients.claim()),
  );
});

scope.addEventListener("fetch", (e) => {
  const req = e.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== base.origin || !kept.has(url.pathname)) return;
  if (engine !== undefined && url.pathname === new URL(engine, base).pathname) {
    e.respondWith(caches.match(req).then((hit) => hit ?? fetch(req)));
    return;
  }
  e.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          void caches.open(LEY_OFFLINE_CACHE).then((c) => c.put(req, copy));
        }
        return res;
      })
      .catch(() => caches.match(req).then((hit) => hit ?? Response.error())),
  );
});
