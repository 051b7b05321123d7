package web_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/web/internal/chrome"
)

// What the web client draws for a placed chair and a placed chest
// (web/app/src/looks.ts, ITEM_COLORS): a chair's seat, a chest's body.
const (
	chairRGB     = "192,132,62" // chairSeat #c0843e
	chestRGB     = "138,90,36"  // chest #8a5a24
	floorWoodRGB = "154,106,58" // floorWood #9a6a3a
)

// The item kinds of content/data/items.json the test places.
const (
	chairKind = 1
	tableKind = 2
	chestKind = 6
	floorKind = 11
	woodKind  = 13
)

// slotOf is the inventory bar's first slot holding kind, or -1.
func (p *page) slotOf(kind int) int {
	p.t.Helper()
	s := p.eval(fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="%d"]')?.dataset.slot ?? "-1"`, kind))
	i, err := strconv.Atoi(s)
	if err != nil {
		p.fail("the slot of kind %d: %q", kind, s)
	}
	return i
}

// slotCount is what the inventory bar's slot i says it holds: "kind×count".
func (p *page) slotCount(i int) string {
	p.t.Helper()
	return p.eval(fmt.Sprintf(`(() => { const b = document.querySelector('#inventory .slot[data-slot="%d"]'); return b === null ? "none" : b.dataset.kind + "x" + b.dataset.count; })()`, i))
}

// waitSlot waits until the inventory bar's slot i holds count items of kind.
func (p *page) waitSlot(i, kind, count int) {
	p.t.Helper()
	want := fmt.Sprintf("%dx%d", kind, count)
	if count == 0 {
		want = "0x0"
	}
	p.wait(fmt.Sprintf("inventory slot %d to hold %s", i+1, want), fmt.Sprintf(`(() => { const b = document.querySelector('#inventory .slot[data-slot="%d"]'); return b !== null && b.dataset.kind + "x" + b.dataset.count === %q; })()`, i, want), 10*time.Second)
}

// freeNextTo is a square next to the player's body (east, south, west or
// north of it) that holds nothing: no object, no body.
func (p *page) freeNextTo() [2]int {
	p.t.Helper()
	s := p.sdk(`(() => { const v = s.view, me = s.confirmed;
		for (const [dx, dy] of [[1, 0], [0, 1], [-1, 0], [0, -1]]) { const x = me.x + dx, y = me.y + dy;
			if (s.walkable(x, y) && v.entityAt(x, y) === undefined && v.objectsAt(x, y).length === 0) return x + "," + y; }
		return ""; })()`)
	var xy [2]int
	if _, err := fmt.Sscanf(s, "%d,%d", &xy[0], &xy[1]); err != nil {
		p.fail("no free square next to the body at %v: %q", p.pos(), s)
	}
	return xy
}

// placed is what the page's view holds placed on square (x, y): the
// item kinds of its placed objects, "" for none.
func (p *page) placed(x, y int) string {
	p.t.Helper()
	return p.sdk(fmt.Sprintf(`s.view.objectsAt(%d, %d).filter((o) => o.item !== 0).map((o) => o.item).join(",")`, x, y))
}

// waitPlaced waits until the page's view holds exactly items (kinds,
// comma-separated; "" for nothing) placed on square (x, y).
func (p *page) waitPlaced(what string, x, y int, items string) {
	p.t.Helper()
	p.wait(what, fmt.Sprintf(`(() => { const s = globalThis.__leySession; return s !== undefined && s.view.objectsAt(%d, %d).filter((o) => o.item !== 0).map((o) => o.item).join(",") === %q; })()`, x, y, items), 10*time.Second)
}

// dirTo is the direction (an index of web/sdk's DIR_DELTA) from square
// from to square to, next to it.
func dirTo(from, to [2]int) int {
	deltas := [][2]int{{0, -1}, {1, -1}, {1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}}
	return slices.Index(deltas, [2]int{to[0] - from[0], to[1] - from[1]})
}

// noBuild is how the play screen's words start where the Area's rules do
// not let the player build: the hint under the inventory and what a try
// says (web/app/src/input.ts, NO_BUILD_HINT; build.ts, NO_BUILD).
const noBuild = "You may not build here"

