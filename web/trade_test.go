package web_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/web/internal/chrome"
)

// The item kinds of content/data/items.json the trade and stall tests
// use (chairKind, tableKind and woodKind are build_test.go's).
const (
	lampKind    = 4
	stallKind   = 19
	saplingKind = 20
)

// What the web client draws for a placed stall (web/app/src/looks.ts,
// ITEM_COLORS.stallCounter, #8f6a3e): its counter.
const stallRGB = "143,106,62"

// setValue sets the value of the form control css selects, as a player's
// choice would, and tells the page (input and change events).
func (p *page) setValue(css, value string) {
	p.t.Helper()
	got := p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (e === null) return "none"; e.value = %q;
		e.dispatchEvent(new Event("input", { bubbles: true })); e.dispatchEvent(new Event("change", { bubbles: true })); return e.value; })()`, css, value))
	if got != value {
		p.fail("%s: set to %q, reads %q", css, value, got)
	}
}

// counts reads totals ("kind:count,..."): how many items of each kind.
func counts(totals string) map[int]int {
	out := map[int]int{}
	for f := range strings.SplitSeq(totals, ",") {
		var k, n int
		if _, err := fmt.Sscanf(f, "%d:%d", &k, &n); err == nil {
			out[k] = n
		}
	}
	return out
}

// waitTotals waits until the page's SDK session holds want items of each
// kind it names (kinds it does not name may hold anything; a count of 0:
// none).
func (p *page) waitTotals(what string, want map[int]int) {
	p.t.Helper()
	var conds []string
	for k, n := range want {
		conds = append(conds, fmt.Sprintf(`(m.get(%d) ?? 0) === %d`, k, n))
	}
	js := fmt.Sprintf(`(() => { const s = globalThis.__leySession; if (s === undefined) return false; const m = new Map();
		for (const st of s.inventory) if (st.count > 0) m.set(st.kind, (m.get(st.kind) ?? 0) + st.count);
		return %s; })()`, strings.Join(conds, " && "))
	p.wait(what, js, 10*time.Second)
}

// trade is what this page's trade dialog shows: "status rev confirmed
// with | mine | theirs", each side as kind×count lines.
func (p *page) trade() string {
	p.t.Helper()
	return p.eval(`(() => { const d = document.getElementById("trade"); if (d.hidden) return "hidden";
		const side = (id) => [...document.querySelectorAll("#" + id + " li[data-kind]")].map((e) => e.dataset.kind + "x" + e.dataset.count).join(",");
		return [d.dataset.status, d.dataset.rev, d.dataset.confirmed, d.dataset.with].join(" ") + " | " + side("trade-mine") + " | " + side("trade-theirs"); })()`)
}

// waitTrade waits until the trade dialog shows want (see trade); a "*"
// for the revision matches any.
func (p *page) waitTrade(what, want string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const d = document.getElementById("trade"); if (d.hidden) return %q === "hidden";
		const side = (id) => [...document.querySelectorAll("#" + id + " li[data-kind]")].map((e) => e.dataset.kind + "x" + e.dataset.count).join(",");
		const got = [d.dataset.status, d.dataset.rev, d.dataset.confirmed, d.dataset.with].join(" ") + " | " + side("trade-mine") + " | " + side("trade-theirs");
		const want = %q.split(" ");
		const g = got.split(" ");
		return g.length === want.length && want.every((w, i) => w === "*" || w === g[i]); })()`, want, want)
	defer func() {
		if p.t.Failed() {
			p.t.Logf("%s: the trade dialog shows %q; want %q", p.name, p.trade(), want)
		}
	}()
	p.wait(what, js, 10*time.Second)
}

// offerSlot offers count items of inventory slot i through the trade
// dialog: the slot chosen, the count typed, Offer.
func (p *page) offerSlot(i, count int) {
	p.t.Helper()
	p.setValue("#trade-slot", strconv.Itoa(i))
	p.setValue("#trade-count", strconv.Itoa(count))
	p.do(chromedp.Click(chromedp.ID("trade-offer")))
}

// twoPlayers starts Chromium and a realm and signs two players up, named
// nameA and nameB (their e-mail addresses new each run), each in a
// browser tab of a context of its own: their pages, in the lobby, and the
// demo village to join. The tab of each player named in phones is a
// phone's (see playOnAPhone) from before its first page.
func twoPlayers(t *testing.T, nameA, nameB string, phones ...string) (a, b *page, village uint32) {
	t.Helper()
	br := chrome.Start(t) // first: without Chromium there is no need for a realm
	r := startRealm(t)
	base := r.URL()
	_, village, _ = demoAreas(t, base)
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	a = &page{t: t, name: nameA, tab: br.Tab(t, sessionHook)}
	b = &page{t: t, name: nameB, tab: br.Tab(t, sessionHook)}
	for _, p := range []*page{a, b} {
		if slices.Contains(phones, p.name) {
			p.playOnAPhone()
		}
		p.signUp(base, p.name+"-"+stamp+"@t.local", p.name, password)
	}
	return a, b, village
}

// runner runs the steps of a test its pages play: each step a subtest of
// t, the pages' t the subtest's while it runs; a step that fails stops
// the test.
func runner(t *testing.T, pages ...*page) (run func(name string, f func(t *testing.T))) {
	return func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			for _, p := range pages {
				p.t = t
			}
			f(t)
		}) {
			t.FailNow()
		}
	}
}

