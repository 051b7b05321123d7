package web_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/web"
	"github.com/leyworks/ley/web/bundle"
	"github.com/leyworks/ley/web/internal/chrome"
)

// readHex reads a golden .hex file: hex digits, whitespace ignored, '#'
// starting a comment line.
func readHex(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// entityJSON is an entity as the SDK's view shows it.
type entityJSON struct {
	ID     uint32 `json:"id"`
	Kind   uint8  `json:"kind"`
	Look   uint16 `json:"look"`
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	Facing uint8  `json:"facing"`
	HP     uint16 `json:"hp"`
	Flags  uint8  `json:"flags"`
}

type frameJSON struct {
	Name     string       `json:"name"`
	Hex      string       `json:"hex"`
	Entities []entityJSON `json:"entities"`
	Held     []uint32     `json:"held"`
}

// fixtures are what the SDK's tests check against: every golden message
// of net/wire/testdata, more messages of the fields and kinds the golden
// files leave out (encoded here by net/wire), and the worked snapshot
// sequence of systems/interest/testdata/sequence with what net/view makes of each
// frame.
type fixtures struct {
	Golden   map[string]string `json:"golden"`
	More     map[string]string `json:"more"`
	Sequence struct {
		AreaInfo string      `json:"areaInfo"`
		Frames   []frameJSON `json:"frames"`
	} `json:"sequence"`
}

func buildFixtures(t *testing.T) fixtures {
	t.Helper()
	var fx fixtures
	fx.Golden = map[string]string{}
	paths, err := filepath.Glob("../net/wire/testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("golden files: %v (%d found)", err, len(paths))
	}
	for _, p := range paths {
		fx.Golden[strings.TrimSuffix(filepath.Base(p), ".hex")] = hex.EncodeToString(readHex(t, p))
	}
	fx.More = map[string]string{}
	for name, m := range map[string]wire.Message{
		"action":        &wire.Intent{Seq: 8, Kind: wire.IntentAction, Dir: wire.DirE},
		"nothing_there": &wire.IntentResult{Seq: 8, Code: wire.CodeNothingThere},
		"craft":         &wire.Intent{Seq: 9, Kind: wire.IntentCraft, Dir: wire.DirS},
		"use":           &wire.Intent{Seq: 10, Kind: wire.IntentUse, Item: wire.ItemSlots{From: 11}},
		"no_recipe":     &wire.IntentResult{Seq: 9, Code: wire.CodeNoRecipe},
		"known":         &wire.IntentResult{Seq: 10, Code: wire.CodeKnown},
		"no_recipes":    &wire.Recipes{Known: []wire.Recipe{}},
		"two_recipes": &wire.Recipes{Known: []wire.Recipe{
			{Code: 1, Name: "planks", Station: "cauldron", Inputs: []wire.Amount{{Kind: 13, Count: 2}}, Outputs: []wire.Amount{{Kind: 15, Count: 4}}},
			{Code: 3, Name: "table", Station: "cauldron", Inputs: []wire.Amount{{Kind: 14, Count: 1}, {Kind: 15, Count: 4}}, Outputs: []wire.Amount{{Kind: 2, Count: 1}}},
		}},
		"slow_recipe": &wire.Recipes{Known: []wire.Recipe{
			{Code: 5, Name: "brick", Station: "furnace", Inputs: []wire.Amount{{Kind: 14, Count: 2}}, Outputs: []wire.Amount{{Kind: 23, Count: 1}}, Seconds: 10},
			{Code: 65535, Name: "age", Station: "s", Inputs: []wire.Amount{{Kind: 1, Count: 1}}, Outputs: []wire.Amount{{Kind: 2, Count: 1}}, Seconds: 1<<32 - 1},
		}},
		"trade_intent": &wire.Intent{Seq: 11, Kind: wire.IntentTrade, Dir: wire.DirW},
		"offer":        &wire.Intent{Seq: 12, Kind: wire.IntentOffer, Item: wire.ItemSlots{From: 3, Count: 2}},
		"offer_off":    &wire.Intent{Seq: 13, Kind: wire.IntentOffer, Item: wire.ItemSlots{From: 3}},
		"confirm":      &wire.Intent{Seq: 14, Kind: wire.IntentConfirm, Item: wire.ItemSlots{Count: 300}},
		"cancel":       &wire.Intent{Seq: 15, Kind: wire.IntentCancel},
		"price": &wire.Intent{Seq: 16, Kind: wire.IntentPrice, Dir: wire.DirN,
			Target: wire.Cell{X: 14, Y: 3}, Item: wire.ItemSlots{From: wire.ContainerSlot + 1}},
		"buy": &wire.Intent{Seq: 17, Kind: wire.IntentBuy, Dir: wire.DirN,
			Target: wire.Cell{X: 14, Y: 3}, Item: wire.ItemSlots{From: wire.ContainerSlot + 1, Count: 8}},
		"stale":        &wire.IntentResult{Seq: 17, Code: wire.CodeStale},
		"cant_pay":     &wire.IntentResult{Seq: 17, Code: wire.CodeCantPay},
		"trade_opened": &wire.Trade{ID: 7, With: 1001},
		"trade_done": &wire.Trade{ID: 7, With: 1001, Rev: 2,
			Mine:      []wire.Offered{{Slot: 19, Stack: wire.Stack{ID: 1<<40 | 5, Kind: 1, Count: 2}}},
			Theirs:    []wire.Offered{{Slot: 0, Stack: wire.Stack{ID: 9, Kind: 14, Count: 5}}, {Slot: 4, Stack: wire.Stack{ID: 10, Kind: 13, Count: 1}}},
			Confirmed: wire.TradeMine | wire.TradeTheirs, Status: wire.TradeDone},
		"trade_void": &wire.Trade{ID: 8, With: 1003, Rev: 1, Theirs: []wire.Offered{{Slot: 1, Stack: wire.Stack{ID: 11, Kind: 15, Count: 4}}},
			Status: wire.TradeVoid, Reason: wire.CodeTradeCancelled},
		"chest": &wire.Container{X: 3, Y: 4, Slots: []wire.Stack{{}, {ID: 7<<32 | 4, Kind: 13, Count: 4}}},
		"furnace_working": &wire.Container{X: 5, Y: 6, Slots: []wire.Stack{{ID: 12, Kind: 14, Count: 2}, {}},
			Ready: 86600},
		"stall_for_a_buyer": &wire.Container{X: 11, Y: 9, Slots: []wire.Stack{{ID: 7<<32 | 4, Kind: 15, Count: 8}, {}, {ID: 3, Kind: 14, Count: 3}, {}},
			Prices: []wire.Amount{{Kind: 14, Count: 3}, {}, {}, {}}},
		"ready_far": &wire.Container{X: -1, Y: 0, Slots: []wire.Stack{{}}, Ready: 1 << 40},
		"village_kinds": &wire.AreaInfo{Area: 5, Kind: "village", W: 64, H: 48, CellSize: 8, TickHz: 20, SnapshotHz: 10,
			StepMS: 200, QueueLen: 8, InterestRadius: 24, ResumeGraceMS: 30000, Rules: wire.RuleDiagonal | wire.RuleMayBuild, PlayerHP: 100,
			Items: []wire.ItemKind{
				{Code: 19, Name: "stall", Label: "Stall", Stack: 1, Slot: wire.ItemSlotOccupant, Flags: wire.ItemBlocks | wire.ItemStall, Look: 19, Container: 4},
				{Code: 20, Name: "sapling", Label: "Sapling", Stack: 10, Slot: wire.ItemSlotOccupant, Flags: wire.ItemBlocks, Look: 20, Becomes: 21, Grows: 60},
				{Code: 21, Name: "tree", Label: "Tree", Stack: 1, Slot: wire.ItemSlotOccupant, Flags: wire.ItemBlocks | wire.ItemBlocksSight, Look: 21},
				{Code: 22, Name: "furnace", Label: "Furnace", Stack: 1, Slot: wire.ItemSlotOccupant, Flags: wire.ItemBlocks, Look: 22, Container: 2, Station: "furnace"},
				{Code: 65535, Name: "slow", Label: "Slow", Stack: 1, Slot: wire.ItemSlotOccupant, Becomes: 65534, Grows: 1<<32 - 1},
			},
			Plots: []wire.Plot{{X: 22, Y: 6, W: 10, H: 5}}},
		"arena_info": &wire.AreaInfo{Area: 6, Kind: "arena", W: 96, H: 96, CellSize: 8, TickHz: 20, SnapshotHz: 10,
			StepMS: 166, QueueLen: 8, InterestRadius: 24, ResumeGraceMS: 30000,
			Rules:    wire.RuleDiagonal | wire.RulePvP | wire.RuleCreaturesHunt | wire.RuleLineOfSight,
			PlayerHP: 100, Creatures: []wire.CreatureKind{{Name: "wolf", HP: 30}, {Name: "deer", HP: 15}, {Name: "slime", HP: 20}}},
		"every_object": &wire.Static{Cell: 0, Version: 70000,
			Floor: []uint32{uint32(wire.FloorVoid), 1, uint32(wire.FloorGrass), 1, uint32(wire.FloorDirt), 1, uint32(wire.FloorStone), 1,
				uint32(wire.FloorSand), 1, uint32(wire.FloorWood), 1, uint32(wire.FloorWater), 1, uint32(wire.FloorWall), 57},
			Objects: []wire.Object{
				{ID: 1, Kind: wire.ObjectDoor, X: 0, Y: 1, State: 0},
				{ID: 2, Kind: wire.ObjectTree, X: 1, Y: 1},
				{ID: 3, Kind: wire.ObjectSign, X: 2, Y: 1, Text: "East: the arena. Wolves and slimes. Bring friends."},
				{ID: 4, Kind: wire.ObjectRock, X: 3, Y: 1},
				{ID: 5, Kind: wire.ObjectChest, X: 4, Y: 1},
				{ID: 1<<32 - 1, Kind: wire.ObjectPortal, X: 5, Y: 1},
			}},
	} {
		b, err := wire.Encode(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fx.More[name] = hex.EncodeToString(b)
	}
	// The Area of docs/protocol.md's worked sequence: 24 x 16 squares in
	// cells of 8, interest radius 4; its creatures are of look 1.
	info := &wire.AreaInfo{Area: 5, Kind: "village", W: 24, H: 16, CellSize: 8, TickHz: 20, SnapshotHz: 10,
		StepMS: 200, QueueLen: 8, InterestRadius: 4, ResumeGraceMS: 30000, Rules: wire.RuleDiagonal,
		PlayerHP: 100, Creatures: []wire.CreatureKind{{Name: "deer", HP: 15}}}
	b, err := wire.Encode(info)
	if err != nil {
		t.Fatal(err)
	}
	fx.Sequence.AreaInfo = hex.EncodeToString(b)
	v := view.New()
	if err := v.Apply(info); err != nil {
		t.Fatal(err)
	}
	frames, err := filepath.Glob("../systems/interest/testdata/sequence/*.hex")
	if err != nil || len(frames) == 0 {
		t.Fatalf("sequence files: %v (%d found)", err, len(frames))
	}
	slices.Sort(frames)
	var st wire.Stream // the frames of one connection
	for _, p := range frames {
		raw := readHex(t, p)
		m, err := st.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := v.Apply(m); err != nil {
			t.Fatalf("%s: net/view: %v", p, err)
		}
		f := frameJSON{Name: strings.TrimSuffix(filepath.Base(p), ".hex"), Hex: hex.EncodeToString(raw), Entities: []entityJSON{}, Held: []uint32{}}
		for _, e := range v.Sorted() {
			f.Entities = append(f.Entities, entityJSON{e.ID, uint8(e.Kind), e.Look, e.X, e.Y, uint8(e.Facing), e.HP, uint8(e.Flags)})
		}
		for c := range v.Held {
			f.Held = append(f.Held, c)
		}
		slices.Sort(f.Held)
		fx.Sequence.Frames = append(fx.Sequence.Frames, f)
	}
	return fx
}

// sdkResult is one case of the SDK's tests, as the page reports it.
type sdkResult struct {
	Name    string             `json:"name"`
	OK      bool               `json:"ok"`
	Error   string             `json:"error"`
	MS      float64            `json:"ms"`
	Figures map[string]float64 `json:"figures"`
}

const sdkPage = `<!doctype html><meta charset="utf-8"><title>ley SDK tests</title><script src="tests.js"></script>`

// sdkEngines returns the engines web/dist holds (engine-<hash>.wasm.gz),
// gzipped, by the name the director serves each under (without .gz).
func sdkEngines(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := fs.Glob(web.Files(), "engine-*.wasm.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("web/dist holds no engine-<hash>.wasm.gz (go generate ./web)")
	}
	out := map[string][]byte{}
	for _, n := range names {
		gz, err := fs.ReadFile(web.Files(), n)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(n, ".gz")] = gz
	}
	return out
}

// runSDK bundles the SDK's tests (web/sdk/test) with esbuild and runs
// them in headless Chromium, on a page served with the fixtures and the
// engine as web/dist ships it (LEY_ENGINE, which the bundle is built
// with, names it), and returns what the page reports. query selects the
// cases (run: a pattern of their names; measure: the measurements, which
// run only then). The page is cross-origin isolated, for the finer clock
// a measurement needs.
func runSDK(t *testing.T, query string) []sdkResult {
	t.Helper()
	script, err := bundle.Tests(".")
	if err != nil {
		t.Fatal(err)
	}
	fx, err := json.Marshal(buildFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	serve := func(path, ctype string, body []byte, header map[string]string) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
			w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
			for k, v := range header {
				w.Header().Set(k, v)
			}
			_, _ = w.Write(body)
		})
	}
	serve("/{$}", "text/html; charset=utf-8", []byte(sdkPage), nil)
	serve("/tests.js", "text/javascript", script, nil)
	serve("/fixtures.json", "application/json", fx, nil)
	engines := sdkEngines(t)
	for name, gz := range engines {
		serve("/"+name, "application/wasm", gz, map[string]string{"Content-Encoding": "gzip"})
	}
	// Another engine than web/dist's: web/dist is stale.
	var missing sync.Map
	mux.HandleFunc("GET /{name}", func(w http.ResponseWriter, r *http.Request) {
		if name := r.PathValue("name"); strings.HasPrefix(name, "engine-") {
			missing.Store(name, true)
		}
		http.NotFound(w, r)
	})
	defer func() {
		for name := range missing.Range {
			t.Errorf("the tests load the engine %s; web/dist holds %v (run go generate ./web)", name, slices.Sorted(maps.Keys(engines)))
		}
	}()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tab := chrome.Start(t).Tab(t)
	ctx, cancel := context.WithTimeout(tab.Ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+query)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.__leyTests !== undefined && window.__leyTests.done`)); err != nil {
		t.Fatalf("the tests did not finish: %v\nconsole: %q\nexceptions: %q", err, tab.Console(), tab.Exceptions())
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.__leyTests)`))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []sdkResult `json:"results"`
		Error   string      `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("the results: %v", err)
	}
	if res.Error != "" {
		t.Fatalf("the test page failed: %s", res.Error)
	}
	if ex := tab.Exceptions(); len(ex) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", ex)
	}
	return res.Results
}

// TestSDK runs the SDK's tests (web/sdk/test) in headless Chromium: the
// codec against every golden message of net/wire/testdata, the view
// against net/view on the worked sequence of
// systems/interest/testdata/sequence, prediction and reconciliation on
// the engine (the server's own rules, as web/dist ships them) with
// scripted snapshots, and the session against a scripted server. Each
// case is a subtest.
func TestSDK(t *testing.T) {
	results := runSDK(t, "")
	if len(results) < 40 {
		t.Errorf("%d cases ran; the SDK has more (did a test file drop out of test/main.ts?)", len(results))
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			if !r.OK {
				t.Error(r.Error)
			}
		})
	}
}

// TestSDKPredictionCost measures, in Chromium, what one prediction costs
// the engine (EngineReplica.predict) with 1, 4 and 8 pending intents in a
// 64 x 64 Area among about 50 other bodies, and logs the figures
// (bench/RESULTS.md keeps them). It asserts nothing of them: it fails
// only when the measurement cannot run.
func TestSDKPredictionCost(t *testing.T) {
	results := runSDK(t, "?measure=1&run="+url.QueryEscape("^prediction cost"))
	if len(results) == 0 {
		t.Fatal("no measurement ran")
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("%s: %s", r.Name, r.Error)
			continue
		}
		t.Log(r.Name)
		for _, k := range slices.Sorted(maps.Keys(r.Figures)) {
			t.Logf("  %s: %.1f", k, r.Figures[k])
		}
	}
}

// TestDistIsCurrent: web/dist, which the director embeds, is exactly what
// the sources bundle into (run go generate ./web after changing them).
func TestDistIsCurrent(t *testing.T) {
	if err := bundle.Check("."); err != nil {
		t.Fatal(err)
	}
}

// TestVendoredCBOR: web/third_party/cbor-x is the version
// web/sdk/package-lock.json pins, with every file the bundle uses.
func TestVendoredCBOR(t *testing.T) {
	if err := bundle.CheckVendor("."); err != nil {
		t.Fatal(err)
	}
}
