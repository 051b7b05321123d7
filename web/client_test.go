package web_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gobwas/ws"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/web/internal/chrome"
)

var updateScreenshot = flag.Bool("screenshot", false, "write the screenshot of the client in play to docs/web-client.png")

// binDir holds the ley binary the client tests build once.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ley-web-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// leyBinary builds cmd/ley once for the package's tests.
var leyBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "ley")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/ley").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build ley: %v\n%s", err, out)
	}
	return bin, nil
})

// startRealm runs `ley run` on free ports until the test ends.
func startRealm(t *testing.T) *ladder.Realm {
	t.Helper()
	bin, err := leyBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := ladder.QuickConfig()
	cfg.Binary = bin
	cfg.MaxHosts, cfg.PoolSize = 2, 8
	// Every sign-up and login of the test comes from one address.
	cfg.RealmArgs = []string{"--auth-burst", "100", "--resume-grace", "20s", "--close-grace", "2s"}
	r, err := ladder.StartRealm(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

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
	shows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`["conn", "banner-text", "pos", "area-name", "auth-error", "lobby-error"].map((id) => { const e = document.getElementById(id); return id + "=" + (e === null ? "?" : JSON.stringify(e.textContent)); }).join(" ")`))
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
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
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
func (p *page) click(x, y int) {
	p.t.Helper()
	xy := p.eval(fmt.Sprintf(`(() => { const c = document.getElementById("map"); const r = c.getBoundingClientRect();
		const t = +c.dataset.tile; return (r.left + (%d + 0.5 - +c.dataset.originX) * t) + "," + (r.top + (%d + 0.5 - +c.dataset.originY) * t); })()`, x, y))
	var cx, cy float64
	if _, err := fmt.Sscanf(xy, "%g,%g", &cx, &cy); err != nil {
		p.fail("square (%d, %d) on the canvas: %q", x, y, xy)
	}
	p.do(chromedp.MouseClickXY(cx, cy))
}

func (p *page) noExceptions() {
	p.t.Helper()
	if ex := p.tab.Exceptions(); len(ex) > 0 {
		p.t.Errorf("%s: uncaught exceptions: %q", p.name, ex)
	}
}

const password = "correct horse battery"

// TestWebClient plays the web client in headless Chromium against a realm
// started for the test (`ley run`): sign up and join the starter village,
// walk with the keyboard, a second player sees the first move, the
// connection drops and the page resumes without a reload, frames no host
// would send leave the page playing, a portal crossing lands in the next
// Area without a page load, and a second login shows "taken over" in the
// first tab. It also takes the screenshot of docs/web-client.png (written
// with -screenshot).
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
	var village struct {
		Areas []dirclient.Area `json:"areas"`
	}
	if err := admin.Do(ctx, "GET", "/v1/areas", nil, &village); err != nil || len(village.Areas) == 0 {
		t.Fatalf("the demo's Areas: %v %+v", err, village)
	}
	demo := village.Areas[0].ID
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	adaEmail := "ada-" + stamp + "@t.local"

	ada := &page{t: t, name: "ada", tab: b.Tab(t, proxy.hook("ada"))}
	bo := &page{t: t, name: "bo", tab: b.Tab(t)}
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

	step("screenshot of the client in play", func(t *testing.T) {
		bo.walk()
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
			if err := os.WriteFile("../docs/web-client.png", shot, 0o644); err != nil {
				t.Fatal(err)
			}
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
			ws.NewBinaryFrame([]byte{0x83, 0x02, 0x15, 0x80}),                               // type 21
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

	step("a portal crossing lands in the next Area without a page load", func(t *testing.T) {
		// Two Areas of the admin's, the first with a column of portals at
		// x = 20 leading to x = 4 of the second; ada redeems an invite to
		// each in the lobby.
		var ids [2]uint32
		for i, name := range []string{"Portal West", "Portal East"} {
			a, err := admin.CreateArea(ctx, name+" "+stamp, "village", 32, 32)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = a.ID
		}
		var portals []dirclient.Portal
		for y := range 32 {
			portals = append(portals, dirclient.Portal{X: 20, Y: int32(y), ToArea: ids[1], ToX: 4, ToY: int32(y)})
		}
		if err := admin.SetPortals(ctx, ids[0], portals); err != nil {
			t.Fatal(err)
		}
		ada.do(chromedp.Click(chromedp.ID("leave")), chromedp.WaitVisible(chromedp.ID("lobby")))
		for _, id := range ids {
			code, err := admin.Invite(ctx, id, 1)
			if err != nil {
				t.Fatal(err)
			}
			ada.do(
				chromedp.SendKeys(chromedp.CSS(`#redeem-form input[name=code]`), code),
				chromedp.Click(chromedp.CSS(`#redeem-form button`)),
				chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#areas button[data-join="%d"]`, id))),
			)
		}
		ada.join(ids[0])
		ada.eval(`(window.__sameDocument = "yes", "")`)
		at := ada.pos()
		if at[0] >= 20 {
			t.Fatalf("ada arrived at %v, past the portals at x = 20", at)
		}
		// Walk onto a portal with a click (a move_to); a wanderer on the
		// way may block one path, so up to three.
		crossed := fmt.Sprintf(`document.getElementById("area-name").dataset.area === "%d"`, ids[1])
		for try := 0; ; try++ {
			ada.click(20, (at[1]+try)%32)
			ctx, cancel := context.WithTimeout(ada.tab.Ctx, 10*time.Second)
			_, err := chromedp.Run(ctx, chromedp.Poll[bool](crossed, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(8*time.Second)))
			cancel()
			if err == nil {
				break
			}
			if try == 2 {
				ada.fail("three clicks on portals did not cross (at %v)", ada.pos())
			}
		}
		ada.waitReady()
		if got := ada.pos(); got[0] != 4 {
			t.Errorf("ada landed on %v; want a square of x = 4, where the portals lead", got)
		}
		if got := ada.eval(`window.__sameDocument ?? "reloaded"`); got != "yes" {
			t.Errorf("the page was reloaded")
		}
		ada.walk()
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
		n := proxy.count("ada")
		again.walk() // a few round trips of real time, in which a reconnect would start
		if proxy.count("ada") != n || ada.state() != "ended" {
			t.Errorf("the first tab reconnected after it was taken over")
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
