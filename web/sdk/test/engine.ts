/**
 * The engine the tests run on: web/dist's, which the Go test serves under
 * the name the test bundle was built with. main.ts loads it before any
 * case runs.
 *
 * @module
 */

import type { Engine } from "../src/index.js";

let loaded: Engine | Error = new Error("the engine was not loaded (test/main.ts loads it)");

/** setEngine keeps the loaded engine, or why it did not load. */
export function setEngine(e: Engine | Error): void {
  loaded = e;
}

/** engine returns the loaded engine; it throws why it did not load. */
export function engine(): Engine {
  if (loaded instanceof Error) throw loaded;
  return loaded;
}
