/**
 * The entry of the SDK's test bundle: it loads every test file, fetches
 * the fixtures the Go test serves, runs the cases, and leaves the results
 * on window.__leyTests for the Go test to read.
 */

import { type Fixtures, type Result, run } from "./harness.js";
import "./codec.test.js";
import "./records.test.js";
import "./view.test.js";
import "./prediction.test.js";
import "./session.test.js";
import "./spectator.test.js";

declare global {
  interface Window {
    __leyTests?: { done: boolean; results: Result[]; error: string };
  }
}

async function main(): Promise<void> {
  window.__leyTests = { done: false, results: [], error: "" };
  try {
    const fx = (await (await fetch("fixtures.json")).json()) as Fixtures;
    const only = new URLSearchParams(location.search).get("run");
    window.__leyTests.results = await run(fx, only === null ? undefined : new RegExp(only));
  } catch (e) {
    window.__leyTests.error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
  }
  window.__leyTests.done = true;
}

void main();
