//go:build leytest

package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/web/engine/enginetest"
	"github.com/leyworks/ley/web/internal/chrome"
)

// divergencePage loads Go's wasm_exec.js and runs run.js.
const divergencePage = `<!doctype html><meta charset="utf-8"><title>ley divergence</title>` +
	`<script src="wasm_exec.js"></script><script src="run.js"></script>`

// divergenceRun starts the engine as web/dist ships it, timing its load,
// then runs every script of scripts.json through leyEngine.sim: players
// join, each tick's intents are posted (the n-th of a script with seq
// n+1), the tick runs, and its bodies and answers are kept; the time the
// ticks took is kept too. It leaves all of it on window.__div.
const divergenceRun = `
window.__div = { done: false };
(async () => {
  try {
    const t0 = performance.now();
    const ready = new Promise((r) => { globalThis.leyEngineReady = r; });
    const go = new Go();
    const { instance } = await WebAssembly.instantiateStreaming(fetch("engine.wasm"), go.importObject);
    go.run(instance);
    const eng = await ready;
    const loadMs = performance.now() - t0;
    const scripts = await (await fetch("scripts.json")).json();
    const runs = [];
    for (const s of scripts) {
      const sim = eng.sim(s.template, s.seed);
      if (sim instanceof Error) throw sim;
      const ids = [];
      for (let p = 0; p < s.players; p++) ids.push(sim.join(p + 1));
      const ticks = [];
      let k = 0, stepMs = 0;
      for (let t = 0; t < s.ticks; t++) {
        for (; k < s.intents.length && s.intents[k][0] === t; k++) {
          const [, p, kind, dir, x, y] = s.intents[k];
          sim.intent(ids[p], kind, dir, x, y, k + 1);
        }
        const a = performance.now();
        sim.step();
        stepMs += performance.now() - a;
        ticks.push({ bodies: Array.from(sim.bodies()), answers: Array.from(sim.answers()) });
      }
      runs.push({ ticks, stepMs });
    }
    window.__div = { done: true, loadMs, runs };
  } catch (e) {
    window.__div = { done: true, error: String(e) + "\n" + (e.stack || "") };
  }
})();
`

// TestDivergence drives the same seeded intents (thousands: steps,
// actions on doors and creatures, move-tos, stops, by several players
// among creatures) through the server's Area here and through the
// browser's engine, the WebAssembly that web/dist ships, in Chromium, and
// compares them tick by tick: every body's square, facing and health,
// and every answer. They must agree on every tick. Then the server's
// rules are mutated (diagonal steps may cut walls' corners) and the same
// comparison must find them apart.
func TestDivergence(t *testing.T) {
	lib := content.Default()
	var scripts []enginetest.Script
	total := 0
	for _, sc := range []struct {
		template string
		seed     uint64
		players  int
		ticks    int
	}{{"village", 1, 8, 2500}, {"arena", 2, 6, 1500}, {"home", 3, 2, 1000}} {
		s, err := enginetest.NewScript(lib, sc.template, sc.seed, sc.players, sc.ticks, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
		total += len(s.Intents)
	}
	name, wasm, gzipped := distEngine(t)
	body, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	serve := func(path, ctype string, b []byte) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write(b)
		})
	}
	serve("/{$}", "text/html; charset=utf-8", []byte(divergencePage))
	serve("/wasm_exec.js", "text/javascript", wasmExec(t))
	serve("/run.js", "text/javascript", []byte(divergenceRun))
	serve("/engine.wasm", "application/wasm", wasm)
	serve("/scripts.json", "application/json", body)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tab := chrome.Start(t).Tab(t)
	ctx, cancel := context.WithTimeout(tab.Ctx, 5*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.__div.done`)); err != nil {
		t.Fatalf("the browser's runs did not finish: %v\nconsole: %q\nexceptions: %q", err, tab.Console(), tab.Exceptions())
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.__div)`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Error  string  `json:"error"`
		LoadMS float64 `json:"loadMs"`
		Runs   []struct {
			Ticks  []enginetest.Tick `json:"ticks"`
			StepMS float64           `json:"stepMs"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != "" {
		t.Fatalf("the browser: %s\nconsole: %q\nexceptions: %q", got.Error, tab.Console(), tab.Exceptions())
	}
	if len(got.Runs) != len(scripts) {
		t.Fatalf("%d runs from the browser; %d scripts", len(got.Runs), len(scripts))
	}
	t.Logf("engine %s: %d bytes, %d gzipped; loaded and started in %.0f ms", name, len(wasm), gzipped, got.LoadMS)
	ticks := 0
	for i, s := range scripts {
		here, err := enginetest.Run(lib, s)
		if err != nil {
			t.Fatal(err)
		}
		if n, first := enginetest.Compare(here, got.Runs[i].Ticks); n != 0 {
			t.Errorf("%s: the browser's engine and the server's differ in %d of %d ticks; first %s", s.Template, n, s.Ticks, first)
		}
		ticks += s.Ticks
		t.Logf("%s: %d ticks, %d intents, %d players: 0 mismatches; a tick in the browser %.1f µs", s.Template, s.Ticks, len(s.Intents), s.Players,
			got.Runs[i].StepMS*1000/float64(s.Ticks))
	}
	t.Logf("%d intents over %d ticks compared", total, ticks)
	if total < 3000 {
		t.Fatalf("only %d intents: want thousands", total)
	}

	// The mutation check: the server's rules changed, the browser's not.
	ecs.SetCornersCut(true)
	defer ecs.SetCornersCut(false)
	here, err := enginetest.Run(lib, scripts[0])
	if err != nil {
		t.Fatal(err)
	}
	n, first := enginetest.Compare(here, got.Runs[0].Ticks)
	if n == 0 {
		t.Fatal("with the corner rule removed on the server's side, the runs still agree: the comparison finds nothing")
	}
	t.Logf("mutated (corners may be cut): %d ticks differ; first %s", n, first)
}
