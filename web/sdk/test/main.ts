/**
 * The entry of the SDK's test bundle: it loads every test file, fetches
 * the fixtures the Go test serves, loads the engine (web/dist's, named
 * LEY_ENGINE), runs the cases, and leaves the results on
 * window.__leyTests for the Go test to read. `?run=pattern` runs the cases
 * whose names match; `?measure` runs the measurements instead of the
 * tests.
 */

import "go:wasm_exec";
import { loadEngine } from "../src/index.js";
import { setEngine } from "./engine.js";
import { type Fixtures, type Result, run } from "./harness.js";
import "./codec.test.js";
import "./records.test.js";
import "./view.test.js";
import "./prediction.test.js";
import "./session.test.js";
import "./spectator.test.js";

/** The engine's file, as the director serves it (engine-<hash>.wasm): set by web/bundle. */
declare const LEY_ENGINE: string;

declare global {
  interface Window {
    __leyTests?: { done: boolean; results: Result[]; error: string };
  }
}

async function main(): Promise<void> {
  window.__leyTests = { done: false, results: [], error: "" };
  try {
    const fx = (await (await fetch("fixtures.json")).json()) as Fixtures;
    try {
      setEngine(await loadEngine(LEY_ENGINE));
    } catch (e) {
      setEngine(e instanceof Error ? e : new Error(String(e))); // the cases that need it fail, saying why
    }
    const params = new URLSearchParams(location.search);
    const only = params.get("run");
    window.__leyTests.results = await run(fx, only === null ? undefined : new RegExp(only), params.has("measure"));
  } catch (e) {
    window.__leyTests.error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
  }
  window.__leyTests.done = true;
}

void main();
