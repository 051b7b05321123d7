package web_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/web/internal/chrome"
)

// What the web client draws for a placed cauldron (web/app/src/looks.ts,
// ITEM_COLORS.cauldron, #3d3f44): its pot.
const cauldronRGB = "61,63,68"

// The item kinds and recipes of content/data (items.json, recipes.json)
// the crafting test uses.
const (
	plankKind     = 15
	cauldronKind  = 17
	blueprintKind = 18 // blueprint_table: teaches "table", used up
)

// What the web client says of a mix that matches no recipe
// (web/app/src/craft.ts, NO_MIX).
const noMix = "Nothing comes of that mix."

// recipesHook watches what the page knows and shows of recipes, from
// before any script of the page runs: __leySession is the play screen's
// Session (as sessionHook has it), __leyRecipeEvents counts its recipes
// events, and __leyShown lists every recipe name the Recipes list ever
// showed, __leyLeaks every one it showed while the session did not know
// it (what the server never told the character, the page must never
// show).
const recipesHook = `globalThis.__leyRecipeEvents = 0; globalThis.__leyShown = []; globalThis.__leyLeaks = [];
globalThis.__leyTest = Object.assign(globalThis.__leyTest ?? {}, { onSession: (s) => {
	globalThis.__leySession = s;
	s.on("recipes", () => { globalThis.__leyRecipeEvents++; });
} });
document.addEventListener("DOMContentLoaded", () => {
	const list = document.getElementById("recipe-list");
	if (list === null) { globalThis.__leyLeaks.push("no #recipe-list on the page"); return; }
	const look = () => {
		const known = new Set((globalThis.__leySession?.recipes ?? []).map((r) => r.name));
		for (const li of list.querySelectorAll("li")) {
			const name = li.dataset.name ?? li.textContent;
			if (!globalThis.__leyShown.includes(name)) globalThis.__leyShown.push(name);
			if (!known.has(name)) globalThis.__leyLeaks.push(name + ": " + li.textContent);
		}
	};
	new MutationObserver(look).observe(list, { childList: true, subtree: true, characterData: true });
});`

// recipeNames is the recipes the page's Recipes list shows, by name,
// comma-separated in the order shown.
func (p *page) recipeNames() string {
	p.t.Helper()
	return p.eval(`[...document.querySelectorAll("#recipe-list li")].map((li) => li.dataset.name).join(",")`)
}

// knownNames is the recipes the page's SDK session knows, by name, in
// the order of their codes.
func (p *page) knownNames() string {
	p.t.Helper()
	return p.sdk(`s.recipes.map((r) => r.name).join(",")`)
}

// waitChest waits until the open container's panel shows its slots as
// want: "kind×count" of each slot, comma-separated.
func (p *page) waitChest(what, want string) {
	p.t.Helper()
	p.wait(what, fmt.Sprintf(`[...document.querySelectorAll("#chest-slots .slot")].map((b) => b.dataset.kind + "x" + b.dataset.count).join(",") === %q`, want), 10*time.Second)
}

// neverShown checks that the page shows no recipe its session does not
// know, and never did: the Recipes list (watched since the page loaded,
// recipesHook) and the page's words now (no line "Title: ..." of a
// recipe of names; the names themselves are item labels too: "Chair").
func (p *page) neverShown(names ...string) {
	p.t.Helper()
	if leaks := p.eval(`globalThis.__leyLeaks.join(" | ")`); leaks != "" {
		p.t.Errorf("%s: the Recipes list showed recipes the session did not know: %s", p.name, leaks)
	}
	known := "," + p.knownNames() + ","
	text := p.eval(`document.body.innerText`)
	for _, name := range names {
		if strings.Contains(known, ","+name+",") {
			p.t.Errorf("%s: the session knows %q; the check is for recipes it does not", p.name, name)
			continue
		}
		// A recipe's line, and its name where no label could spell it.
		title := strings.ToUpper(name[:1]) + strings.ReplaceAll(name[1:], "_", " ")
		if strings.Contains(text, title+": ") || strings.Contains(name, "_") && strings.Contains(text, name) {
			p.t.Errorf("%s: the page's words mention the unknown recipe %q:\n%s", p.name, name, text)
		}
		if got := p.eval(fmt.Sprintf(`String(document.querySelectorAll('#recipe-list li[data-name=%q]').length)`, name)); got != "0" {
			p.t.Errorf("%s: the Recipes list shows %q, which the session does not know", p.name, name)
		}
	}
}