// told clears the page's toast, does what, and waits until the toast
// says something starting with want.
func (p *page) told(what, want string, do chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	p.eval(`(document.getElementById("toast").textContent = "", "")`)
	p.do(do)
	p.wait(what, fmt.Sprintf(`document.getElementById("toast").textContent.startsWith(%q)`, want), 10*time.Second)
}

// pickKey picks inventory slot i (one of the first ten) with its key, 1-9 or 0.
func (p *page) pickKey(i int) {
	p.t.Helper()
	p.do(chromedp.KeyEvent(strconv.Itoa((i + 1) % 10)))
	p.wait(fmt.Sprintf("slot %d picked by its key", i+1), fmt.Sprintf(`document.querySelector('#inventory .slot[data-slot="%d"]').classList.contains("selected")`, i), 5*time.Second)
}

// pick clicks inventory slot i on the bar and checks it shows picked.
func (p *page) pick(i int) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#inventory .slot[data-slot="%d"]`, i))))
	p.wait(fmt.Sprintf("slot %d picked", i+1), fmt.Sprintf(`document.querySelector('#inventory .slot[data-slot="%d"]').classList.contains("selected")`, i), 5*time.Second)
}

// picked is the inventory slot the bar shows picked (its data-picked),
// -1 for none.
func (p *page) picked() int {
	p.t.Helper()
	s := p.eval(`document.getElementById("inventory").dataset.picked || "-1"`)
	i, err := strconv.Atoi(s)
	if err != nil {
		p.fail("the picked slot: %q", s)
	}
	return i
}

// clickSlot clicks inventory slot i on the bar, with Shift if shift.
func (p *page) clickSlot(i int, shift bool) {
	p.t.Helper()
	p.do(p.slotClick(i, shift))
}

// slotClick is a click on inventory slot i of the bar (with Shift if
// shift), scrolled into sight first.
func (p *page) slotClick(i int, shift bool) chromedp.Action[chromedp.Void] {
	p.t.Helper()
	css := fmt.Sprintf(`#inventory .slot[data-slot="%d"]`, i)
	p.eval(fmt.Sprintf(`(document.querySelector(%q).scrollIntoView({ block: "nearest", inline: "nearest" }), "")`, css))
	x, y := centre(p.boxOf(css))
	if shift {
		return chromedp.MouseClickXY(x, y, chromedp.ButtonModifiers(chromedp.ModifierShift))
	}
	return chromedp.MouseClickXY(x, y)
}

// waitPicked waits until the bar shows slot i picked (-1: none), and
// the line under it says so (hidden when none is).
func (p *page) waitPicked(what string, i int) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const sel = [...document.querySelectorAll("#inventory .slot.selected")].map((b) => +b.dataset.slot); const line = document.getElementById("picked");
		return (document.getElementById("inventory").dataset.picked || "-1") === "%d" && (%d < 0 ? sel.length === 0 && line.hidden : sel.length === 1 && sel[0] === %d && !line.hidden); })()`, i, i, i)
	p.wait(what, js, 5*time.Second)
}

// stackAt is inventory slot i as the page's SDK session holds it:
// "kind×count#id" ("0x0#0" when empty).
func (p *page) stackAt(i int) string {
	p.t.Helper()
	return p.sdk(fmt.Sprintf(`(() => { const st = s.inventory[%d]; return st.kind + "x" + st.count + "#" + st.id; })()`, i))
}

// totals is what the page's SDK session says the inventory holds, kind
// by kind: "kind:count" joined by commas, by kind.
func (p *page) totals() string {
	p.t.Helper()
	return p.sdk(`(() => { const m = new Map(); for (const st of s.inventory) if (st.count > 0) m.set(st.kind, (m.get(st.kind) ?? 0) + st.count);
		return [...m].sort((a, b) => a[0] - b[0]).map(([k, c]) => k + ":" + c).join(","); })()`)
}

// firstEmpty is the inventory's first empty slot in the page's SDK
// session, or -1.
func (p *page) firstEmpty() int {
	p.t.Helper()
	s := p.sdk(`s.inventory.findIndex((st) => st.count === 0)`)
	i, err := strconv.Atoi(s)
	if err != nil {
		p.fail("the first empty slot: %q", s)
	}
	return i
}

// boxOf is the box on the page of the element css selects: left, top,
// right, bottom in CSS pixels.
func (p *page) boxOf(css string) [4]float64 {
	p.t.Helper()
	s := p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (e === null) return ""; const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom].join(","); })()`, css))
	var b [4]float64
	if _, err := fmt.Sscanf(s, "%g,%g,%g,%g", &b[0], &b[1], &b[2], &b[3]); err != nil {
		p.fail("the box of %s: %q", css, s)
	}
	return b
}

