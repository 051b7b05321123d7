package web_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gobwas/ws"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/web/internal/chrome"
)

var updateScreenshot = flag.Bool("screenshot", false, "write the screenshots of the client in play to docs/web-client.png (a desktop) and docs/web-client-phone.png (a phone), and of the console to docs/console.png and docs/console-spectate.png")

// writeScreenshot writes a screenshot taken for -screenshot.
func writeScreenshot(t *testing.T, path string, png []byte) {
	t.Helper()
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }

// startRealm runs `ley run` on free ports until the test ends.
func startRealm(t *testing.T) *ladder.Realm {
	t.Helper()
	return realmtest.Start(t, func(cfg *ladder.Config) {
		cfg.MaxHosts, cfg.PoolSize = 2, 8
		// Every sign-up and login of the test comes from one address.
		cfg.RealmArgs = []string{"--auth-burst", "100", "--resume-grace", "20s", "--close-grace", "2s"}
	})
}

// sessionHook is the page script that hands each Session the play screen
// starts to the test (web/app/src/hooks.ts), as window.__leySession, so
// that a test can read the SDK's view of the Area.
const sessionHook = `globalThis.__leyTest = Object.assign(globalThis.__leyTest ?? {}, { onSession: (s) => { globalThis.__leySession = s; } });`

// What the web client draws in the middle of a door's square and on a
// deer's body (web/app/src/render.ts, COLORS).
const (
	doorClosedRGB = "139,90,43"  // doorClosed #8b5a2b
	doorOpenRGB   = "42,29,18"   // doorOpen #2a1d12
	deerRGB       = "200,137,74" // creatures.deer #c8894a
)

// page is one player's tab on the web client.
type page struct {
	t    *testing.T
	name string
	tab  *chrome.Tab
}

func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	console := p.tab.Console()
	if len(console) > 30 {
		console = console[len(console)-30:]
	}
	ctx, cancel := context.WithTimeout(p.tab.Ctx, 5*time.Second)
	defer cancel()
	shows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`["conn", "banner-text", "toast", "pos", "area-name", "auth-error", "lobby-error"].map((id) => { const e = document.getElementById(id); return id + "=" + (e === null ? "?" : JSON.stringify(e.textContent)); }).join(" ")`))
	p.t.Fatalf("%s: %s\npage: %s\nconsole (last lines):\n  %s\nexceptions: %q", p.name, fmt.Sprintf(format, args...), shows, strings.Join(console, "\n  "), p.tab.Exceptions())
}

// do runs actions in the tab, failing the test on an error.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail("%v", err)
	}
}

// eval evaluates a JavaScript expression that gives a string.
func (p *page) eval(js string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab.Ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.fail("evaluate %s: %v", js, err)
	}
	return v
}

// wait waits until the JavaScript predicate js is true.
func (p *page) wait(what, js string, d time.Duration) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab.Ctx, d+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d))); err != nil {
		p.fail("waiting for %s: %v", what, err)
	}
}

// state is the connection state the page shows.
func (p *page) state() string {
	return p.eval(`document.getElementById("conn").dataset.state`)
}

// waitReady waits until the page shows the session ready.
func (p *page) waitReady() {
	p.t.Helper()
	p.wait("ready", `document.getElementById("conn").dataset.state === "ready" && document.getElementById("pos").dataset.x !== undefined`, 20*time.Second)
	// The tests' moves and the squares they pick go by the engine's
	// prediction and map: wait for it (it loads beside the session).
	// (A tab without sessionHook sees the engine loaded, which the page
	// gives its session at once.)
	p.wait("the engine to predict", `((s) => s === undefined ? globalThis.leyEngine !== undefined : s.predicting)(globalThis.__leySession)`, 20*time.Second)
}

// pos is the player's position as the server last confirmed it.
func (p *page) pos() [2]int {
	p.t.Helper()
	s := p.eval(`document.getElementById("pos").dataset.x + "," + document.getElementById("pos").dataset.y`)
	var xy [2]int
	if _, err := fmt.Sscanf(s, "%d,%d", &xy[0], &xy[1]); err != nil {
		p.fail("position %q: %v", s, err)
	}
	return xy
}

// sees is where this page shows the player called name, or "" when it
// does not show it standing anywhere.
func (p *page) sees(name string) string {
	return p.eval(fmt.Sprintf(`(() => { const e = document.querySelector('#players li[data-name=%q]'); return e && e.dataset.x !== undefined ? e.dataset.x + "," + e.dataset.y : ""; })()`, name))
}