// TestWebClientCraft crafts in the browser, through the web client
// against a realm. Cara's starter kit holds a cauldron, four wood and a
// table blueprint; she knows no recipe, and the page shows none. She
// places the cauldron in her home and opens it: its panel has a Craft
// button, and the Recipes panel says she knows no recipe of it yet. All
// four wood crafted are no recipe's inputs: "Nothing comes of that mix",
// and nothing changes. Two wood (the rest split off in the bar) make four
// planks in the cauldron, and the recipe "planks" shows in the list, as
// its inputs and outputs by their labels; she takes the planks out. The
// blueprint's Use button teaches "table" (the blueprint used up). Three
// planks, put in as two stacks, make a chair, and only then does the
// recipe "chair" show. Throughout, the page never shows a recipe the
// server did not tell (the chair's until made, the stone floor's ever),
// and a reload finds every recipe she learned.
func TestWebClientCraft(t *testing.T) {
	b := chrome.Start(t)
	r := startRealm(t)
	base := r.URL()
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	email := "cara-" + stamp + "@t.local"
	api := dirclient.New(base)
	if _, err := api.Register(t.Context(), email, password, "cara"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Login(t.Context(), email, password); err != nil {
		t.Fatal(err)
	}
	home, err := api.CreateArea(t.Context(), "Cara's home", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cara := &page{t: t, name: "cara", tab: b.Tab(t, recipesHook)}
	cara.logIn(base, email, password) // ends the API's session: the page's is the account's one
	cara.join(home.ID)
	run := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			cara.t = t
			f(t)
		}) {
			t.FailNow()
		}
	}

	var at [2]int // the cauldron's square
	var wood int  // the wood's slot in the bar
	run("the starter kit holds a cauldron, wood and a blueprint, and no recipe is known", func(t *testing.T) {
		cara.wait("the cauldron in the bar", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') !== null`, cauldronKind), 10*time.Second)
		wood = cara.slotOf(woodKind)
		if got := cara.slotCount(max(wood, 0)); wood < 0 || got != fmt.Sprintf("%dx4", woodKind) {
			t.Fatalf("the wood's slot %d holds %q; want 4 wood (the starter kit)", wood+1, got)
		}
		bp := cara.slotOf(blueprintKind)
		if bp < 0 {
			t.Fatalf("no blueprint in the bar: %q", cara.eval(`[...document.querySelectorAll("#inventory .slot")].map((b) => b.title).join(" | ")`))
		}
		// The bind's recipes message comes right after the inventory.
		cara.wait("the bind's recipes message", `globalThis.__leyRecipeEvents >= 1`, 10*time.Second)
		if got := cara.knownNames(); got != "" {
			t.Errorf("a new character knows the recipes %q; want none", got)
		}
		if cara.eval(`String(document.getElementById("recipes").hidden)`) != "true" || cara.recipeNames() != "" {
			t.Errorf("the Recipes panel shows (%q) while no recipe is known", cara.recipeNames())
		}
		cara.wait("the blueprint's Use button", fmt.Sprintf(`!document.getElementById("usable").hidden && document.querySelector('#usable li[data-kind="%d"][data-slot="%d"] button')?.textContent === "Use"`, blueprintKind, bp), 5*time.Second)
		if got := cara.eval(`String(document.querySelectorAll("#usable li").length)`); got != "1" {
			t.Errorf("%s items offer a Use button; want the blueprint alone", got)
		}
		cara.neverShown("planks", "chair", "table", "stone_floor")
	})

	run("the cauldron placed and opened shows its slots, a Craft button and the Recipes panel", func(t *testing.T) {
		slot := cara.slotOf(cauldronKind)
		cara.pick(slot)
		at = cara.freeNextTo()
		cara.click(at[0], at[1])
		cara.waitPlaced("the cauldron placed", at[0], at[1], strconv.Itoa(cauldronKind))
		cara.waitSlot(slot, 0, 0)
		cara.waitPixel("the cauldron drawn", at[0], at[1], cauldronRGB)
		cara.wait("facing the cauldron", `document.getElementById("facing").textContent.startsWith("You face a cauldron: Space opens it to craft")`, 5*time.Second)
		cara.click(at[0], at[1]) // a placed container next to the body: acts on it
		cara.wait("the cauldron's panel", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.getElementById("chest").dataset.station === "cauldron" && document.querySelectorAll("#chest-slots .slot").length === 4`, at[0]), 10*time.Second)
		if got := cara.eval(`document.getElementById("chest-title").textContent`); got != "A cauldron" {
			t.Errorf("the panel is titled %q; want A cauldron", got)
		}
		cara.wait("the Craft button", `!document.getElementById("chest-craft").hidden`, 5*time.Second)
		cara.wait("the Recipes panel, saying no recipe of the cauldron is known", `!document.getElementById("recipes").hidden && document.getElementById("recipes-note").textContent.startsWith("You know no recipe of a cauldron yet")`, 5*time.Second)
		if got := cara.recipeNames(); got != "" {
			t.Errorf("the Recipes list shows %q; want nothing", got)
		}
		cara.told("an empty cauldron answered in words", "The cauldron is empty", chromedp.Click(chromedp.ID("chest-craft")))
	})

	run("four wood are no recipe's inputs: nothing comes of that mix, and nothing changes", func(t *testing.T) {
		cara.pick(wood)
		cara.do(chromedp.Click(chromedp.ID("chest-put")))
		cara.waitChest("the four wood in the cauldron", fmt.Sprintf("%dx4,0x0,0x0,0x0", woodKind))
		cara.waitSlot(wood, 0, 0)
		cara.sdk(`(globalThis.__crafts = [], ["craft"].forEach((k) => { const f = s[k]; s[k] = (...a) => { const p = f.apply(s, a); p.then((o) => globalThis.__crafts.push(o.status + ":" + (o.code ?? 0))); return p; }; }), "")`)
		cara.told("the refusal in words", noMix, chromedp.Click(chromedp.ID("chest-craft")))
		if got, want := cara.eval(`globalThis.__crafts.join(" ")`), fmt.Sprintf("refused:%d", wire.CodeNoRecipe); got != want {
			t.Errorf("the craft's outcome: %q; want %q", got, want)
		}
		cara.waitChest("the four wood still in the cauldron", fmt.Sprintf("%dx4,0x0,0x0,0x0", woodKind))
		if got := cara.knownNames(); got != "" {
			t.Errorf("a refused craft taught %q", got)
		}
		cara.neverShown("planks", "chair", "table", "stone_floor")
	})

	run("two wood make four planks in the cauldron, and the recipe shows; the planks come out", func(t *testing.T) {
		// Back into the picked slot, then half of it split off in the bar:
		// two wood stay picked, and go in.
		cara.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		cara.waitSlot(wood, woodKind, 4)
		cara.waitChest("the cauldron empty", "0x0,0x0,0x0,0x0")
		cara.waitPicked("the wood still picked", wood)
		rest := cara.firstEmpty()
		cara.do(chromedp.Click(chromedp.ID("split")))
		cara.waitSlot(rest, woodKind, 2)
		cara.waitSlot(wood, woodKind, 2)
		cara.do(chromedp.Click(chromedp.ID("chest-put")))
		cara.waitChest("two wood in the cauldron", fmt.Sprintf("%dx2,0x0,0x0,0x0", woodKind))
		cara.told("the craft told in words", "Planks: Wood × 2 made Plank × 4 in the cauldron.", chromedp.Click(chromedp.ID("chest-craft")))
		cara.waitChest("four planks in the cauldron", fmt.Sprintf("%dx4,0x0,0x0,0x0", plankKind))
		if got := cara.eval(`globalThis.__crafts.join(" ")`); !strings.HasSuffix(got, " applied:0") {
			t.Errorf("the crafts' outcomes: %q; want the last applied", got)
		}
		cara.wait("the recipe in the list", `document.getElementById("recipe-list").textContent === "Planks: Wood × 2 → Plank × 4"`, 5*time.Second)
		if got := cara.recipeNames(); got != "planks" {
			t.Errorf("the Recipes list shows %q; want planks", got)
		}
		if got := cara.knownNames(); got != "planks" {
			t.Errorf("the session knows %q; want planks", got)
		}
		if got := cara.eval(`document.querySelector('#recipe-list li[data-name="planks"]').dataset.code + " " + document.querySelector('#recipe-list li[data-name="planks"]').className`); got != "1 here" {
			t.Errorf("the planks' line: code and class %q; want 1, here (a recipe of the open station)", got)
		}
		cara.neverShown("chair", "table", "stone_floor")

		// Out: into the picked slot, emptied by the put.
		cara.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		cara.waitSlot(wood, plankKind, 4)
		cara.waitChest("the cauldron empty again", "0x0,0x0,0x0,0x0")
		if got := cara.totals(); !strings.Contains(","+got+",", fmt.Sprintf(",%d:2,", woodKind)) || !strings.Contains(","+got+",", fmt.Sprintf(",%d:4,", plankKind)) {
			t.Errorf("the inventory holds %q; want 2 wood (the rest) and 4 planks", got)
		}
	})

	run("the blueprint's Use button teaches the table, and the blueprint is used up", func(t *testing.T) {
		bp := cara.slotOf(blueprintKind)
		cara.told("the recipe learned, in words", "You learned the recipe “Table: ", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#usable li[data-slot="%d"] button`, bp))))
		cara.wait("the table in the list", `[...document.querySelectorAll("#recipe-list li")].map((li) => li.dataset.name).sort().join(",") === "planks,table"`, 5*time.Second)
		// Its inputs in the order the server lists them.
		if got := cara.eval(`document.querySelector('#recipe-list li[data-name="table"]').textContent`); got != "Table: Stone × 1 + Plank × 4 → Table × 1" && got != "Table: Plank × 4 + Stone × 1 → Table × 1" {
			t.Errorf("the table's line says %q; want Table: Plank × 4 + Stone × 1 → Table × 1", got)
		}
		if got := cara.knownNames(); got != "planks,table" {
			t.Errorf("the session knows %q; want planks,table", got)
		}
		cara.waitSlot(bp, 0, 0)
		cara.wait("no Use button left", `document.getElementById("usable").hidden && document.querySelectorAll("#usable li").length === 0`, 5*time.Second)
		cara.neverShown("chair", "stone_floor")
	})

	run("three planks make a chair, and only then does its recipe show", func(t *testing.T) {
		cara.neverShown("chair", "stone_floor")
		planks := cara.slotOf(plankKind)
		if cara.picked() != planks { // the planks came out into the slot picked
			cara.pick(planks)
		}
		cara.waitPicked("the planks picked", planks)
		rest := cara.firstEmpty()
		cara.do(chromedp.Click(chromedp.ID("split")))
		cara.waitSlot(rest, plankKind, 2)
		cara.do(chromedp.Click(chromedp.ID("chest-put")))
		cara.waitChest("two planks in the cauldron", fmt.Sprintf("%dx2,0x0,0x0,0x0", plankKind))
		cara.clickSlot(rest, false) // the picked slot is empty: this picks the other two
		cara.waitPicked("the other planks picked", rest)
		one := cara.firstEmpty()
		cara.do(chromedp.Click(chromedp.ID("split")))
		cara.waitSlot(one, plankKind, 1)
		cara.waitSlot(rest, plankKind, 1)
		cara.do(chromedp.Click(chromedp.ID("chest-put")))
		cara.waitChest("three planks in the cauldron, in two stacks", fmt.Sprintf("%dx2,%dx1,0x0,0x0", plankKind, plankKind))
		cara.neverShown("chair", "stone_floor")
		cara.told("the chair made, in words", "Chair: Plank × 3 made Chair × 1 in the cauldron.", chromedp.Click(chromedp.ID("chest-craft")))
		cara.waitChest("a chair in the cauldron", fmt.Sprintf("%dx1,0x0,0x0,0x0", chairKind))
		cara.wait("the chair's recipe in the list", `[...document.querySelectorAll("#recipe-list li")].map((li) => li.dataset.name).sort().join(",") === "chair,planks,table"`, 5*time.Second)
		if got := cara.knownNames(); got != "planks,chair,table" {
			t.Errorf("the session knows %q; want planks,chair,table (by code)", got)
		}
		cara.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		cara.waitChest("the cauldron empty at the end", "0x0,0x0,0x0,0x0")
		cara.neverShown("stone_floor")
		if got := cara.eval(`globalThis.__leyShown.slice().sort().join(",")`); got != "chair,planks,table" {
			t.Errorf("the Recipes list ever showed %q; want chair,planks,table", got)
		}
		cara.noExceptions()
	})

	run("a reload finds every recipe learned", func(t *testing.T) {
		cara.do(chromedp.Reload())
		cara.wait("play after the reload", fmt.Sprintf(`!document.getElementById("play").hidden && document.getElementById("area-name").dataset.area === "%d"`, home.ID), 15*time.Second)
		cara.waitReady()
		cara.wait("the recipes of the bind in the list", `!document.getElementById("recipes").hidden && [...document.querySelectorAll("#recipe-list li")].map((li) => li.dataset.name).join(",") === "planks,chair,table"`, 10*time.Second)
		cara.waitPlaced("the cauldron where it stood", at[0], at[1], strconv.Itoa(cauldronKind))
		if got := cara.eval(`String(document.getElementById("chest-craft").hidden)`); got != "true" {
			t.Errorf("the Craft button shows with no cauldron open")
		}
		cara.neverShown("stone_floor")
		cara.noExceptions()
	})
}