// TestWebClientBuild furnishes a home in the browser. Ann, whose home it
// is (an account made through the API, with a home it created), finds
// her starter kit in the inventory bar, picks the chairs and places one
// with a click on a square next to her body: the square shows a chair,
// for her and for Bo (a member of the home, in its own browser context)
// at once, and the bar counts one chair less; T takes it back and B
// places it again, each seen by both. Bo, who is no builder of the home,
// is offered no building (no Build or Take button; his bar shows his
// chairs, and a click on it, B and T say in words that he may not build,
// sending nothing), and a placement sent all the same is refused
// NOT_BUILDER. A wooden floor tile lies under a chair placed on
// it, and T takes the chair back before the tile. Ann places the chest,
// opens it, puts her chairs in and takes them out again through its
// panel, and Escape closes it.
// The bar rearranges her inventory: with a slot picked, a click on
// another moves its stack there (onto an empty slot), merges it (onto
// its kind) or swaps the two (onto another kind); Shift-click and the
// Split button move half of it, the rest staying picked; a click on the
// picked slot puts it away, the keys only pick, and a split onto another
// kind is refused in words. The SDK's inventory holds as many of each
// kind at the end as before.
// With a finger, a tap on a slot and one on a square place the table, and
// the Take and Build buttons take it back and place it again; the Split
// button splits the chairs, and taps merge them back. The chest's
// panel closes as she walks away, to a tree, whose wood comes into the
// bar. A reload finds the chair where it was and the inventory as she
// left it. Then she leaves for her lobby and names Bo a builder in her
// home's Builders panel; on his next arrival Bo has the Build and Take
// buttons, and the chair he places shows on her map.
func TestWebClientBuild(t *testing.T) {
	b := chrome.Start(t)
	r := startRealm(t)
	base := r.URL()
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	annEmail := "ann-" + stamp + "@t.local"
	owner := dirclient.New(base)
	if _, err := owner.Register(t.Context(), annEmail, password, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Login(t.Context(), annEmail, password); err != nil {
		t.Fatal(err)
	}
	home, err := owner.CreateArea(t.Context(), "Ann's home", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	invite, err := owner.Invite(t.Context(), home.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	ann := &page{t: t, name: "ann", tab: b.Tab(t, sessionHook)}
	bo := &page{t: t, name: "bo", tab: b.Tab(t, sessionHook)}
	ann.logIn(base, annEmail, password) // ends the API's session: the page's is the account's one
	bo.signUp(base, "bo-"+stamp+"@t.local", "bo", password)
	bo.do(
		chromedp.SendKeys(chromedp.CSS(`#redeem-form input[name=code]`), invite),
		chromedp.Click(chromedp.CSS(`#redeem-form button`)),
	)
	ann.join(home.ID)
	bo.join(home.ID)
	run := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			ann.t, bo.t = t, t
			f(t)
		}) {
			t.FailNow()
		}
	}

	var chairs, at, chestAt [2]int // the chairs' slot and count; the squares the chair and the chest stand on
	var woodAfter int              // the wood in the bar after gathering
	run("the starter kit shows in the inventory bar", func(t *testing.T) {
		ann.wait("the chairs in the bar", `document.querySelector('#inventory .slot[data-kind="1"]') !== null`, 10*time.Second)
		if n := ann.eval(`String(document.querySelectorAll("#inventory .slot").length)`); n != "20" {
			t.Errorf("the bar has %s slots; want 20", n)
		}
		chairs[0] = ann.slotOf(chairKind)
		if _, err := fmt.Sscanf(ann.slotCount(chairs[0]), "1x%d", &chairs[1]); err != nil || chairs[1] != 4 {
			t.Fatalf("the chairs' slot says %q; want 4 chairs (the starter kit)", ann.slotCount(chairs[0]))
		}
		if label := ann.eval(fmt.Sprintf(`document.querySelector('#inventory .slot[data-slot="%d"] .label').textContent`, chairs[0])); label != "Chair" {
			t.Errorf("the chairs' slot is labelled %q", label)
		}
		if ann.slotOf(chestKind) < 0 {
			t.Errorf("no chest in the bar: %q", ann.eval(`[...document.querySelectorAll("#inventory .slot")].map((b) => b.title).join(" | ")`))
		}
	})

	run("a click next to the body places the picked chair, and both players see it", func(t *testing.T) {
		ann.pick(chairs[0])
		at = ann.freeNextTo()
		ann.click(at[0], at[1])
		ann.waitPlaced("the chair placed", at[0], at[1], strconv.Itoa(chairKind))
		ann.waitSlot(chairs[0], chairKind, chairs[1]-1)
		ann.waitPixel("the chair drawn for ann", at[0], at[1], chairRGB)
		bo.waitPlaced("bo sees the chair", at[0], at[1], strconv.Itoa(chairKind))
		bo.waitPixel("the chair drawn for bo", at[0], at[1], chairRGB)
		if pos := ann.pos(); pos == at {
			t.Errorf("the click walked onto the square rather than placing there")
		}
	})

	run("T takes the faced chair back and B places it again", func(t *testing.T) {
		// Placing turned the body to face the chair; the line beside the
		// map says what T does to it.
		ann.wait("facing the chair", `document.getElementById("facing").textContent === "You face a chair: T takes it back."`, 5*time.Second)
		ann.do(chromedp.KeyEvent("t"))
		ann.waitPlaced("the chair taken back", at[0], at[1], "")
		ann.waitSlot(chairs[0], chairKind, chairs[1])
		bo.waitPlaced("bo sees the chair gone", at[0], at[1], "")
		ann.do(chromedp.KeyEvent("b"))
		ann.waitPlaced("the chair placed with B", at[0], at[1], strconv.Itoa(chairKind))
		ann.waitSlot(chairs[0], chairKind, chairs[1]-1)
		bo.waitPlaced("bo sees the chair again", at[0], at[1], strconv.Itoa(chairKind))
		bo.waitPixel("the chair drawn again for bo", at[0], at[1], chairRGB)
	})

	run("a member who is no builder is offered no building, told so in words, and refused", func(t *testing.T) {
		bo.wait("no Build or Take button for bo, and the hint saying why", fmt.Sprintf(`document.getElementById("place").hidden && document.getElementById("take").hidden && document.getElementById("build-hint").textContent.startsWith(%q)`, noBuild), 10*time.Second)
		slot := bo.slotOf(chairKind)
		if slot < 0 {
			t.Fatalf("bo has no chairs: %q", bo.eval(`[...document.querySelectorAll("#inventory .slot")].map((b) => b.title).join(" | ")`))
		}
		bo.waitSlot(slot, chairKind, 4)
		// From here on, count the place and take intents the page sends.
		bo.sdk(`(s.__sent = 0, ["place", "take"].forEach((k) => { const f = s[k]; s[k] = (...a) => (s.__sent++, f.apply(s, a)); }), "")`)
		bo.told("a click on the bar answered in words", noBuild, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#inventory .slot[data-slot="%d"]`, slot))))
		if got := bo.eval(`String(document.querySelectorAll("#inventory .slot.selected").length)`); got != "0" {
			t.Errorf("%s slots show picked; want none", got)
		}
		bo.told("B answered in words", noBuild, chromedp.KeyEvent("b"))
		bo.told("T answered in words", noBuild, chromedp.KeyEvent("t"))
		if got := bo.sdk(`String(s.__sent)`); got != "0" {
			t.Errorf("the page sent %s place or take intents; want none", got)
		}
		sq := bo.freeNextTo()
		bo.sdk(fmt.Sprintf(`(s.place(%d, %d).then((o) => (globalThis.__placed = o.status + ":" + o.code)), "")`, slot, dirTo(bo.pos(), sq)))
		bo.wait("the placement sent all the same refused NOT_BUILDER", fmt.Sprintf(`globalThis.__placed === "refused:%d"`, wire.CodeNotBuilder), 10*time.Second)
		bo.wait("the refusal in words", `document.getElementById("toast").textContent.includes("may not build or gather")`, 10*time.Second)
		if got := bo.placed(sq[0], sq[1]); got != "" {
			t.Errorf("bo's refused chair shows placed: %q", got)
		}
		bo.waitSlot(slot, chairKind, 4)
	})

	run("a floor tile lies under the chair placed on it; T takes the chair back first, then the tile", func(t *testing.T) {
		floor := ann.slotOf(floorKind)
		ann.pickKey(floor)
		sq := ann.freeNextTo()
		ann.click(sq[0], sq[1])
		ann.waitPlaced("the floor tile placed", sq[0], sq[1], strconv.Itoa(floorKind))
		ann.waitSlot(floor, floorKind, 19)
		ann.pickKey(chairs[0])
		ann.click(sq[0], sq[1]) // a floor tile is no object to act on: the chair goes on it
		both := fmt.Sprintf(`(() => { const s = globalThis.__leySession; return s.view.objectsAt(%d, %d).map((o) => o.item).sort((a, b) => a - b).join(",") === "%d,%d"; })()`, sq[0], sq[1], chairKind, floorKind)
		ann.wait("the chair on the floor tile", both, 10*time.Second)
		ann.waitPixel("the chair drawn over the tile", sq[0], sq[1], chairRGB)
		if got := ann.pixel(sq[0], sq[1], 0.1, 0.1); got != floorWoodRGB {
			t.Errorf("the tile's corner beside the chair is drawn %s; want the wooden floor, %s", got, floorWoodRGB)
		}
		ann.wait("facing the chair", `document.getElementById("facing").textContent === "You face a chair: T takes it back."`, 5*time.Second)
		ann.do(chromedp.KeyEvent("t"))
		ann.waitPlaced("the chair taken off the tile", sq[0], sq[1], strconv.Itoa(floorKind))
		ann.waitSlot(chairs[0], chairKind, chairs[1]-1)
		ann.do(chromedp.KeyEvent("t"))
		ann.waitPlaced("the tile taken back", sq[0], sq[1], "")
		ann.waitSlot(floor, floorKind, 20)
	})

	run("a placed chest opens, and its panel moves stacks in and out", func(t *testing.T) {
		chest := ann.slotOf(chestKind)
		ann.pickKey(chest)
		sq := ann.freeNextTo()
		chestAt = sq
		ann.click(sq[0], sq[1])
		ann.waitPlaced("the chest placed", sq[0], sq[1], strconv.Itoa(chestKind))
		ann.waitPixel("the chest drawn", sq[0], sq[1], chestRGB)
		ann.waitSlot(chest, chestKind, 0)
		ann.click(sq[0], sq[1]) // a placed chest next to the body: acts on it
		ann.wait("the chest's panel", fmt.Sprintf(`!document.getElementById("chest").hidden && document.getElementById("chest").dataset.x === "%d" && document.querySelectorAll("#chest-slots .slot").length === 16`, sq[0]), 10*time.Second)
		if got := ann.eval(`String(document.getElementById("chest-craft").hidden) + " " + document.getElementById("chest").dataset.station`); got != "true " {
			t.Errorf("a chest's panel: Craft hidden, station: %q; want true and none (a chest is no crafting station)", got)
		}
		ann.pick(chairs[0])
		ann.do(chromedp.Click(chromedp.ID("chest-put")))
		ann.wait("the chairs in the chest", `(() => { const b = document.querySelector('#chest-slots .slot[data-slot="0"]'); return b.dataset.kind === "1" && b.dataset.count === "3"; })()`, 10*time.Second)
		ann.waitSlot(chairs[0], 0, 0)
		ann.do(chromedp.Click(chromedp.CSS(`#chest-slots .slot[data-slot="0"]`)))
		ann.waitSlot(chairs[0], chairKind, chairs[1]-1)
		ann.wait("the chest empty again", `document.querySelector('#chest-slots .slot[data-slot="0"]').dataset.count === "0"`, 10*time.Second)
		ann.do(chromedp.KeyEvent(kb.Escape))
		ann.wait("the panel closed by Escape", `document.getElementById("chest").hidden`, 5*time.Second)
		ann.noExceptions()
		bo.noExceptions()
	})

	run("the bar moves, splits, merges and swaps stacks, losing nothing", func(t *testing.T) {
		before := ann.totals()
		if got := ann.picked(); got != chairs[0] {
			t.Fatalf("slot %d shows picked after the chest's panel; want the chairs' slot %d", got+1, chairs[0]+1)
		}
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("the chairs put away by a click on their picked slot", -1)
		chairID := ann.stackAt(chairs[0])
		n := chairs[1] - 1 // one chair stands in the home

		// A click on an empty slot moves the picked stack there, whole.
		empty := ann.firstEmpty()
		if empty < 0 {
			t.Fatalf("no empty slot in the inventory: %q", ann.totals())
		}
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("the chairs picked", chairs[0])
		ann.wait("the line under the bar saying what a click on another slot does", `document.getElementById("picked-text").textContent.includes("click another slot to move")`, 5*time.Second)
		ann.clickSlot(empty, false)
		ann.waitSlot(empty, chairKind, n)
		ann.waitSlot(chairs[0], 0, 0)
		ann.waitPicked("nothing picked after the move", -1)
		if got, want := ann.stackAt(empty), chairID; got != want {
			t.Errorf("the moved stack is %q in the SDK; want %q (the same stack)", got, want)
		}

		// Shift-click on an empty slot splits half off; the rest stays picked.
		ann.clickSlot(empty, false)
		ann.waitPicked("the moved chairs picked", empty)
		ann.wait("the Split button for a stack of more than one", `!document.getElementById("split").hidden`, 5*time.Second)
		ann.clickSlot(chairs[0], true)
		ann.waitSlot(chairs[0], chairKind, n/2)
		ann.waitSlot(empty, chairKind, n-n/2)
		ann.waitPicked("the rest still picked after the split", empty)
		if a, b := ann.stackAt(chairs[0]), ann.stackAt(empty); a == b || strings.SplitN(a, "#", 2)[1] == strings.SplitN(b, "#", 2)[1] {
			t.Errorf("the split stacks are %q and %q in the SDK; want two stacks of their own ids", a, b)
		}

		// A click on a stack of its kind merges the picked one into it.
		ann.clickSlot(chairs[0], false)
		ann.waitSlot(chairs[0], chairKind, n)
		ann.waitSlot(empty, 0, 0)
		ann.waitPicked("nothing picked after the merge", -1)

		// The Split button moves half to the first empty slot; a merge brings it back.
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("the chairs picked again", chairs[0])
		to := ann.firstEmpty()
		ann.do(chromedp.Click(chromedp.ID("split")))
		ann.waitSlot(to, chairKind, n/2)
		ann.waitSlot(chairs[0], chairKind, n-n/2)
		ann.waitPicked("the rest still picked after Split", chairs[0])
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("the chairs put away", -1)
		ann.clickSlot(to, false)
		ann.clickSlot(chairs[0], false)
		ann.waitSlot(chairs[0], chairKind, n)
		ann.waitSlot(to, 0, 0)

		// A click on another kind swaps the two stacks; the keys only pick.
		table := ann.slotOf(tableKind)
		ann.clickSlot(chairs[0], false)
		ann.clickSlot(table, false)
		ann.waitSlot(table, chairKind, n)
		ann.waitSlot(chairs[0], tableKind, 1)
		ann.waitPicked("nothing picked after the swap", -1)
		ann.clickSlot(table, false)
		ann.clickSlot(chairs[0], false)
		ann.waitSlot(chairs[0], chairKind, n)
		ann.waitSlot(table, tableKind, 1)
		if table < 10 {
			ann.clickSlot(chairs[0], false)
			ann.pickKey(table)
			ann.waitPicked("the table picked by its key, moving nothing", table)
			ann.waitSlot(chairs[0], chairKind, n)
			ann.waitSlot(table, tableKind, 1)
			ann.do(chromedp.KeyEvent(strconv.Itoa((table + 1) % 10)))
			ann.waitPicked("the table put away by its key", -1)
		}

		// Half a stack onto another kind: refused, in words.
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("the chairs picked for a split onto the table", chairs[0])
		ann.told("a split onto another kind refused in words", "Another kind is there", ann.slotClick(table, true))
		ann.waitSlot(chairs[0], chairKind, n)
		ann.waitSlot(table, tableKind, 1)
		ann.clickSlot(chairs[0], false)
		ann.waitPicked("nothing picked at the end", -1)

		if after := ann.totals(); after != before {
			t.Errorf("the inventory holds %q after the moves; want %q, as before", after, before)
		}
		ann.noExceptions()
	})

	run("taps place the table, and the Take and Build buttons take it back and place it again", func(t *testing.T) {
		if _, err := chromedp.Call(ann.tab.Ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5}); err != nil {
			t.Fatalf("emulate touch: %v", err)
		}
		table := ann.slotOf(tableKind)
		ann.tapXY(centre(ann.boxOf(fmt.Sprintf(`#inventory .slot[data-slot="%d"]`, table))))
		ann.wait("the table picked by a tap", fmt.Sprintf(`document.querySelector('#inventory .slot[data-slot="%d"]').classList.contains("selected")`, table), 5*time.Second)
		sq := ann.freeNextTo()
		ann.tap(sq[0], sq[1])
		ann.waitPlaced("the table placed by a tap", sq[0], sq[1], strconv.Itoa(tableKind))
		ann.waitSlot(table, 0, 0)
		bo.waitPlaced("bo sees the table", sq[0], sq[1], strconv.Itoa(tableKind))
		ann.wait("the Take and Build buttons shown for a finger", `["take", "place"].every((id) => getComputedStyle(document.getElementById(id)).display !== "none")`, 5*time.Second)
		ann.wait("facing the table", `document.getElementById("facing").textContent === "You face a table: Take takes it back."`, 5*time.Second)
		ann.tapXY(centre(ann.box("take")))
		ann.waitPlaced("the table taken back by Take", sq[0], sq[1], "")
		ann.waitSlot(table, tableKind, 1)
		ann.tapXY(centre(ann.box("place")))
		ann.waitPlaced("the table placed again by Build", sq[0], sq[1], strconv.Itoa(tableKind))
		ann.waitSlot(table, 0, 0)
		bo.waitPlaced("bo sees the table again", sq[0], sq[1], strconv.Itoa(tableKind))
		// Back into the bar: the chair, the chest, the table and Bo stood
		// on her four sides, and she is to walk out.
		ann.tapXY(centre(ann.box("take")))
		ann.waitPlaced("the table taken back again", sq[0], sq[1], "")
		ann.waitSlot(table, tableKind, 1)

		// With a finger, the line under the bar speaks of taps, and the
		// Split button splits the picked stack; taps merge it back.
		tapSlot := func(i int) { ann.tapXY(centre(ann.boxOf(fmt.Sprintf(`#inventory .slot[data-slot="%d"]`, i)))) }
		before := ann.totals()
		tapSlot(table)
		ann.waitPicked("the table put away by a tap", -1)
		tapSlot(chairs[0])
		ann.waitPicked("the chairs picked by a tap", chairs[0])
		ann.wait("the line under the bar speaking of taps, and the Split button", `document.getElementById("picked-text").textContent.includes("tap another slot") && !document.getElementById("split").hidden`, 5*time.Second)
		n := chairs[1] - 1
		to := ann.firstEmpty()
		ann.tapXY(centre(ann.box("split")))
		ann.waitSlot(to, chairKind, n/2)
		ann.waitSlot(chairs[0], chairKind, n-n/2)
		tapSlot(chairs[0])
		ann.waitPicked("the chairs put away by a tap", -1)
		tapSlot(to)
		ann.waitPicked("the split chairs picked by a tap", to)
		tapSlot(chairs[0])
		ann.waitSlot(chairs[0], chairKind, n)
		ann.waitSlot(to, 0, 0)
		ann.waitPicked("nothing picked after the merge by a tap", -1)
		if after := ann.totals(); after != before {
			t.Errorf("the inventory holds %q after the taps; want %q, as before", after, before)
		}
	})

	run("the chest's panel closes as she walks away, and a tree's wood comes into the bar", func(t *testing.T) {
		// Taps, as a finger goes on (a click within moments of a tap is
		// taken for the tap's own click, and ignored).
		ann.tap(chestAt[0], chestAt[1])
		ann.wait("the chest's panel again", `!document.getElementById("chest").hidden`, 10*time.Second)
		// The starter kit holds some wood (to craft with); gathering adds to it.
		wood := 0
		if i := ann.slotOf(woodKind); i >= 0 {
			if _, err := fmt.Sscanf(ann.slotCount(i), "13x%d", &wood); err != nil {
				t.Fatalf("the wood's slot says %q", ann.slotCount(i))
			}
		}
		// A free square next to a tree (east, south, west or north of it).
		spot := ann.sdk(`(() => { const v = s.view, me = s.confirmed; let best = "", bd = 1e9;
			for (const m of v.maps.values()) for (const o of m.objects) { if (o.kind !== 2) continue;
				for (const [dx, dy] of [[1, 0], [0, 1], [-1, 0], [0, -1]]) { const x = o.x + dx, y = o.y + dy;
					if (!s.walkable(x, y) || v.entityAt(x, y) !== undefined) continue; const d = Math.abs(x - me.x) + Math.abs(y - me.y);
					if (d < bd) { bd = d; best = [x, y, o.x, o.y].join(","); } } }
			return best; })()`)
		var x, y, tx, ty int
		if _, err := fmt.Sscanf(spot, "%d,%d,%d,%d", &x, &y, &tx, &ty); err != nil {
			t.Fatalf("no free square next to a tree: %q", spot)
		}
		ann.tapWalkTo(x, y)
		ann.wait("the panel closed once away from the chest", `document.getElementById("chest").hidden`, 5*time.Second)
		ann.tap(tx, ty) // a tree next to the body: acts on it, gathering
		ann.wait("wood in the bar", fmt.Sprintf(`document.querySelector('#inventory .slot[data-kind="13"]')?.dataset.count === "%d"`, wood+2), 10*time.Second)
		woodAfter = wood + 2
	})

	run("a reload finds the chair and the inventory as left", func(t *testing.T) {
		ann.do(chromedp.Reload())
		ann.wait("play after the reload", fmt.Sprintf(`!document.getElementById("play").hidden && document.getElementById("area-name").dataset.area === "%d"`, home.ID), 15*time.Second)
		ann.waitReady()
		ann.waitPlaced("the chair after the reload", at[0], at[1], strconv.Itoa(chairKind))
		ann.waitPixel("the chair drawn after the reload", at[0], at[1], chairRGB)
		ann.waitSlot(chairs[0], chairKind, chairs[1]-1)
		if got := ann.slotOf(woodKind); got < 0 || ann.slotCount(got) != fmt.Sprintf("13x%d", woodAfter) {
			t.Errorf("the wood gathered: slot %d, %q; want %d wood", got+1, ann.slotCount(max(got, 0)), woodAfter)
		}
		if got := ann.slotOf(chestKind); got >= 0 {
			t.Errorf("a chest still shows in slot %d of the bar; it stands in the home", got+1)
		}
		ann.noExceptions()
	})

	run("ann names bo a builder in her lobby, and on his next arrival his chair shows on her map", func(t *testing.T) {
		ann.do(chromedp.Click(chromedp.ID("leave")))
		open := fmt.Sprintf(`#areas button[data-builders="%d"]`, home.ID)
		ann.wait("the Builders button of her home", fmt.Sprintf(`!document.getElementById("lobby").hidden && document.querySelector(%q) !== null`, open), 10*time.Second)
		ann.do(chromedp.Click(chromedp.CSS(open)))
		ann.wait("bo listed, a plain member, and ann, the owner, with no button", `document.querySelector('#members li[data-name="bo"][data-role="member"] button') !== null && document.querySelector('#members li[data-name="ann"][data-role="owner"]') !== null && document.querySelector('#members li[data-role="owner"] button') === null`, 10*time.Second)
		ann.do(chromedp.Click(chromedp.CSS(`#members li[data-name="bo"] button`)))
		ann.wait("bo listed a builder", `document.querySelector('#members li[data-name="bo"][data-role="builder"] button') !== null`, 10*time.Second)
		if msg := ann.eval(`document.getElementById("builders-error").textContent`); msg != "" {
			t.Errorf("the Builders panel says %q", msg)
		}
		ann.join(home.ID)
		bo.do(chromedp.Click(chromedp.ID("leave")))
		bo.join(home.ID)
		bo.wait("the Build and Take buttons for bo, a builder", `!document.getElementById("place").hidden && !document.getElementById("take").hidden`, 10*time.Second)
		slot := bo.slotOf(chairKind)
		bo.pick(slot)
		sq := bo.freeNextTo()
		bo.click(sq[0], sq[1])
		bo.waitPlaced("bo's chair placed", sq[0], sq[1], strconv.Itoa(chairKind))
		bo.waitSlot(slot, chairKind, 3)
		ann.waitPlaced("ann sees bo's chair", sq[0], sq[1], strconv.Itoa(chairKind))
		ann.waitPixel("bo's chair drawn for ann", sq[0], sq[1], chairRGB)
		ann.noExceptions()
		bo.noExceptions()
	})
}