// signUp signs a new account up through the page and lands in the lobby.
func (p *page) signUp(base, email, name, password string) {
	p.do(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("auth")),
		chromedp.SendKeys(chromedp.CSS(`#signup-form input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`#signup-form input[name=name]`), name),
		chromedp.SendKeys(chromedp.CSS(`#signup-form input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`#signup-form button`)),
		chromedp.WaitVisible(chromedp.ID("lobby")),
	)
}

// logIn logs in through the page and lands in the lobby.
func (p *page) logIn(base, email, password string) {
	p.do(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("auth")),
		chromedp.SendKeys(chromedp.CSS(`#login-form input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`#login-form input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`#login-form button`)),
		chromedp.WaitVisible(chromedp.ID("lobby")),
	)
}

// join joins Area area from the lobby and waits until play is ready.
func (p *page) join(area uint32) {
	p.t.Helper()
	sel := fmt.Sprintf(`#areas button[data-join="%d"]`, area)
	// A click by script: the lobby may redraw its list (its answers
	// coming in) between finding the button and a pointer's click.
	p.wait("the Join button", fmt.Sprintf(`document.querySelector(%q) !== null && !document.getElementById("lobby").hidden`, sel), 10*time.Second)
	p.eval(fmt.Sprintf(`(document.querySelector(%q).click(), "")`, sel))
	p.wait(fmt.Sprintf("play in Area %d", area), fmt.Sprintf(`!document.getElementById("play").hidden && document.getElementById("area-name").dataset.area === "%d"`, area), 10*time.Second)
	p.waitReady()
}

// step presses key and waits until the server confirms a new position;
// it reports false when the position did not change (a body in the way).
func (p *page) step(key string) bool {
	p.t.Helper()
	before := p.pos()
	p.do(chromedp.KeyEvent(key))
	ctx, cancel := context.WithTimeout(p.tab.Ctx, 3*time.Second)
	defer cancel()
	js := fmt.Sprintf(`document.getElementById("pos").dataset.x + "," + document.getElementById("pos").dataset.y !== "%d,%d"`, before[0], before[1])
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second)))
	return err == nil
}

// walk takes one step in any direction that is free, and returns the new position.
func (p *page) walk() [2]int {
	p.t.Helper()
	for _, k := range []string{kb.ArrowRight, kb.ArrowDown, kb.ArrowLeft, kb.ArrowUp} {
		if p.step(k) {
			return p.pos()
		}
	}
	p.fail("no step in any direction changed the position (%v)", p.pos())
	return [2]int{}
}

// click clicks square (x, y) of the map.
func (p *page) click(x, y int, opts ...chromedp.MouseOption) {
	p.t.Helper()
	cx, cy := p.squareXY(x, y) // once the camera stands still
	p.do(chromedp.MouseClickXY(cx, cy, opts...))
}

// walkTo walks to square (x, y) with a click (a move_to) and waits until
// the server confirms the body there. A walk the server ended short (a
// body in the way that did not move on, a creature of the arena) is sent
// again, twice at most.
func (p *page) walkTo(x, y int) {
	p.t.Helper()
	there := fmt.Sprintf(`document.getElementById("pos").dataset.x + "," + document.getElementById("pos").dataset.y === "%d,%d"`, x, y)
	for try := 0; try < 2; try++ {
		p.click(x, y)
		ctx, cancel := context.WithTimeout(p.tab.Ctx, 15*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](there, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
		cancel()
		if err == nil {
			return
		}
	}
	p.click(x, y)
	p.wait(fmt.Sprintf("the walk to (%d, %d)", x, y), there, 20*time.Second)
}

// visible reports the squares the map shows whole, within the window (a
// phone's page may be scrolled): x0 <= x < x1, y0 <= y < y1.
func (p *page) visible() (x0, y0, x1, y1 int) {
	p.t.Helper()
	s := p.eval(`(() => { const c = document.getElementById("map"); const t = +c.dataset.tile; const r = c.getBoundingClientRect();
		const ox = +c.dataset.originX, oy = +c.dataset.originY;
		const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, window.innerHeight), left = Math.max(r.left, 0), right = Math.min(r.right, window.innerWidth);
		return [Math.ceil(ox + (left - r.left) / t), Math.ceil(oy + (top - r.top) / t), Math.floor(ox + (right - r.left) / t), Math.floor(oy + (bottom - r.top) / t)].join(","); })()`)
	if _, err := fmt.Sscanf(s, "%d,%d,%d,%d", &x0, &y0, &x1, &y1); err != nil {
		p.fail("the squares shown: %q: %v", s, err)
	}
	return x0, y0, x1, y1
}

// pixel is the colour ("r,g,b") the canvas shows at (fx, fy) of square
// (x, y), fractions of a square from its top left; "not drawn yet" before
// the map's first frame (a page just loaded or reloaded).
func (p *page) pixel(x, y int, fx, fy float64) string {
	p.t.Helper()
	return p.eval(fmt.Sprintf(`(() => { const c = document.getElementById("map"); if (c.dataset.tile === undefined) return "not drawn yet"; const t = +c.dataset.tile; const dpr = window.devicePixelRatio || 1;
		const px = Math.floor((%d + %g - +c.dataset.originX) * t * dpr), py = Math.floor((%d + %g - +c.dataset.originY) * t * dpr);
		const d = c.getContext("2d").getImageData(px, py, 1, 1).data; return d[0] + "," + d[1] + "," + d[2]; })()`, x, fx, y, fy))
}

// probes are the points of a square waitPixel reads: its middle and three
// more inside it, clear of a door's frame, lines and lock, so that a name
// drawn over part of the square (the player's own, above its body) does
// not hide what the square is.
var probes = [][2]float64{{0.5, 0.5}, {0.5, 0.22}, {0.25, 0.55}, {0.62, 0.8}}

// waitPixel waits (5 s at most) until the map draws want at one of the
// probes of square (x, y): the page draws at its next animation frame,
// and its view follows the player there too, which a loaded machine
// delays.
func (p *page) waitPixel(what string, x, y int, want string) {
	p.t.Helper()
	var got []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		got = got[:0]
		for _, f := range probes {
			c := p.pixel(x, y, f[0], f[1])
			if c == want {
				return
			}
			got = append(got, c)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the next animation frame
	}
	p.t.Errorf("%s: square (%d, %d) is drawn %v; want %s", what, x, y, got, want)
}

// sdk evaluates a JavaScript expression of the page's Session
// (window.__leySession, see sessionHook) that gives a string.
func (p *page) sdk(js string) string {
	p.t.Helper()
	return p.eval(`(() => { const s = globalThis.__leySession; if (s === undefined) return "no session"; return String(` + js + `); })()`)
}

// doorState is the state of the door on (x, y) in the SDK's view: "0"
// closed, "1" open, "none" when the view has no door there.
func (p *page) doorState(x, y int) string {
	p.t.Helper()
	return p.sdk(fmt.Sprintf(`(() => { const o = s.view.objectAt(%d, %d); return o === undefined || o.kind !== 1 ? "none" : o.state; })()`, x, y))
}

// cameraInside checks that the map shows nothing past the Area's edges
// along an axis where the Area is larger than the view (the camera stops
// at the edges rather than centring the body over the void).
func (p *page) cameraInside() {
	p.t.Helper()
	got := p.eval(`(() => { const c = document.getElementById("map"), v = globalThis.__leySession.view.info, t = +c.dataset.tile;
		const ox = +c.dataset.originX, oy = +c.dataset.originY, sw = c.clientWidth / t, sh = c.clientHeight / t;
		const okX = v.w <= sw || (ox >= 0 && ox + sw <= v.w + 0.001), okY = v.h <= sh || (oy >= 0 && oy + sh <= v.h + 0.001);
		return okX && okY ? "" : "origin " + ox + "," + oy + ", view " + sw.toFixed(1) + "x" + sh.toFixed(1) + " squares, Area " + v.w + "x" + v.h; })()`)
	if got != "" {
		p.t.Errorf("%s: the map shows past the Area's edge: %s", p.name, got)
	}
}

func (p *page) noExceptions() {
	p.t.Helper()
	if ex := p.tab.Exceptions(); len(ex) > 0 {
		p.t.Errorf("%s: uncaught exceptions: %q", p.name, ex)
	}
}

const password = "correct horse battery"

// TestWebClient plays the web client in headless Chromium against a realm
// started for the test (`ley run`, whose demo village has walls, doors,
// trees, signs, deer and a portal to the arena): sign up and join the
// starter village, walk with the keyboard, a second player sees the first
// move, the player's health shows, the action key opens a door (drawn
// open, open in the SDK's view, and open for the second player) and closes
// it, the village's deer are drawn and named, the connection drops and
// the page resumes without a reload, frames no host would send leave the
// page playing, the village's portal leads into the arena without a page
// load, and a second login shows "taken over" in the first tab. It also
// takes the screenshot of docs/web-client.png (written with -screenshot).
func TestWebClient(t *testing.T) {
	b := chrome.Start(t) // first: without Chromium there is no need for a realm
	r := startRealm(t)
	base := r.URL()
	proxy := startProxy(t)
	ctx := context.Background()
	admin := dirclient.New(base)
	if _, err := admin.Login(ctx, "demo@ley.local", "demo-password"); err != nil {
		t.Fatal(err)
	}
	var demoAreas struct {
		Areas []dirclient.Area `json:"areas"`
	}
	if err := admin.Do(ctx, "GET", "/v1/areas", nil, &demoAreas); err != nil || len(demoAreas.Areas) == 0 {
		t.Fatalf("the demo's Areas: %v %+v", err, demoAreas)
	}
	var demo, arena uint32 // the demo village and arena: the village's portal leads to the arena
	for _, a := range demoAreas.Areas {
		if a.Template == "village" && demo == 0 {
			demo = a.ID
		}
		if a.Template == "arena" && arena == 0 {
			arena = a.ID
		}
	}
	if demo == 0 || arena == 0 {
		t.Fatalf("the demo's Areas have no village or no arena: %+v", demoAreas.Areas)
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	adaEmail := "ada-" + stamp + "@t.local"

	ada := &page{t: t, name: "ada", tab: b.Tab(t, proxy.hook("ada"), sessionHook)}
	bo := &page{t: t, name: "bo", tab: b.Tab(t, sessionHook)}
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			ada.t, bo.t = t, t
			f(t)
		}) {
			t.FailNow()
		}
	}

	step("sign up, join, walk with the keyboard", func(t *testing.T) {
		ada.signUp(base, adaEmail, "ada", password)
		ada.join(demo)
		if got := ada.sees("ada"); got == "" {
			t.Errorf("ada's page does not show ada among the players here")
		}
		from := ada.pos()
		to := ada.walk()
		if d := max(abs(to[0]-from[0]), abs(to[1]-from[1])); d != 1 {
			t.Errorf("one step moved ada from %v to %v", from, to)
		}
		if got := ada.eval(`document.getElementById("rtt").textContent`); !strings.HasPrefix(got, "rtt ") {
			t.Errorf("the round-trip time shows %q", got)
		}
	})

	step("a second player sees the first move", func(t *testing.T) {
		bo.signUp(base, "bo-"+stamp+"@t.local", "bo", password)
		bo.join(demo)
		at := ada.pos()
		want := fmt.Sprintf("%d,%d", at[0], at[1])
		bo.wait("bo sees ada where ada is", fmt.Sprintf(`(() => { const e = document.querySelector('#players li[data-name="ada"]'); return e !== null && e.dataset.x + "," + e.dataset.y === %q; })()`, want), 10*time.Second)
		to := ada.walk()
		want = fmt.Sprintf("%d,%d", to[0], to[1])
		bo.wait("bo sees ada's step", fmt.Sprintf(`(() => { const e = document.querySelector('#players li[data-name="ada"]'); return e !== null && e.dataset.x + "," + e.dataset.y === %q; })()`, want), 10*time.Second)
	})

	step("the player's health shows", func(t *testing.T) {
		ada.wait("the health in the HUD", `!document.getElementById("hp").hidden && document.getElementById("hp").dataset.max !== undefined`, 10*time.Second)
		hp := ada.eval(`document.getElementById("hp").dataset.hp + "/" + document.getElementById("hp").dataset.max`)
		want := ada.sdk(`s.self.hp + "/" + s.view.info.playerHp`)
		if hp != want || want != "100/100" {
			t.Errorf("the HUD shows health %q; the SDK's view says %q; want 100/100 (the village's player_hp)", hp, want)
		}
		if got := ada.eval(`document.getElementById("hp-text").textContent`); got != "HP "+want {
			t.Errorf("the health reads %q; want %q", got, "HP "+want)
		}
	})

	step("the action key opens a door, and the other player sees it open", func(t *testing.T) {
		// The smith's door: a closed door in the south wall of the house
		// east of the square, at (41, 20), with its path below it.
		const dx, dy = 41, 20
		if got := ada.doorState(dx, dy); got != "0" {
			t.Fatalf("ada's view of the smith's door: %q; want 0 (closed)", got)
		}
		ada.walkTo(dx, dy+1)
		ada.waitPixel("ada's page draws the closed door", dx, dy, doorClosedRGB)
		// A step into the closed door turns ada to face it (and is refused BLOCKED).
		ada.do(chromedp.KeyEvent(kb.ArrowUp))
		ada.wait("ada faces north", `globalThis.__leySession.confirmed.facing === 0`, 5*time.Second)
		if got := ada.pos(); got != [2]int{dx, dy + 1} {
			t.Fatalf("ada walked through a closed door: at %v", got)
		}
		// The HUD follows at the page's next animation frame.
		ada.wait("the page names the faced closed door", `document.getElementById("facing").textContent.includes("closed door")`, 5*time.Second)
		ada.do(chromedp.KeyEvent(" "))
		ada.wait("the door open in ada's view", fmt.Sprintf(`globalThis.__leySession.view.objectAt(%d, %d).state === 1`, dx, dy), 5*time.Second)
		ada.waitPixel("ada's page draws the door open", dx, dy, doorOpenRGB)
		bo.wait("the door open in bo's view", fmt.Sprintf(`globalThis.__leySession.view.objectAt(%d, %d).state === 1`, dx, dy), 5*time.Second)
		bo.waitPixel("bo's page draws the door open", dx, dy, doorOpenRGB)
		// The open door lets ada through; back out, a Shift-click on it
		// (an action on the square next to ada) closes it again.
		if !ada.step(kb.ArrowUp) {
			t.Fatalf("ada did not step into the open doorway (at %v)", ada.pos())
		}
		if !ada.step(kb.ArrowDown) {
			t.Fatalf("ada did not step back out of the doorway (at %v)", ada.pos())
		}
		ada.click(dx, dy, chromedp.ButtonModifiers(chromedp.ModifierShift))
		// Each page learns it from its own snapshot: bo's may come first.
		ada.wait("the door closed again in ada's view", fmt.Sprintf(`globalThis.__leySession.view.objectAt(%d, %d).state === 0`, dx, dy), 5*time.Second)
		bo.wait("the door closed again in bo's view", fmt.Sprintf(`globalThis.__leySession.view.objectAt(%d, %d).state === 0`, dx, dy), 5*time.Second)
		ada.noExceptions()
		bo.noExceptions()
	})

	step("the village's deer are drawn and named; screenshot", func(t *testing.T) {
		// Up the north road, beside the meadow where deer graze.
		ada.walkTo(31, 12)
		ada.cameraInside()
		// A deer's body is drawn in its kind's colour: find one on the
		// canvas, point at it, and the page names it from the SDK's view
		// (area_info's creature kinds and the entity's look).
		find := fmt.Sprintf(`(() => { const c = document.getElementById("map"); const w = c.width, h = c.height; const dpr = window.devicePixelRatio || 1;
			const d = c.getContext("2d").getImageData(0, 0, w, h).data; const r = c.getBoundingClientRect();
			const is = (x, y) => { const i = (y * w + x) * 4; return d[i] + "," + d[i + 1] + "," + d[i + 2] === %q; };
			for (let y = 2; y < h - 2; y += 2) for (let x = 2; x < w - 2; x += 2) {
				if (is(x, y) && is(x - 2, y) && is(x + 2, y) && is(x, y - 2) && is(x, y + 2)) return (r.left + x / dpr) + "," + (r.top + y / dpr);
			}
			return ""; })()`, deerRGB)
		named := false
		for deadline := time.Now().Add(40 * time.Second); !named && time.Now().Before(deadline); {
			at := ada.eval(find)
			var x, y float64
			if _, err := fmt.Sscanf(at, "%g,%g", &x, &y); err != nil {
				time.Sleep(250 * time.Millisecond) // polling the canvas until a deer wanders into the picture
				continue
			}
			ada.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
			ctx, cancel := context.WithTimeout(ada.tab.Ctx, 3*time.Second)
			_, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("tooltip").hidden && document.getElementById("tooltip").textContent.startsWith("deer 15/15")`,
				chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Second)))
			cancel()
			named = err == nil
		}
		if !named {
			deer := ada.sdk(`s.drawables().filter((e) => e.creature === "deer").map((e) => e.x.toFixed(1) + "," + e.y.toFixed(1)).join(" ")`)
			ada.fail("no deer drawn and named on ada's map (the SDK's view has deer at %q; ada at %v)", deer, ada.pos())
		}
		if kinds := ada.sdk(`s.view.info.creatures.map((c) => c.name + ":" + c.hp).join(",")`); !strings.Contains(kinds, "deer:15") {
			t.Errorf("the village's creature kinds %q; want deer of 15 hp among them", kinds)
		}
		shot, err := chromedp.Run(ada.tab.Ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatalf("the screenshot is no PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 600 {
			t.Errorf("screenshot of %v; want the 1280x800 window", b)
		}
		if *updateScreenshot {
			writeScreenshot(t, "../docs/web-client.png", shot)
		}
	})

	step("the connection drops and the page resumes without a reload", func(t *testing.T) {
		ada.eval(`(window.__sameDocument = "yes", "")`)
		at := ada.pos()
		before := proxy.count("ada")
		for _, c := range proxy.live("ada") {
			c.close()
		}
		for deadline := time.Now().Add(10 * time.Second); proxy.count("ada") <= before; {
			if time.Now().After(deadline) {
				t.Fatalf("no new connection within 10 s of the drop (state %q)", ada.state())
			}
			time.Sleep(20 * time.Millisecond) // polling the proxy
		}
		ada.waitReady()
		if got := proxy.last("ada").first(); got != 2 {
			t.Errorf("the new connection began with message type %d; want 2 (resume)", got)
		}
		if got := ada.eval(`window.__sameDocument ?? "reloaded"`); got != "yes" {
			t.Errorf("the page was reloaded")
		}
		if got := ada.pos(); got != at {
			t.Errorf("after the resume ada stands on %v; want %v", got, at)
		}
		ada.walk()
	})

	step("frames no host would send leave the page playing", func(t *testing.T) {
		conns := proxy.live("ada")
		if len(conns) != 1 {
			t.Fatalf("%d live connections of ada; want 1", len(conns))
		}
		bad := []ws.Frame{
			ws.NewBinaryFrame([]byte{0xff, 0x00, 0x13}),                                     // not CBOR
			ws.NewBinaryFrame([]byte{0x83, 0x02, 0x16, 0x80}),                               // type 22
			ws.NewBinaryFrame([]byte{0x83, 0x02, 0x0c, 0x84, 0x05, 0x00, 0x00, 0x41, 0x13}), // a record op 0x13
			ws.NewBinaryFrame([]byte{0x83, 0x02, 0x0b, 0x82, 0x1a, 0x7f, 0xff, 0xff, 0xff, 0x0f}),
			ws.NewTextFrame([]byte("hello?")),
		}
		before := ada.eval(`document.getElementById("dropped").textContent`)
		if before != "" {
			t.Fatalf("messages dropped before any bad frame: %q", before)
		}
		for _, f := range bad {
			if err := conns[0].inject(f); err != nil {
				t.Fatal(err)
			}
		}
		ada.wait("the bad frames dropped", fmt.Sprintf(`document.getElementById("dropped").textContent.startsWith("%d bad messages")`, len(bad)), 10*time.Second)
		if s := ada.state(); s != "ready" {
			t.Errorf("state %q after the bad frames; want ready", s)
		}
		ada.walk()
		logged := 0
		for _, l := range ada.tab.Console() {
			if strings.Contains(l, "message dropped") {
				logged++
			}
		}
		if logged < len(bad) {
			t.Errorf("%d drops logged to the console; want %d", logged, len(bad))
		}
		ada.noExceptions()
	})

	step("the village's portal leads into the arena without a page load", func(t *testing.T) {
		// The portal is the east end of the road, (62, 23): walk the road
		// there a screenful at a time, a click each.
		const px, py = 62, 23
		ada.eval(`(window.__sameDocument = "yes", "")`)
		if got := ada.sdk(`(() => { const o = s.view.objectAt(62, 23); return o === undefined ? "unseen" : o.kind; })()`); got != "6" && got != "unseen" {
			t.Errorf("the SDK's view has object kind %s on the village's portal square; want 6 (portal)", got)
		}
		// The village builds on the plots its map marks, and ada carries
		// her starter kit in.
		if got := ada.sdk(`s.plots.length`); got != "3" {
			t.Errorf("the village tells %s plots; want its map's 3", got)
		}
		carried := ada.sdk(`s.inventory.reduce((n, st) => n + st.count, 0)`)
		if carried == "0" || ada.sdk(`s.stash.length`) != "0" {
			t.Fatalf("ada carries %s items and stashes %s stacks in the village; want her kit carried", carried, ada.sdk(`s.stash.length`))
		}
		ada.walkTo(32, py)
		crossed := fmt.Sprintf(`document.getElementById("area-name").dataset.area === "%d"`, arena)
		for try := 0; ; try++ {
			_, _, x1, _ := ada.visible()
			x := min(px, x1-2)
			ada.click(x, py)
			js := fmt.Sprintf(`%s || +document.getElementById("pos").dataset.x === %d`, crossed, x)
			ctx, cancel := context.WithTimeout(ada.tab.Ctx, 20*time.Second)
			_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second)))
			cancel()
			if err == nil && x == px {
				break
			}
			if err == nil {
				ada.cameraInside() // the road's east end is the village's edge
			}
			if try == 6 {
				ada.fail("six clicks along the road did not reach the portal (at %v)", ada.pos())
			}
		}
		ada.wait("the crossing to the arena", crossed, 20*time.Second)
		ada.waitReady()
		if got := ada.sdk(`s.view.info.kind + " " + s.view.info.w + "x" + s.view.info.h`); got != "arena 96x96" {
			t.Errorf("ada's view after the portal: %q; want the arena, 96x96", got)
		}
		// The village's portal names no arrival square: the arena's spawn ring.
		if got := ada.pos(); got[0] < 42 || got[0] > 53 || got[1] < 42 || got[1] > 53 {
			t.Errorf("ada landed on %v; want the arena's ring, around (47, 47)", got)
		}
		if got := ada.eval(`window.__sameDocument ?? "reloaded"`); got != "yes" {
			t.Errorf("the page was reloaded")
		}
		// The arena lets nothing in: what she carried waits in her stash,
		// and the page says so under the inventory bar.
		if got := ada.sdk(`s.inventory.reduce((n, st) => n + st.count, 0)`); got != "0" {
			t.Errorf("ada carries %s items in the arena; want none", got)
		}
		if got := ada.sdk(`s.stash.reduce((n, st) => n + st.count, 0)`); got != carried {
			t.Errorf("ada's stash holds %s items; want the %s she carried", got, carried)
		}
		ada.wait("the stash told under the bar", fmt.Sprintf(`!document.getElementById("stash").hidden && document.getElementById("stash").dataset.count === "%s"`, carried), 5*time.Second)
		if got := ada.sdk(`s.plots.length`); got != "0" {
			t.Errorf("the arena tells %s plots; want none", got)
		}
		ada.walk()
		ada.noExceptions()
	})

	step("in the arena a player killed by another comes back with full health, and the page says so", func(t *testing.T) {
		// bo joins the arena (a starter Area) from the lobby, stands next
		// to ada and attacks her (the arena allows PvP) until she falls.
		bo.do(chromedp.Click(chromedp.ID("leave")), chromedp.WaitVisible(chromedp.ID("lobby")))
		bo.join(arena)
		next := bo.sdk(`(() => { const v = s.view; const a = [...v.entities.values()].find((e) => v.players.get(e.id) === "ada");
			if (a === undefined) return "";
			for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [-1, -1], [1, -1], [-1, 1]]) {
				const x = a.x + dx, y = a.y + dy;
				if (s.walkable(x, y) && v.entityAt(x, y, s.entity) === undefined) return x + "," + y + "," + a.x + "," + a.y;
			}
			return ""; })()`)
		var bx, by, ax, ay int
		if _, err := fmt.Sscanf(next, "%d,%d,%d,%d", &bx, &by, &ax, &ay); err != nil {
			seen := bo.sdk(`[...s.view.entities.values()].map((e) => (s.view.players.get(e.id) ?? e.kind) + "@" + e.x + "," + e.y).join(" ")`)
			bo.fail("no free square next to ada in bo's view of the arena: %q (ada on %v, bo on %v; bo sees %s)", next, ada.pos(), bo.pos(), seen)
		}
		if got := ada.pos(); got != [2]int{ax, ay} {
			t.Fatalf("bo sees ada on (%d, %d); ada stands on %v", ax, ay, got)
		}
		if got := bo.pos(); got != [2]int{bx, by} {
			bo.walkTo(bx, by)
		}
		// A Shift-click on ada's square turns bo to her and attacks; Space
		// attacks the faced square again.
		bo.click(ax, ay, chromedp.ButtonModifiers(chromedp.ModifierShift))
		ada.wait("ada hurt", `+document.getElementById("hp").dataset.hp < 100`, 5*time.Second)
		if got := ada.eval(`document.getElementById("hp").dataset.level + " " + document.getElementById("hp-text").textContent`); !strings.HasPrefix(got, "good HP 92/100") {
			t.Errorf("ada's health after one blow shows %q; want good HP 92/100 (8 damage)", got)
		}
		killed := `!document.getElementById("flash").hidden && document.getElementById("flash").textContent.includes("killed")`
		for hits := 1; ada.eval(`String(`+killed+`)`) != "true"; hits++ {
			if hits > 30 {
				ada.fail("30 blows and ada's page shows no death (hp %s)", ada.eval(`document.getElementById("hp").dataset.hp`))
			}
			bo.do(chromedp.KeyEvent(" "))
			time.Sleep(250 * time.Millisecond) // one blow a step period (the arena's is 166 ms)
		}
		ada.wait("ada back at full health", `document.getElementById("hp").dataset.hp === "100"`, 5*time.Second)
		if got := ada.pos(); got[0] < 44 || got[0] > 51 || got[1] < 44 || got[1] > 51 {
			t.Errorf("ada came back on %v; want the arena's spawn ring, around (47, 47)", got)
		}
		ada.noExceptions()
		bo.noExceptions()
	})

	step("a second login shows taken over in the first tab", func(t *testing.T) {
		again := &page{t: t, name: "ada again", tab: b.Tab(t)}
		again.logIn(base, adaEmail, password)
		area := ada.eval(`document.getElementById("area-name").dataset.area`)
		id, err := strconv.ParseUint(area, 10, 32)
		if err != nil {
			t.Fatalf("ada's Area %q: %v", area, err)
		}
		again.join(uint32(id))
		ada.wait("taken over", `document.getElementById("banner").hidden === false && document.getElementById("banner-text").textContent.includes("taken over")`, 10*time.Second)
		if s := ada.state(); s != "ended" {
			t.Errorf("the first tab's state %q; want ended", s)
		}
		if got := ada.eval(`document.getElementById("rtt").textContent`); got != "" {
			t.Errorf("the ended session still shows a round-trip time: %q", got)
		}
		n := proxy.count("ada")
		again.walk() // a few round trips of real time, in which a reconnect would start
		if proxy.count("ada") != n || ada.state() != "ended" {
			t.Errorf("the first tab reconnected after it was taken over")
		}
		// The other tab's login ended this one's: Play here says so and
		// asks for the login, with the email filled in.
		ada.eval(`(document.getElementById("banner-action").click(), "")`)
		ada.wait("the login asked for", `!document.getElementById("auth").hidden && document.getElementById("auth-error").textContent.includes("new login")`, 10*time.Second)
		if got := ada.eval(`document.querySelector("#login-form input[name=email]").value + "|" + document.querySelector("#login-form input[name=password]").value`); got != adaEmail+"|" {
			t.Errorf("the login form after Play here holds %q; want the email and no password", got)
		}
		again.noExceptions()
		ada.noExceptions()
	})

	step("a full realm and a closing one are said in plain words", func(t *testing.T) {
		if err := admin.SetRealm(ctx, dirclient.Realm{Open: true, Cap: 1, NewPlayersWelcome: true}); err != nil {
			t.Fatal(err)
		}
		cy := &page{t: t, name: "cy", tab: b.Tab(t)}
		cy.signUp(base, "cy-"+stamp+"@t.local", "cy", password)
		cy.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#areas button[data-join="%d"]`, demo))))
		cy.wait("realm full", `!document.getElementById("banner").hidden && document.getElementById("banner-text").textContent.startsWith("The realm is full")`, 10*time.Second)
		// While it waits to try again, the banner counts down and the map
		// says it is not live.
		countdown := `(() => { const m = /Trying again in ([0-9.]+) s/.exec(document.getElementById("banner-text").textContent); return m === null ? "" : m[1]; })()`
		cy.wait("a countdown", countdown+` !== ""`, 10*time.Second)
		first := cy.eval(countdown)
		cy.wait("the countdown moving", fmt.Sprintf(`(() => { const v = %s; return v !== "" && v !== %q; })()`, countdown, first), 5*time.Second)
		if got := cy.eval(`document.getElementById("view").dataset.live + "|" + document.getElementById("offline").textContent`); !strings.HasPrefix(got, "false|") || got == "false|" {
			t.Errorf("the map while no session is live: %q; want it marked not live, with words", got)
		}
		// Closing the door drains the realm: bo's Area closes after the
		// close grace, and joining again is refused.
		if err := admin.SetRealm(ctx, dirclient.Realm{Open: false, Cap: 1, NewPlayersWelcome: true}); err != nil {
			t.Fatal(err)
		}
		bo.wait("the Area closing", `!document.getElementById("banner").hidden && document.getElementById("banner-text").textContent.startsWith("This Area is closing")`, 10*time.Second)
		bo.wait("the realm closed", `document.getElementById("conn").dataset.state === "ended" && document.getElementById("banner-text").textContent.includes("realm is closed")`, 20*time.Second)
		bo.noExceptions()
		cy.noExceptions()
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