// TestWebClientTrade trades between two players in the browser, each in
// a browser context of its own, in the demo village. Ann and Bo each
// carry the starter kit (its sapling labelled as what it grows into).
// Ann places her cauldron (from the kit) on a plot of the village, puts
// two of her wood in and crafts: planks show in the cauldron's panel,
// and she takes them into her bar.
// Once Bo stands next to Ann, her page offers a "Trade with bo" button,
// in a row kept for it (her inventory bar does not move as he comes);
// she opens a trade, and both pages show the dialog, from their own
// sides (the trade turns her to bo, and the line of what she faces keeps
// its height: the dialog under it does not move). Ann offers two chairs, Bo his table: each page lists both
// offers. Ann confirms (both pages say who has), then Bo: the trade is
// done, both dialogs say so, and both inventories show the swapped items
// (Ann two chairs fewer and a second table, Bo two chairs more and no
// table). Ann opens a second trade and offers the planks she crafted,
// Bo a lamp; both confirm, and both pages show the planks moved: none
// left in Ann's bar, as many as she crafted in Bo's (and the lamp
// Ann's). Then Bo opens a trade with Ann, she offers a chair, and he
// cancels: both dialogs show it void, called off, in words, and nobody's
// items moved.
func TestWebClientTrade(t *testing.T) {
	ann, bo, village := twoPlayers(t, "ann", "bo")
	ann.join(village)
	bo.join(village)
	run := runner(t, ann, bo)

	var annKit, boKit map[int]int
	run("both carry the starter kit; a sapling says what it grows into", func(t *testing.T) {
		for _, p := range []*page{ann, bo} {
			p.wait("the chairs and the table in the bar", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') !== null && document.querySelector('#inventory .slot[data-kind="%d"]') !== null`, chairKind, tableKind), 10*time.Second)
		}
		annKit, boKit = counts(ann.totals()), counts(bo.totals())
		if annKit[chairKind] != 4 || annKit[tableKind] != 1 || boKit[chairKind] != 4 || boKit[tableKind] != 1 {
			t.Fatalf("the kits: ann %v, bo %v; want 4 chairs and a table each", annKit, boKit)
		}
		sapling := ann.slotOf(saplingKind)
		if sapling < 0 {
			t.Fatalf("no sapling in ann's bar (the starter kit has one): %q", ann.totals())
		}
		if got := ann.eval(fmt.Sprintf(`document.querySelector('#inventory .slot[data-slot="%d"]').title`, sapling)); got != fmt.Sprintf("slot %d: Sapling (grows into Tree) × 1", sapling+1) {
			t.Errorf("the sapling's slot is titled %q; want it to say it grows into a tree", got)
		}
	})

	var crafted int // how many planks ann's two wood made
	run("ann places her cauldron on a plot, crafts planks of two wood and takes them", func(t *testing.T) {
		if annKit[cauldronKind] != 1 || annKit[woodKind] != 4 {
			t.Fatalf("ann's kit %v; want a cauldron and 4 wood", annKit)
		}
		// She stands on (x, y), the cauldron goes on (x+1, y): both on a plot.
		x, y := ann.stallSpot()
		ann.walkTo(x, y)
		cauldron := ann.slotOf(cauldronKind)
		ann.pick(cauldron)
		ann.click(x+1, y)
		ann.waitPlaced("the cauldron placed", x+1, y, strconv.Itoa(cauldronKind))
		ann.waitSlot(cauldron, 0, 0)
		ann.click(x+1, y) // a placed container next to the body: acts on it
		ann.wait("the cauldron's panel", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.getElementById("chest").dataset.station === "cauldron" && !document.getElementById("chest-craft").hidden`, x+1), 10*time.Second)
		ann.waitChest("the cauldron empty", "0x0,0x0,0x0,0x0")

		// Two of the four wood split off in the bar; the two picked go in.
		wood := ann.slotOf(woodKind)
		ann.pick(wood)
		rest := ann.firstEmpty()
		ann.do(chromedp.Click(chromedp.ID("split")))
		ann.waitSlot(rest, woodKind, 2)
		ann.waitSlot(wood, woodKind, 2)
		ann.waitPicked("the other two wood still picked", wood)
		ann.do(chromedp.Click(chromedp.ID("chest-put")))
		ann.waitChest("two wood in the cauldron", fmt.Sprintf("%dx2,0x0,0x0,0x0", woodKind))
		ann.waitSlot(wood, 0, 0)
		ann.told("the craft told in words", "Planks: Wood × 2 made Plank × 4 in the cauldron.", chromedp.Click(chromedp.ID("chest-craft")))
		ann.wait("planks in the cauldron", fmt.Sprintf(`document.querySelector('#chest-slots .slot[data-slot="0"]')?.dataset.kind === "%d"`, plankKind), 10*time.Second)
		n, err := strconv.Atoi(ann.eval(`document.querySelector('#chest-slots .slot[data-slot="0"]').dataset.count`))
		if err != nil || n != 4 {
			t.Fatalf("the cauldron's first slot holds %d planks (%v); want 4, the recipe's", n, err)
		}
		crafted = n
		ann.waitChest("the planks alone in the cauldron", fmt.Sprintf("%dx%d,0x0,0x0,0x0", plankKind, crafted))

		// Out: into the picked slot, emptied by the put.
		ann.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		ann.waitSlot(wood, plankKind, crafted)
		ann.waitChest("the cauldron empty again", "0x0,0x0,0x0,0x0")
		ann.waitTotals("ann's inventory after the craft", map[int]int{plankKind: crafted, woodKind: annKit[woodKind] - 2, cauldronKind: 0})
		ann.do(chromedp.KeyEvent(kb.Escape))
		ann.wait("the cauldron's panel closed", `document.getElementById("chest").hidden`, 5*time.Second)
		if ann.picked() == wood {
			ann.clickSlot(wood, false) // the picked slot again: put away
		}
		ann.waitPicked("nothing picked", -1)
		ann.noExceptions()
	})

	run("next to each other, each page offers a trade with the other", func(t *testing.T) {
		bar := ann.boxOf("#inventory")
		sq := ann.freeNextTo()
		bo.walkTo(sq[0], sq[1])
		ann.wait("the Trade with bo button", `!document.getElementById("traders").hidden && document.querySelector('#traders button[data-name="bo"]')?.textContent === "Trade with bo"`, 10*time.Second)
		bo.wait("the Trade with ann button", `document.querySelector('#traders button[data-name="ann"]') !== null`, 10*time.Second)
		if got := ann.trade(); got != "hidden" {
			t.Errorf("ann's trade dialog shows %q before any trade", got)
		}
		// The button came in a row kept for it: the bar under it did not
		// move under ann's clicks as bo came.
		if got := ann.boxOf("#inventory"); got != bar {
			t.Errorf("ann's inventory bar moved from %v to %v as bo came next to her", bar, got)
		}
	})

	var chairs, table int // ann's chairs' slot, bo's table's
	run("ann opens a trade with bo, and both pages show it", func(t *testing.T) {
		chairs, table = ann.slotOf(chairKind), bo.slotOf(tableKind)
		// She faces her cauldron, in words longer than a line; the trade
		// turns her to bo, in a snapshot that may come after the dialog.
		if got := ann.eval(`document.getElementById("facing").textContent`); !strings.HasPrefix(got, "You face a cauldron: Space opens it to craft") {
			t.Fatalf("ann faces %q before the trade; want her cauldron", got)
		}
		facing := ann.boxOf("#facing")
		ann.do(chromedp.Click(chromedp.CSS(`#traders button[data-name="bo"]`)))
		ann.waitTrade("ann's dialog open", "open 0 0 bo |  | ")
		bo.waitTrade("bo's dialog open, opened by ann", "open 0 0 ann |  | ")
		ann.wait("ann turned to bo", `document.getElementById("facing").textContent.startsWith("You face bo")`, 5*time.Second)
		// The line of what she faces kept its height: the dialog under it
		// did not move under the clicks that follow.
		if got := ann.boxOf("#facing"); got[3]-got[1] != facing[3]-facing[1] {
			t.Errorf("the line of what ann faces is %gpx high facing bo, %gpx facing her cauldron: the panels under it move as it changes", got[3]-got[1], facing[3]-facing[1])
		}
		if got := ann.eval(`document.getElementById("trade-title").textContent`); got != "Trading with bo" {
			t.Errorf("ann's dialog is titled %q", got)
		}
		ann.wait("no Trade button while trading", `document.getElementById("traders").hidden`, 5*time.Second)
	})

	run("both offer, each page lists both sides", func(t *testing.T) {
		ann.offerSlot(chairs, 2)
		ann.waitTrade("ann's two chairs on her side", fmt.Sprintf("open * 0 bo | %dx2 | ", chairKind))
		bo.waitTrade("ann's two chairs on bo's other side", fmt.Sprintf("open * 0 ann |  | %dx2", chairKind))
		bo.offerSlot(table, 1)
		want := fmt.Sprintf("open * 0 ann | %dx1 | %dx2", tableKind, chairKind)
		bo.waitTrade("both sides on bo's page", want)
		ann.waitTrade("both sides on ann's page", fmt.Sprintf("open * 0 bo | %dx2 | %dx1", chairKind, tableKind))
		if got := ann.eval(`document.querySelector('#trade-theirs-head').textContent`); got != "Bo offers" {
			t.Errorf("ann's dialog heads bo's side %q", got)
		}
	})

	run("both confirm, the dialogs say who has, and the items change hands", func(t *testing.T) {
		ann.do(chromedp.Click(chromedp.ID("trade-confirm")))
		ann.waitTrade("ann's confirmation on her page", fmt.Sprintf("open * 1 bo | %dx2 | %dx1", chairKind, tableKind))
		bo.waitTrade("ann's confirmation on bo's page", fmt.Sprintf("open * 2 ann | %dx1 | %dx2", tableKind, chairKind))
		bo.wait("bo told ann confirmed", `document.getElementById("trade-state").textContent === "Ann confirmed this: Confirm to trade."`, 5*time.Second)
		ann.wait("ann told she waits for bo", `document.getElementById("trade-state").textContent === "You confirmed; waiting for bo to confirm." && document.getElementById("trade-confirm").disabled`, 5*time.Second)
		bo.do(chromedp.Click(chromedp.ID("trade-confirm")))
		ann.waitTrade("done on ann's page", fmt.Sprintf("done * * bo | %dx2 | %dx1", chairKind, tableKind))
		bo.waitTrade("done on bo's page", fmt.Sprintf("done * * ann | %dx1 | %dx2", tableKind, chairKind))
		if got := ann.eval(`document.getElementById("trade-end").textContent`); got != "Done: you gave Chair × 2 and got Table × 1." {
			t.Errorf("ann's dialog ends %q", got)
		}
		if got := bo.eval(`document.getElementById("trade-end").textContent`); got != "Done: you gave Table × 1 and got Chair × 2." {
			t.Errorf("bo's dialog ends %q", got)
		}
		ann.waitTotals("ann's inventory after the trade", map[int]int{chairKind: annKit[chairKind] - 2, tableKind: annKit[tableKind] + 1})
		bo.waitTotals("bo's inventory after the trade", map[int]int{chairKind: boKit[chairKind] + 2, tableKind: 0})
		// The bars show it too.
		ann.waitSlot(chairs, chairKind, annKit[chairKind]-2)
		bo.wait("bo's bar without a table", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') === null`, tableKind), 5*time.Second)
		if got := ann.slotOf(tableKind); got < 0 || ann.slotCount(got) != fmt.Sprintf("%dx%d", tableKind, annKit[tableKind]+1) {
			t.Errorf("ann's bar shows the tables as %q in slot %d; want %d", ann.slotCount(max(got, 0)), got+1, annKit[tableKind]+1)
		}
		if got := bo.slotOf(chairKind); got < 0 || bo.slotCount(got) != fmt.Sprintf("%dx%d", chairKind, boKit[chairKind]+2) {
			t.Errorf("bo's bar shows the chairs as %q in slot %d; want %d", bo.slotCount(max(got, 0)), got+1, boKit[chairKind]+2)
		}
		ann.noExceptions()
		bo.noExceptions()
	})

	run("ann trades the planks she crafted to bo for his lamp", func(t *testing.T) {
		annBefore, boBefore := counts(ann.totals()), counts(bo.totals())
		if annBefore[plankKind] != crafted || boBefore[plankKind] != 0 || boBefore[lampKind] < 1 {
			t.Fatalf("before the trade: ann %v, bo %v; want ann's %d planks, none of bo's, and a lamp of his", annBefore, boBefore, crafted)
		}
		planks, lamp := ann.slotOf(plankKind), bo.slotOf(lampKind)
		ann.wait("the Trade with bo button again", `document.querySelector('#traders button[data-name="bo"]') !== null`, 10*time.Second)
		ann.do(chromedp.Click(chromedp.CSS(`#traders button[data-name="bo"]`)))
		ann.waitTrade("ann's new trade open", "open 0 0 bo |  | ")
		bo.waitTrade("the new trade replaces the done one on bo's page", "open 0 0 ann |  | ")
		ann.offerSlot(planks, crafted)
		bo.waitTrade("ann's planks on bo's page", fmt.Sprintf("open * 0 ann |  | %dx%d", plankKind, crafted))
		bo.offerSlot(lamp, 1)
		ann.waitTrade("both sides on ann's page", fmt.Sprintf("open * 0 bo | %dx%d | %dx1", plankKind, crafted, lampKind))
		bo.waitTrade("both sides on bo's page", fmt.Sprintf("open * 0 ann | %dx1 | %dx%d", lampKind, plankKind, crafted))
		ann.do(chromedp.Click(chromedp.ID("trade-confirm")))
		bo.waitTrade("ann's confirmation on bo's page", fmt.Sprintf("open * 2 ann | %dx1 | %dx%d", lampKind, plankKind, crafted))
		bo.do(chromedp.Click(chromedp.ID("trade-confirm")))
		ann.waitTrade("done on ann's page", fmt.Sprintf("done * * bo | %dx%d | %dx1", plankKind, crafted, lampKind))
		bo.waitTrade("done on bo's page", fmt.Sprintf("done * * ann | %dx1 | %dx%d", lampKind, plankKind, crafted))
		if got, want := ann.eval(`document.getElementById("trade-end").textContent`), fmt.Sprintf("Done: you gave Plank × %d and got Lamp × 1.", crafted); got != want {
			t.Errorf("ann's dialog ends %q; want %q", got, want)
		}
		if got, want := bo.eval(`document.getElementById("trade-end").textContent`), fmt.Sprintf("Done: you gave Lamp × 1 and got Plank × %d.", crafted); got != want {
			t.Errorf("bo's dialog ends %q; want %q", got, want)
		}
		ann.waitTotals("ann's inventory after the planks' trade", map[int]int{plankKind: 0, lampKind: annBefore[lampKind] + 1})
		bo.waitTotals("bo's inventory after the planks' trade", map[int]int{plankKind: crafted, lampKind: boBefore[lampKind] - 1})
		// The bars show it too: the planks gone from ann's, in bo's.
		ann.wait("ann's bar without planks", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') === null`, plankKind), 5*time.Second)
		bo.wait("bo's bar with the planks", fmt.Sprintf(`(() => { const b = document.querySelector('#inventory .slot[data-kind="%d"]'); return b !== null && b.dataset.count === "%d"; })()`, plankKind, crafted), 5*time.Second)
		if got := bo.eval(fmt.Sprintf(`String(document.querySelectorAll('#inventory .slot[data-kind="%d"]').length)`, plankKind)); got != "1" {
			t.Errorf("bo's bar shows planks in %s slots; want one stack of %d", got, crafted)
		}
		if got := ann.slotOf(lampKind); got < 0 || ann.slotCount(got) != fmt.Sprintf("%dx%d", lampKind, annBefore[lampKind]+1) {
			t.Errorf("ann's bar shows the lamps as %q in slot %d; want %d", ann.slotCount(max(got, 0)), got+1, annBefore[lampKind]+1)
		}
		ann.noExceptions()
		bo.noExceptions()
	})

	run("a trade called off is void, said in words, and nobody's items move", func(t *testing.T) {
		annBefore, boBefore := ann.totals(), bo.totals()
		bo.wait("the Trade with ann button again", `document.querySelector('#traders button[data-name="ann"]') !== null`, 10*time.Second)
		bo.do(chromedp.Click(chromedp.CSS(`#traders button[data-name="ann"]`)))
		bo.waitTrade("bo's new trade open", "open 0 0 ann |  | ")
		ann.waitTrade("the new trade replaces the done one on ann's page", "open 0 0 bo |  | ")
		ann.offerSlot(ann.slotOf(chairKind), 1)
		bo.waitTrade("ann's chair on bo's page", fmt.Sprintf("open * 0 ann |  | %dx1", chairKind))
		bo.do(chromedp.Click(chromedp.ID("trade-cancel")))
		for _, p := range []*page{ann, bo} {
			p.wait("the trade void, called off", `document.getElementById("trade").dataset.status === "void" && document.getElementById("trade").dataset.reason === "TRADE_CANCELLED"`, 10*time.Second)
			if got := p.eval(`document.getElementById("trade-end").textContent`); got != "Void: it was called off. Nobody's items moved." {
				t.Errorf("%s's dialog ends %q", p.name, got)
			}
			if got := p.eval(`String(document.getElementById("trade-confirm").offsetParent === null && !document.getElementById("trade-close").hidden)`); got != "true" {
				t.Errorf("%s's ended dialog: Confirm hidden and ✕ shown: %s", p.name, got)
			}
		}
		if got := ann.totals(); got != annBefore {
			t.Errorf("ann holds %q after the void trade; want %q, as before", got, annBefore)
		}
		if got := bo.totals(); got != boBefore {
			t.Errorf("bo holds %q after the void trade; want %q, as before", got, boBefore)
		}
		ann.do(chromedp.Click(chromedp.ID("trade-close")))
		ann.wait("ann's dialog closed", `document.getElementById("trade").hidden`, 5*time.Second)
		ann.noExceptions()
		bo.noExceptions()
	})
}

// stallSpot finds, on the plots of the Area the page plays (a village),
// three free squares in a row, west to east, nearest to the player: the
// owner stands on the first, the stall on the second, the buyer on the
// third.
func (p *page) stallSpot() (x, y int) {
	p.t.Helper()
	s := p.sdk(`(() => { const v = s.view, me = s.confirmed; let best = "", bd = 1e9;
		const on = (x, y) => s.plots.some((q) => x >= q.x && y >= q.y && x < q.x + q.w && y < q.y + q.h);
		const free = (x, y) => on(x, y) && v.maps.size > 0 && s.walkable(x, y) && v.entityAt(x, y) === undefined && v.objectsAt(x, y).length === 0;
		for (const q of s.plots) for (let y = q.y + 1; y < q.y + q.h - 1; y++) for (let x = q.x + 1; x + 2 < q.x + q.w - 1; x++) {
			if (!free(x, y) || !free(x + 1, y) || !free(x + 2, y)) continue;
			const d = Math.abs(x - me.x) + Math.abs(y - me.y);
			if (d < bd) { bd = d; best = x + "," + y; } }
		return best; })()`)
	if _, err := fmt.Sscanf(s, "%d,%d", &x, &y); err != nil {
		p.fail("no three free squares in a row on the plots: %q (plots %s)", s, p.sdk(`JSON.stringify(s.plots)`))
	}
	return x, y
}

// TestWebClientStall sells from a stall whose owner is offline. Sam
// places his stall (from the starter kit) on a plot of the demo village,
// opens it (his page calls it his), stocks it with his four chairs and
// prices them at two wood; then he leaves. Tia walks up to the stall and
// opens it: her page shows the chairs and their price, with a Buy
// button, and no way to stock it. A purchase naming three chairs (not
// what the stall holds) is refused STALE and changes nothing. She buys:
// her inventory shows the four chairs more and two wood fewer, and the
// stall's slot shows the two wood paid, no longer for sale. Sam comes
// back, opens his stall, finds the two wood in the slot he sold from,
// and takes them out. Last, he plants his sapling beside him: the line
// beside the map says it grows into a tree.
func TestWebClientStall(t *testing.T) {
	sam, tia, village := twoPlayers(t, "sam", "tia")
	sam.join(village)
	run := runner(t, sam, tia)

	var x, y int // sam stands on (x, y), the stall on (x+1, y), tia comes to (x+2, y)
	var samKit map[int]int
	run("sam places his stall on a plot and opens it: his own", func(t *testing.T) {
		sam.wait("the stall in the bar", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') !== null`, stallKind), 10*time.Second)
		samKit = counts(sam.totals())
		x, y = sam.stallSpot()
		sam.walkTo(x, y)
		stall := sam.slotOf(stallKind)
		sam.pick(stall)
		sam.click(x+1, y)
		sam.waitPlaced("the stall placed", x+1, y, strconv.Itoa(stallKind))
		sam.waitSlot(stall, 0, 0)
		sam.waitPixel("the stall drawn", x+1, y, stallRGB)
		sam.wait("facing the stall", `document.getElementById("facing").textContent.startsWith("You face a stall: Space opens it to see what it sells")`, 5*time.Second)
		sam.click(x+1, y) // a placed container next to the body: acts on it
		sam.wait("the stall's panel, his", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.getElementById("chest").dataset.stall === "owner" && document.querySelectorAll("#chest-slots .slot").length === 4 && !document.getElementById("stall").hidden`, x+1), 10*time.Second)
		if got := sam.eval(`document.getElementById("chest-title").textContent`); got != "Your stall" {
			t.Errorf("the panel is titled %q; want Your stall", got)
		}
		if got := sam.eval(`String(document.getElementById("chest-put").hidden)`); got != "false" {
			t.Errorf("the owner's panel hides Put in")
		}
	})

	run("sam stocks it with his chairs and prices them at two wood", func(t *testing.T) {
		sam.pick(sam.slotOf(chairKind))
		sam.do(chromedp.Click(chromedp.ID("chest-put")))
		sam.waitChest("the chairs in the stall", fmt.Sprintf("%dx%d,0x0,0x0,0x0", chairKind, samKit[chairKind]))
		sam.wait("slot 1's line: the chairs, not for sale", fmt.Sprintf(`(() => { const e = document.querySelector('#stall-list li[data-slot="0"]'); return e !== null && e.dataset.kind === "%d" && e.dataset.priceCount === "0" && e.querySelector("button.set-price") !== null; })()`, chairKind), 5*time.Second)
		sam.setValue(`#stall-list li[data-slot="0"] select.price-kind`, strconv.Itoa(woodKind))
		sam.setValue(`#stall-list li[data-slot="0"] input.price-count`, "2")
		sam.told("the price told in words", "Slot 1: for Wood × 2.", chromedp.Click(chromedp.CSS(`#stall-list li[data-slot="0"] button.set-price`)))
		sam.wait("slot 1 priced at two wood", fmt.Sprintf(`(() => { const e = document.querySelector('#stall-list li[data-slot="0"]'); return e.dataset.priceKind === "%d" && e.dataset.priceCount === "2"; })()`, woodKind), 10*time.Second)
		if got := sam.eval(`document.querySelector('#stall-list li[data-slot="0"] .what').textContent`); got != "1. Chair × 4 for Wood × 2" {
			t.Errorf("slot 1's line says %q", got)
		}
		sam.noExceptions()
	})

	run("sam leaves", func(t *testing.T) {
		sam.do(chromedp.Click(chromedp.ID("leave")), chromedp.WaitVisible(chromedp.ID("lobby")))
		tia.join(village)
		tia.waitPlaced("tia sees the stall", x+1, y, strconv.Itoa(stallKind))
		tia.wait("sam gone from the players here", `document.querySelector('#players li[data-name="sam"]') === null && document.querySelector('#players li[data-name="tia"]') !== null`, 10*time.Second)
	})

	var tiaKit map[int]int
	run("tia opens the stall: its chairs, their price, a Buy button", func(t *testing.T) {
		tiaKit = counts(tia.totals())
		if tiaKit[woodKind] < 2 {
			t.Fatalf("tia carries %v; want the kit's wood to pay with", tiaKit)
		}
		tia.walkTo(x+2, y)
		tia.click(x+1, y)
		tia.wait("the stall's panel, a buyer's", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.getElementById("chest").dataset.stall === "buyer"`, x+1), 10*time.Second)
		tia.waitChest("the chairs in the stall", fmt.Sprintf("%dx%d,0x0,0x0,0x0", chairKind, samKit[chairKind]))
		if got := tia.eval(`document.getElementById("chest-title").textContent + " | put in hidden: " + document.getElementById("chest-put").hidden + " | " + document.querySelector('#stall-list li[data-slot="0"] .what').textContent + " | " + document.querySelectorAll("#stall-list button.buy").length + " buy, " + document.querySelectorAll("#stall-list .price").length + " price forms"`); got != "A stall | put in hidden: true | 1. Chair × 4 for Wood × 2 | 1 buy, 0 price forms" {
			t.Errorf("tia's panel: %q", got)
		}
	})

	run("a purchase of what tia did not see is refused STALE, and nothing changes hands", func(t *testing.T) {
		// As if her page had seen three chairs: the server has four.
		tia.sdk(fmt.Sprintf(`(globalThis.__stale = "", s.intent({ kind: %d, dir: %d, target: { x: %d, y: 2 }, item: { from: 64, to: 0, count: 3 } })
			.then((o) => (globalThis.__stale = o.status + ":" + (o.code ?? 0))), "")`, wire.IntentBuy, wire.DirW, woodKind))
		tia.wait("the stale purchase answered", fmt.Sprintf(`globalThis.__stale === "refused:%d"`, wire.CodeStale), 10*time.Second)
		if got := tia.totals(); counts(got)[chairKind] != tiaKit[chairKind] || counts(got)[woodKind] != tiaKit[woodKind] {
			t.Errorf("tia holds %q after a refused purchase; want her kit, %v", got, tiaKit)
		}
		tia.waitChest("the chairs still in the stall", fmt.Sprintf("%dx%d,0x0,0x0,0x0", chairKind, samKit[chairKind]))
	})

	run("tia buys: the chairs are hers, the wood lies in the stall's slot", func(t *testing.T) {
		tia.told("the purchase told in words", "You bought Chair × 4 for Wood × 2.", chromedp.Click(chromedp.CSS(`#stall-list li[data-slot="0"] button.buy`)))
		tia.waitTotals("tia's inventory after the purchase", map[int]int{chairKind: tiaKit[chairKind] + samKit[chairKind], woodKind: tiaKit[woodKind] - 2})
		tia.waitChest("the payment in the stall's slot", fmt.Sprintf("%dx2,0x0,0x0,0x0", woodKind))
		tia.wait("the slot no longer for sale", `(() => { const e = document.querySelector('#stall-list li[data-slot="0"]'); return e.dataset.priceCount === "0" && e.querySelector("button.buy") === null; })()`, 5*time.Second)
		if got := tia.slotOf(chairKind); got < 0 || tia.slotCount(got) != fmt.Sprintf("%dx%d", chairKind, tiaKit[chairKind]+samKit[chairKind]) {
			t.Errorf("tia's bar shows the chairs as %q; want %d", tia.slotCount(max(got, 0)), tiaKit[chairKind]+samKit[chairKind])
		}
		tia.noExceptions()
	})

	run("sam comes back and finds the payment in his stall's till", func(t *testing.T) {
		sam.join(village)
		at := sam.pos()
		if max(abs(at[0]-(x+1)), abs(at[1]-y)) != 1 {
			// Not next to his stall: to his own square, or any free one beside it.
			sam.walkTo(x, y)
		}
		sam.click(x+1, y)
		sam.wait("his stall's panel", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.getElementById("chest").dataset.stall === "owner"`, x+1), 10*time.Second)
		sam.waitChest("the two wood paid in slot 1", fmt.Sprintf("%dx2,0x0,0x0,0x0", woodKind))
		if got := sam.eval(`document.querySelector('#stall-list li[data-slot="0"] .what').textContent`); got != "1. Wood × 2, not for sale" {
			t.Errorf("slot 1's line says %q", got)
		}
		sam.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		sam.waitChest("the stall empty", "0x0,0x0,0x0,0x0")
		sam.waitTotals("the wood in sam's inventory", map[int]int{woodKind: samKit[woodKind] + 2, chairKind: 0})
		sam.noExceptions()
	})

	run("a sapling placed says what it grows into", func(t *testing.T) {
		sq := sam.sdk(`(() => { const v = s.view, me = s.confirmed;
			const on = (x, y) => s.plots.some((q) => x >= q.x && y >= q.y && x < q.x + q.w && y < q.y + q.h);
			for (const [dx, dy] of [[0, -1], [0, 1], [-1, 0]]) { const x = me.x + dx, y = me.y + dy;
				if (on(x, y) && s.walkable(x, y) && v.entityAt(x, y) === undefined && v.objectsAt(x, y).length === 0) return x + "," + y; }
			return ""; })()`)
		var sx, sy int
		if _, err := fmt.Sscanf(sq, "%d,%d", &sx, &sy); err != nil {
			t.Skipf("no free square on the plot beside sam at %v", sam.pos())
		}
		sam.pick(sam.slotOf(saplingKind))
		sam.click(sx, sy)
		sam.waitPlaced("the sapling placed", sx, sy, strconv.Itoa(saplingKind))
		sam.wait("facing the sapling, said to grow into a tree", `document.getElementById("facing").textContent.startsWith("You face a sapling (grows into a tree)")`, 5*time.Second)
		sam.noExceptions()
	})
}

// The phone a page plays on in playOnAPhone: its screen in CSS pixels,
// as TestWebClientPhone's (an iPhone 12 or 13).
const phoneW, phoneH = 390, 844

// playOnAPhone makes the page's tab a phone's: a phoneW x phoneH screen,
// three device pixels to a CSS pixel, touch.
func (p *page) playOnAPhone() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab.Ctx, 10*time.Second)
	defer cancel()
	_, err1 := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: phoneW, Height: phoneH, DeviceScaleFactor: 3, Mobile: true})
	_, err2 := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5})
	if err1 != nil || err2 != nil {
		p.fail("emulate a phone: %v, %v", err1, err2)
	}
}

// offScreen says what of the element css selects, and of everything
// shown in it, does not fit within the width of the page's screen: a part
// that sticks out left or right, a part whose content is wider than it,
// the page wider than the screen; "" when all fits.
func (p *page) offScreen(css string) string {
	p.t.Helper()
	return p.eval(fmt.Sprintf(`(() => { const root = document.querySelector(%q); if (root === null || root.getClientRects().length === 0) return "not shown";
		const w = document.documentElement.clientWidth, out = [];
		const name = (e) => (e.id !== "" ? "#" + e.id : e.tagName.toLowerCase() + (e.className !== "" ? "." + e.className.split(" ").join(".") : "")) + ' "' + e.textContent.trim().slice(0, 30) + '"';
		for (const e of [root, ...root.querySelectorAll("*")]) {
			if (e.getClientRects().length === 0) continue;
			const r = e.getBoundingClientRect();
			if (r.left < -0.5 || r.right > w + 0.5) out.push(name(e) + " spans x " + r.left + " to " + r.right);
			if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) out.push(name(e) + " holds " + e.scrollWidth + " px of content in " + e.clientWidth);
		}
		if (document.documentElement.scrollWidth > w) out.push("the page is " + document.documentElement.scrollWidth + " px wide");
		return out.length === 0 ? "" : "(the screen is " + w + " px wide) " + out.join("; "); })()`, css))
}

// reach scrolls the page until the control css selects shows (as a
// finger would) and checks it shows whole, within the screen, enabled,
// and nothing covers its middle: its box, left, top, right, bottom.
func (p *page) reach(css string) [4]float64 {
	p.t.Helper()
	s := p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (e === null) return "none";
		e.scrollIntoView({ block: "nearest", inline: "nearest" });
		const r = e.getBoundingClientRect(), top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
		return [r.left, r.top, r.right, r.bottom, document.documentElement.clientWidth, window.innerHeight, top !== null && e.contains(top), e.disabled === true].join(","); })()`, css))
	var b [4]float64
	var w, h float64
	var uncovered, disabled bool
	if _, err := fmt.Sscanf(s, "%g,%g,%g,%g,%g,%g,%t,%t", &b[0], &b[1], &b[2], &b[3], &w, &h, &uncovered, &disabled); err != nil {
		p.fail("%s: %q", css, s)
	}
	switch {
	case b[2]-b[0] < 1 || b[3]-b[1] < 1:
		p.fail("%s is not shown: its box is %v", css, b)
	case b[0] < -0.5 || b[2] > w+0.5 || b[1] < -0.5 || b[3] > h+0.5: // layout boxes fall on fractions of a pixel
		p.fail("%s is at %v (%g x %g px), not within the %g x %g screen", css, b, b[2]-b[0], b[3]-b[1], w, h)
	case !uncovered:
		p.fail("%s, at %v, is covered at its middle", css, b)
	case disabled:
		p.fail("%s is disabled", css)
	}
	return b
}

// tapControl taps the control css selects with a finger, once reach has
// brought it into the screen.
func (p *page) tapControl(css string) {
	p.t.Helper()
	p.tapXY(centre(p.reach(css)))
}

// tradeFits checks the trade dialog of the page fits its screen's width,
// every part of it (see offScreen).
func (p *page) tradeFits(what string) {
	p.t.Helper()
	if off := p.offScreen("#trade"); off != "" {
		p.t.Errorf("%s does not fit the phone: %s", what, off)
	}
}

// TestWebClientTradeOnAPhone trades with a player on a phone (390 x 844,
// touch, as TestWebClientPhone's). Ann plays on the phone, Bo at a
// desktop's window. Once Bo stands next to her, Ann's page offers a
// "Trade with bo" button within the phone's screen; she taps it and the
// dialog opens on both pages, Ann's within the phone's width. She offers
// two chairs (Offer tapped), Bo his table: her dialog lists both sides,
// all of it within the width. She taps Confirm, Bo confirms: both pages
// show the trade done and the items moved, and Ann closes the dialog
// with its ✕. Then Bo opens a trade: it shows on the phone, Ann offers a
// chair and taps Cancel: both pages show it void, and nobody's items
// moved.
func TestWebClientTradeOnAPhone(t *testing.T) {
	ann, bo, village := twoPlayers(t, "ann", "bo", "ann")
	ann.join(village)
	bo.join(village)
	run := runner(t, ann, bo)

	var annKit, boKit map[int]int
	run("ann's page is a phone's; both carry the starter kit", func(t *testing.T) {
		if got := ann.eval(`window.innerWidth + " x " + window.innerHeight + ", touch " + matchMedia("(pointer: coarse)").matches`); got != fmt.Sprintf("%d x %d, touch true", phoneW, phoneH) {
			t.Fatalf("ann's page is %s; want a %d x %d phone's, touch", got, phoneW, phoneH)
		}
		for _, p := range []*page{ann, bo} {
			p.wait("the chairs and the table in the bar", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]') !== null && document.querySelector('#inventory .slot[data-kind="%d"]') !== null`, chairKind, tableKind), 10*time.Second)
		}
		annKit, boKit = counts(ann.totals()), counts(bo.totals())
		if annKit[chairKind] != 4 || annKit[tableKind] != 1 || boKit[chairKind] != 4 || boKit[tableKind] != 1 {
			t.Fatalf("the kits: ann %v, bo %v; want 4 chairs and a table each", annKit, boKit)
		}
	})

	run("next to bo, ann taps Trade with bo on the phone, and both pages show the trade", func(t *testing.T) {
		sq := ann.freeNextTo()
		bo.walkTo(sq[0], sq[1])
		ann.wait("the Trade with bo button", `!document.getElementById("traders").hidden && document.querySelector('#traders button[data-name="bo"]')?.textContent === "Trade with bo"`, 10*time.Second)
		if off := ann.offScreen("#traders"); off != "" {
			t.Errorf("the Trade with bo button does not fit the phone: %s", off)
		}
		ann.tapControl(`#traders button[data-name="bo"]`)
		ann.waitTrade("ann's dialog open", "open 0 0 bo |  | ")
		bo.waitTrade("bo's dialog open, opened by ann", "open 0 0 ann |  | ")
		ann.tradeFits("ann's dialog, open")
		t.Logf("ann's dialog, opened by her tap, is at %v on the %d x %d screen", ann.box("trade"), phoneW, phoneH)
	})

	run("both offer, ann with a tap on Offer: her dialog shows both sides within the phone's width", func(t *testing.T) {
		chairs, table := ann.slotOf(chairKind), bo.slotOf(tableKind)
		ann.reach("#trade-slot")
		ann.reach("#trade-count")
		ann.setValue("#trade-slot", strconv.Itoa(chairs))
		ann.setValue("#trade-count", "2")
		ann.tapControl("#trade-offer")
		ann.waitTrade("ann's two chairs on her side", fmt.Sprintf("open * 0 bo | %dx2 | ", chairKind))
		bo.waitTrade("ann's two chairs on bo's other side", fmt.Sprintf("open * 0 ann |  | %dx2", chairKind))
		bo.offerSlot(table, 1)
		ann.waitTrade("both sides on ann's page", fmt.Sprintf("open * 0 bo | %dx2 | %dx1", chairKind, tableKind))
		ann.tradeFits("ann's dialog with both offers")
		for _, css := range []string{"#trade-title", `#trade-mine li[data-kind]`, "#trade-theirs-head", `#trade-theirs li[data-kind]`, "#trade-state"} {
			ann.reach(css)
		}
	})

	run("ann taps Confirm, bo confirms: both pages show the trade done, and the items moved", func(t *testing.T) {
		ann.tapControl("#trade-confirm")
		ann.waitTrade("ann's confirmation on her page", fmt.Sprintf("open * 1 bo | %dx2 | %dx1", chairKind, tableKind))
		bo.waitTrade("ann's confirmation on bo's page", fmt.Sprintf("open * 2 ann | %dx1 | %dx2", tableKind, chairKind))
		ann.wait("ann told she waits for bo", `document.getElementById("trade-state").textContent === "You confirmed; waiting for bo to confirm." && document.getElementById("trade-confirm").disabled`, 5*time.Second)
		ann.tradeFits("ann's dialog, confirmed")
		bo.do(chromedp.Click(chromedp.ID("trade-confirm")))
		ann.waitTrade("done on ann's page", fmt.Sprintf("done * * bo | %dx2 | %dx1", chairKind, tableKind))
		bo.waitTrade("done on bo's page", fmt.Sprintf("done * * ann | %dx1 | %dx2", tableKind, chairKind))
		if got := ann.eval(`document.getElementById("trade-end").textContent`); got != "Done: you gave Chair × 2 and got Table × 1." {
			t.Errorf("ann's dialog ends %q", got)
		}
		if got := bo.eval(`document.getElementById("trade-end").textContent`); got != "Done: you gave Table × 1 and got Chair × 2." {
			t.Errorf("bo's dialog ends %q", got)
		}
		ann.waitTotals("ann's inventory after the trade", map[int]int{chairKind: annKit[chairKind] - 2, tableKind: annKit[tableKind] + 1})
		bo.waitTotals("bo's inventory after the trade", map[int]int{chairKind: boKit[chairKind] + 2, tableKind: 0})
		ann.tradeFits("ann's dialog, done")
		ann.reach("#trade-end")
		ann.tapControl("#trade-close")
		ann.wait("ann's dialog closed", `document.getElementById("trade").hidden`, 5*time.Second)
		ann.noExceptions()
		bo.noExceptions()
	})

	run("bo opens a trade: it shows on the phone, and ann calls it off with a tap on Cancel", func(t *testing.T) {
		annBefore, boBefore := ann.totals(), bo.totals()
		ann.eval(`(window.scrollTo(0, 0), "")`) // she looks at the map, the panel below it
		bo.wait("the Trade with ann button", `document.querySelector('#traders button[data-name="ann"]') !== null`, 10*time.Second)
		bo.do(chromedp.Click(chromedp.CSS(`#traders button[data-name="ann"]`)))
		bo.waitTrade("bo's trade open", "open 0 0 ann |  | ")
		ann.waitTrade("bo's trade open on the phone", "open 0 0 bo |  | ")
		t.Logf("ann's dialog, opened by bo, is at %v on the %d x %d screen (page scrolled to %s)", ann.box("trade"), phoneW, phoneH, ann.eval(`String(window.scrollY)`))
		// A trade another player opened comes into view by itself: the
		// phone's player, who did nothing, sees it without scrolling.
		ann.wait("ann's dialog brought into view", `(() => { const r = document.getElementById("trade").getBoundingClientRect(); return r.top >= -0.5 && r.bottom <= window.innerHeight + 0.5; })()`, 5*time.Second)
		ann.tradeFits("ann's dialog, opened by bo")
		ann.reach("#trade-count")
		ann.setValue("#trade-slot", strconv.Itoa(ann.slotOf(chairKind)))
		ann.setValue("#trade-count", "1")
		ann.tapControl("#trade-offer")
		bo.waitTrade("ann's chair on bo's page", fmt.Sprintf("open * 0 ann |  | %dx1", chairKind))
		ann.tapControl("#trade-cancel")
		for _, p := range []*page{ann, bo} {
			p.wait("the trade void, called off", `document.getElementById("trade").dataset.status === "void" && document.getElementById("trade").dataset.reason === "TRADE_CANCELLED"`, 10*time.Second)
			if got := p.eval(`document.getElementById("trade-end").textContent`); got != "Void: it was called off. Nobody's items moved." {
				t.Errorf("%s's dialog ends %q", p.name, got)
			}
		}
		if got := ann.totals(); got != annBefore {
			t.Errorf("ann holds %q after the void trade; want %q, as before", got, annBefore)
		}
		if got := bo.totals(); got != boBefore {
			t.Errorf("bo holds %q after the void trade; want %q, as before", got, boBefore)
		}
		ann.tradeFits("ann's dialog, void")
		ann.tapControl("#trade-close")
		ann.wait("ann's dialog closed", `document.getElementById("trade").hidden`, 5*time.Second)
		ann.noExceptions()
		bo.noExceptions()
	})
}
