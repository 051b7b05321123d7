package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/web/internal/chrome"
)

// consoleLogIn opens the console and logs in through its form.
func (p *page) consoleLogIn(base, email, password string) {
	p.t.Helper()
	p.do(
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(chromedp.ID("auth")),
		chromedp.SendKeys(chromedp.CSS(`#login-form input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`#login-form input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`#login-form button`)),
	)
}

// setField sets a field of the door form as a person typing would (the
// value, then an input event).
func (p *page) setField(name, value string) {
	p.t.Helper()
	p.setIn("door", name, value)
}

// setIn sets the field name of the console's form id to value, as typing would.
func (p *page) setIn(form, name, value string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(() => { const e = document.querySelector('#%s [name=%q]'); e.value = %q; e.dispatchEvent(new Event("input", { bubbles: true })); return ""; })()`, form, name, value))
}

// adminFetches counts the console's requests to the admin routes at or after ms (performance.now()).
func (p *page) adminFetches(since float64) int {
	p.t.Helper()
	n, err := strconv.Atoi(p.eval(fmt.Sprintf(`String(globalThis.__leyFetches.filter((f) => f[0].startsWith("/v1/admin/") && f[1] >= %f).length)`, since)))
	if err != nil {
		p.fail("count the fetches: %v", err)
	}
	return n
}

func (p *page) now() float64 {
	p.t.Helper()
	v, err := strconv.ParseFloat(p.eval(`String(performance.now())`), 64)
	if err != nil {
		p.fail("performance.now: %v", err)
	}
	return v
}

// TestConsole drives the operator's console (/console) in headless
// Chromium against a realm started for the test, sampling every second:
// a non-admin who logs in is refused in plain words; the demo admin sees
// the door, and its live view shows the host and the Area a player joins;
// an Area's detail shows its owner, template and members, and spectating
// it draws a player's steps (following her, with the interest cells and
// her own view as overlays) while a non-admin is refused both; a cap
// saved from the console refuses the next player REALM_FULL; an API
// refusal (a message over 1024 bytes) is said in plain words and changes
// nothing; closing asks first, and closing from it drains a player's
// page; the charts draw the director's samples as
// SVG paths; the page fits a phone; the live view stops asking while the
// page is hidden and after a log out. With -screenshot it writes
// docs/console.png.
func TestConsole(t *testing.T) {
	b := chrome.Start(t) // first: without Chromium there is no need for a realm
	r := realmtest.Start(t, func(cfg *ladder.Config) {
		cfg.MaxHosts, cfg.PoolSize = 2, 8
		cfg.RealmArgs = []string{"--auth-burst", "100", "--sample-every", "1s", "--close-grace", "2s"}
	})
	base := r.URL()
	ctx := t.Context()
	_, village, _ := demoAreas(t, base)
	// admin checks what the console shows against the API, with the
	// console's own session: a login ends the account's other sessions, so
	// a second login of the demo admin would end the console's.
	admin := dirclient.New(base)
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	op := &page{t: t, name: "operator", tab: b.Tab(t, fetchHook)}
	run := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			op.t = t
			f(t)
		}) {
			t.FailNow()
		}
	}

	run("the director serves the console under the page's policy", func(t *testing.T) {
		resp, err := http.Get(base + "/console")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /console = %d %s; want 200, HTML", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET /console's Content-Security-Policy = %q", csp)
		}
	})

	run("a non-admin is refused in plain words", func(t *testing.T) {
		nia := &page{t: t, name: "nia", tab: b.Tab(t, fetchHook)}
		email := "nia-" + stamp + "@t.local"
		if _, err := dirclient.New(base).Register(ctx, email, password, "nia"); err != nil {
			t.Fatal(err)
		}
		nia.consoleLogIn(base, email, password)
		nia.wait("the refusal", `!document.getElementById("refused").hidden`, 10*time.Second)
		if got := nia.eval(`document.getElementById("refused-text").textContent`); !strings.Contains(got, "not an admin") || !strings.Contains(got, "FORBIDDEN") {
			t.Errorf("the refusal reads %q; want it to say the account is not an admin (FORBIDDEN)", got)
		}
		if got := nia.eval(`String(document.getElementById("console").hidden) + " " + document.querySelectorAll("#hosts tbody tr").length`); got != "true 0" {
			t.Errorf("the console behind the refusal: hidden, host rows = %q; want true 0", got)
		}
		nia.noExceptions()
	})

	run("an admin opens the console and sees the door", func(t *testing.T) {
		op.consoleLogIn(base, "demo@ley.local", "demo-password")
		op.wait("the console", `!document.getElementById("console").hidden && document.getElementById("rail").textContent !== ""`, 10*time.Second)
		admin.Token = op.eval(`sessionStorage.getItem("ley.token") ?? ""`)
		info, err := admin.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := op.eval(`(() => { const f = document.getElementById("door"); return [f.open.checked, f.cap.value, f.new_players_welcome.checked, f.message.value, document.getElementById("rail").textContent, document.getElementById("door-state").textContent].join("|"); })()`)
		want := fmt.Sprintf("%t|%d|%t|%s|%v hosts|open", info.Open, info.Cap, info.NewPlayersWelcome, info.Message, info.Knobs["process_rail"])
		if got != want {
			t.Errorf("the door shows %q; the realm says %q", got, want)
		}
	})

	pia := &page{t: t, name: "pia", tab: b.Tab(t, sessionHook)}
	run("the live view shows the host and the Area a player joins", func(t *testing.T) {
		pia.t = t
		pia.signUp(base, "pia-"+stamp+"@t.local", "pia", password)
		pia.join(village)
		row := fmt.Sprintf(`document.querySelector('#live-areas tbody tr[data-area="%d"]')`, village)
		op.wait("the village live, with pia", row+` !== null && +`+row+`.dataset.players >= 1`, 10*time.Second)
		hosts, err := admin.Hosts(ctx)
		if err != nil || len(hosts) == 0 {
			t.Fatalf("GET /v1/admin/hosts: %v %+v", err, hosts)
		}
		live, err := admin.LiveAreas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var on uint32
		for _, a := range live {
			if a.Area == village {
				on = a.Host
			}
		}
		var hostName, wsURL string
		for _, h := range hosts {
			if h.ID == on {
				hostName, wsURL = h.Name, h.WSURL
			}
		}
		hrow := fmt.Sprintf(`document.querySelector('#hosts tbody tr[data-host="%d"]')`, on)
		op.wait("the village's host", hrow+` !== null`, 10*time.Second)
		if got := op.eval(hrow + `.cells[0].textContent + " " + ` + hrow + `.cells[1].textContent`); got != hostName+" "+wsURL {
			t.Errorf("the host row shows %q; the realm says %q", got, hostName+" "+wsURL)
		}
		if got := op.eval(row + `.cells[2].textContent + " " + ` + row + `.cells[5].textContent`); got != hostName+" live" {
			t.Errorf("the village's row says host and state %q; want %q", got, hostName+" live")
		}
	})

	run("an admin reads an Area's detail and spectates it: a player moving is drawn moving", func(t *testing.T) {
		detail, err := admin.AreaDetail(ctx, village)
		if err != nil {
			t.Fatal(err)
		}
		row := fmt.Sprintf(`document.querySelector('#live-areas tbody tr[data-area="%d"]')`, village)
		op.eval(`(` + row + `.querySelector("button[data-detail]").click(), "")`)
		op.wait("the village's detail", fmt.Sprintf(`!document.getElementById("area-detail").hidden && document.getElementById("area-detail").dataset.area === "%d"`, village), 10*time.Second)
		got := op.eval(`document.getElementById("area-summary").dataset.owner + "|" + document.getElementById("area-summary").dataset.template + "|" + document.querySelectorAll("#area-members tbody tr").length`)
		if want := fmt.Sprintf("%d|%s|%d", detail.Owner, detail.Template, len(detail.Members)); got != want || len(detail.Members) == 0 {
			t.Errorf("the detail shows owner|template|members %q; the API says %q", got, want)
		}

		op.eval(`(` + row + `.querySelector("button[data-spectate]").click(), "")`)
		op.wait("the spectator watching", `document.getElementById("spectate-state").dataset.state === "watching"`, 15*time.Second)
		pia.wait("pia's entity", `globalThis.__leySession !== undefined && globalThis.__leySession.entity > 0`, 10*time.Second)
		ent := pia.eval(`String(globalThis.__leySession.entity)`)
		op.wait("pia in the Follow list", fmt.Sprintf(`document.querySelector('#follow option[value="%s"]') !== null`, ent), 10*time.Second)
		op.eval(fmt.Sprintf(`(() => { const s = document.getElementById("follow"); s.value = %q; s.dispatchEvent(new Event("change")); return ""; })()`, ent))
		drawn := `document.getElementById("spectate-canvas").dataset.followX + "," + document.getElementById("spectate-canvas").dataset.followY`
		at := pia.pos()
		op.wait("pia drawn where she stands", fmt.Sprintf(`%s === "%d,%d"`, drawn, at[0], at[1]), 10*time.Second)
		to := pia.walk()
		op.wait("pia drawn where she stepped", fmt.Sprintf(`%s === "%d,%d"`, drawn, to[0], to[1]), 10*time.Second)

		// The overlays: the interest cells, and what pia sees (her point of
		// view, sent by the host in place of the whole Area).
		op.eval(`(() => { for (const id of ["ov-cells", "ov-pov"]) { const e = document.getElementById(id); e.checked = true; e.dispatchEvent(new Event("change")); } return ""; })()`)
		back := pia.walk()
		op.wait("pia drawn in her own view", fmt.Sprintf(`%s === "%d,%d"`, drawn, back[0], back[1]), 10*time.Second)
		if got := op.eval(`document.getElementById("spectate-state").dataset.state + " " + document.getElementById("ov-pov").checked`); got != "watching true" {
			t.Errorf("the spectator after the overlays: %q; want watching, the player's view on", got)
		}
		if *updateScreenshot {
			op.do(chromedp.ScrollIntoView(chromedp.ID("spectate")))
			shot, err := chromedp.Run(op.tab.Ctx, chromedp.Screenshot(chromedp.ID("spectate")))
			if err != nil {
				t.Fatal(err)
			}
			writeScreenshot(t, "../docs/console-spectate.png", shot)
		}
		// A creature's flow field: the overlay on, a click on a creature
		// (one in pia's view, where the village has its deer) watches it,
		// and the host's field for it comes (a deer hunts nobody: target 0).
		op.eval(`(() => { const e = document.getElementById("ov-flow"); e.checked = true; e.dispatchEvent(new Event("change")); return ""; })()`)
		if got := op.eval(`String(document.getElementById("ov-pov").checked)`); got != "false" {
			t.Errorf("the player's view with the flow overlay on: %s; want off (the host sends one of the two)", got)
		}
		pia.wait("a creature in pia's view", `[...globalThis.__leySession.view.entities.values()].some((e) => e.kind === 1)`, 10*time.Second)
		creature := pia.eval(`(() => { const e = [...globalThis.__leySession.view.entities.values()].find((e) => e.kind === 1); return e.id + " " + e.x + " " + e.y; })()`)
		var cid, cx, cy int
		if _, err := fmt.Sscanf(creature, "%d %d %d", &cid, &cx, &cy); err != nil {
			t.Fatalf("the creature %q: %v", creature, err)
		}
		op.eval(fmt.Sprintf(`(() => { const c = document.getElementById("spectate-canvas"); const [sq, ox, oy] = c.dataset.camera.split(" ").map(Number); const r = c.getBoundingClientRect();
			c.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: r.left + %d * sq - ox + sq / 2, clientY: r.top + %d * sq - oy + sq / 2 })); return ""; })()`, cx, cy))
		op.wait("a creature's flow field drawn", `/^[0-9]+:[0-9]+$/.test(document.getElementById("spectate-canvas").dataset.flow)`, 10*time.Second)
		if got := op.eval(`document.getElementById("spectate-canvas").dataset.flow.split(":")[0]`); got == "" {
			t.Errorf("the flow field drawn names no creature")
		}
		live, err := admin.LiveAreas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range live {
			if a.Area == village && len(a.Accounts) != 1 {
				t.Errorf("the village's accounts with a spectator watching: %v; want pia's alone", a.Accounts)
			}
		}
		// A hidden page gives its spectator's place back, and watches again when shown.
		op.eval(`(Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" }), document.dispatchEvent(new Event("visibilitychange")), "")`)
		op.wait("the spectator let go while hidden", `document.getElementById("spectate").hidden`, 5*time.Second)
		op.eval(`(Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "visible" }), document.dispatchEvent(new Event("visibilitychange")), "")`)
		op.wait("watching again once shown", fmt.Sprintf(`document.getElementById("spectate-state").dataset.state === "watching" && document.getElementById("spectate-area").textContent === "%d"`, village), 15*time.Second)
		op.eval(`(document.getElementById("spectate-stop").click(), "")`)
		op.wait("the spectator closed", `document.getElementById("spectate").hidden`, 5*time.Second)

		rue := dirclient.New(base)
		if _, err := rue.Register(ctx, "rue-"+stamp+"@t.local", password, "rue"); err != nil {
			t.Fatal(err)
		}
		if _, err := rue.Login(ctx, "rue-"+stamp+"@t.local", password); err != nil {
			t.Fatal(err)
		}
		var e *dirclient.Error
		if _, err := rue.Spectate(ctx, village); !errors.As(err, &e) || e.Code != "FORBIDDEN" {
			t.Errorf("a player's spectate: %v; want FORBIDDEN", err)
		}
		if _, err := rue.AreaDetail(ctx, village); !errors.As(err, &e) || e.Code != "FORBIDDEN" {
			t.Errorf("a player's area detail: %v; want FORBIDDEN", err)
		}
		op.noExceptions()
	})

	run("a cap saved from the console refuses the next player REALM_FULL", func(t *testing.T) {
		op.setField("cap", "1")
		if got := op.eval(`document.getElementById("door-state").textContent`); got != "unsaved changes" {
			t.Errorf("the door after an edit says %q; want unsaved changes", got)
		}
		op.eval(`(document.getElementById("door-save").click(), "")`)
		op.wait("saved", `document.getElementById("door-note").textContent.startsWith("Saved")`, 10*time.Second)
		info, err := admin.Info(ctx)
		if err != nil || info.Cap != 1 {
			t.Fatalf("the realm's cap after the save: %d (%v); want 1", info.Cap, err)
		}
		quo := dirclient.New(base)
		if _, err := quo.Register(ctx, "quo-"+stamp+"@t.local", password, "quo"); err != nil {
			t.Fatal(err)
		}
		if _, err := quo.Login(ctx, "quo-"+stamp+"@t.local", password); err != nil {
			t.Fatal(err)
		}
		_, err = quo.Join(ctx, village)
		var e *dirclient.Error
		if !errors.As(err, &e) || e.Code != "REALM_FULL" {
			t.Errorf("a second player's join with pia inside and the cap at 1: %v; want REALM_FULL", err)
		}
	})

	run("the cap's change shows in the audit log, with who made it", func(t *testing.T) {
		op.wait("the change listed", `(() => { const r = document.querySelector('#audit tbody tr[data-action="realm.update"]'); return r !== null && r.cells[3].textContent.includes("-> 1"); })()`, 10*time.Second)
		got := op.eval(`(() => { const r = document.querySelector('#audit tbody tr[data-action="realm.update"]'); return r.cells[1].textContent + "|" + r.cells[2].textContent + "|" + r.cells[3].textContent; })()`)
		me, _, err := admin.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		changes, _, err := admin.Audit(ctx, 0, 1)
		if err != nil || len(changes) != 1 {
			t.Fatalf("the audit log: %+v, %v", changes, err)
		}
		if want := me.Name + "|realm.update (realm)|" + changes[0].Detail; got != want || !strings.Contains(changes[0].Detail, "cap ") {
			t.Errorf("the console's newest change reads %q; want %q (the API's)", got, want)
		}
	})

	run("an admin finds a player, gives and takes a membership, and ends its sessions", func(t *testing.T) {
		op.setIn("find", "q", "pia-"+stamp)
		op.eval(`(document.querySelector("#find button[type=submit]").click(), "")`)
		op.wait("pia found, playing in the village", fmt.Sprintf(`(() => { const r = document.querySelector('#accounts tbody tr[data-name="pia"]'); return r !== null && r.cells[4].textContent === "area %d"; })()`, village), 10*time.Second)
		piaID, err := strconv.ParseUint(op.eval(`document.querySelector('#accounts tbody tr[data-name="pia"]').dataset.account`), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		home, err := admin.CreateArea(ctx, "Warden's "+stamp, "home", 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		op.setIn("membership", "account", strconv.FormatUint(piaID, 10))
		op.setIn("membership", "area", strconv.FormatUint(uint64(home.ID), 10))
		op.eval(`(document.getElementById("give").click(), "")`)
		op.wait("the give done", `document.getElementById("membership-note").textContent.includes("is a member of")`, 10*time.Second)
		members, err := admin.Members(ctx, home.ID)
		if err != nil || !slices.ContainsFunc(members, func(m dirclient.Member) bool { return m.Account == piaID && m.Role == "member" }) {
			t.Errorf("the home's members after the give: %+v, %v; want pia a member", members, err)
		}
		op.eval(`(document.getElementById("take").click(), "")`)
		op.wait("the take done", `document.getElementById("membership-note").textContent.includes("no longer a member")`, 10*time.Second)
		if members, err := admin.Members(ctx, home.ID); err != nil || slices.ContainsFunc(members, func(m dirclient.Member) bool { return m.Account == piaID }) {
			t.Errorf("the home's members after the take: %+v, %v; want pia gone", members, err)
		}
		end := `document.querySelector('#accounts tbody tr[data-name="pia"] button')`
		op.eval(`(` + end + `.click(), "")`)
		if got := op.eval(end + `.textContent`); !strings.Contains(got, "Really") {
			t.Errorf("the first click of End sessions reads %q; want it to ask", got)
		}
		op.eval(`(` + end + `.click(), "")`)
		// The API answers once the host has let go of pia's body and its
		// final state is stored, which the director waits for up to its
		// JoinTimeout (10 s) before answering anyway: the page can only
		// say so after that, so the wait outlasts it.
		op.wait("the sessions ended", `document.getElementById("membership-note").textContent.includes("1 session ended")`, 25*time.Second)
		// Her play ends (taken over), and playing again finds her logged out.
		pia.wait("pia's play ended", `!document.getElementById("banner").hidden && document.getElementById("banner-text").textContent.includes("taken over")`, 15*time.Second)
		pia.eval(`(document.getElementById("banner-action").click(), "")`)
		pia.wait("pia's page at the login", `!document.getElementById("auth").hidden`, 15*time.Second)
		op.wait("the audit log listing the acts", `document.querySelectorAll('#audit tbody tr[data-action="account.logout"], #audit tbody tr[data-action="member.give"], #audit tbody tr[data-action="member.take"]').length === 3`, 10*time.Second)
	})

	run("the API explorer sends the director's routes with the admin's session", func(t *testing.T) {
		op.eval(`(document.getElementById("explorer").open = true, "")`)
		pick := func(route string) {
			t.Helper()
			op.wait("the route "+route, fmt.Sprintf(`document.querySelector('#op option[data-route=%q]') !== null`, route), 10*time.Second)
			op.eval(fmt.Sprintf(`(() => { const s = document.getElementById("op"); s.value = document.querySelector('#op option[data-route=%q]').value; s.dispatchEvent(new Event("change")); return ""; })()`, route))
		}
		pick("GET /v1/admin/hosts")
		op.eval(`(document.getElementById("op-send").click(), "")`)
		op.wait("the hosts' answer", `document.getElementById("op-status").dataset.status === "200" && document.getElementById("op-status").textContent.startsWith("GET /v1/admin/hosts") && document.getElementById("op-answer").textContent.includes('"hosts"')`, 10*time.Second)

		pick("PUT /v1/realm")
		if got := op.eval(`document.querySelector('#op-form [name=body]').value`); !strings.Contains(got, `"cap"`) {
			t.Errorf("PUT /v1/realm's body to start from: %q; want its fields", got)
		}
		op.eval(`(() => { const b = document.querySelector('#op-form [name=body]'); b.value = JSON.stringify({open: true, cap: 7, new_players_welcome: true, message: ""}); document.getElementById("op-send").click(); return ""; })()`)
		if got := op.eval(`document.getElementById("op-send").textContent`); !strings.Contains(got, "changes the realm") {
			t.Errorf("the first Send of a PUT reads %q; want it to ask", got)
		}
		if info, err := admin.Info(ctx); err != nil || info.Cap != 1 {
			t.Fatalf("the cap after the first Send: %d (%v); want 1 still", info.Cap, err)
		}
		op.eval(`(document.getElementById("op-send").click(), "")`)
		op.wait("the PUT's answer", `document.getElementById("op-status").dataset.status === "200" && document.getElementById("op-status").textContent.startsWith("PUT /v1/realm")`, 10*time.Second)
		if info, err := admin.Info(ctx); err != nil || info.Cap != 7 {
			t.Errorf("the cap after the explorer's PUT: %d (%v); want 7", info.Cap, err)
		}
		op.wait("the change in Recent changes", `[...document.querySelectorAll('#audit tbody tr')].some((r) => r.cells[3].textContent === "cap 1 -> 7")`, 10*time.Second)
		op.noExceptions()
	})

	run("an API refusal is said in plain words and changes nothing", func(t *testing.T) {
		op.setField("message", strings.Repeat("é", 600)) // 600 characters, 1200 bytes: over the API's 1024
		op.eval(`(document.getElementById("door-save").click(), "")`)
		op.wait("the refusal", `document.getElementById("door-error").textContent !== ""`, 10*time.Second)
		if got := op.eval(`document.getElementById("door-error").textContent`); !strings.Contains(got, "BAD_REQUEST") || !strings.Contains(got, "Nothing changed") {
			t.Errorf("the refusal reads %q", got)
		}
		if info, err := admin.Info(ctx); err != nil || info.Message != "" {
			t.Errorf("the realm's message after the refusal: %q (%v); want it unchanged", info.Message, err)
		}
		op.eval(`(document.getElementById("door-reset").click(), "")`)
		op.wait("the form back as saved", `document.getElementById("door-state").textContent === "open" && document.getElementById("door").message.value === ""`, 5*time.Second)
	})

	run("closing asks first, and keeping it open changes nothing", func(t *testing.T) {
		op.eval(`(() => { const e = document.getElementById("door").open; e.checked = false; e.dispatchEvent(new Event("input", { bubbles: true })); document.getElementById("door-save").click(); return ""; })()`)
		op.wait("the question", `document.getElementById("confirm-close").open`, 5*time.Second)
		if got := op.eval(`document.getElementById("confirm-close").textContent`); !strings.Contains(got, "grace") || !strings.Contains(got, "nobody can join") {
			t.Errorf("the question says %q; want what happens to players and the grace", got)
		}
		op.eval(`(document.getElementById("confirm-no").click(), "")`)
		op.wait("nothing changed", `!document.getElementById("confirm-close").open && document.getElementById("door-note").textContent.startsWith("Nothing changed")`, 5*time.Second)
		if info, err := admin.Info(ctx); err != nil || !info.Open {
			t.Errorf("the realm after keeping it open: open %t (%v)", info.Open, err)
		}
		op.eval(`(document.getElementById("door-reset").click(), "")`)
	})

	run("the charts draw the director's samples", func(t *testing.T) {
		// At one sample a second the console asks again at each refresh.
		op.wait("two samples on the players chart", `(() => { const p = document.querySelector('figure[data-chart="players"] path.line'); return p !== null && +p.dataset.points >= 2 && /L/.test(p.getAttribute("d")); })()`, 20*time.Second)
		for _, c := range []string{"players", "areas", "hosts", "cpu", "rss", "tick"} {
			if got := op.eval(fmt.Sprintf(`String(document.querySelectorAll('figure[data-chart=%q] svg path.line[d^="M"]').length)`, c)); got == "0" {
				t.Errorf("chart %s draws no line", c)
			}
		}
		var out struct {
			Samples []struct {
				Players int `json:"players"`
			} `json:"samples"`
		}
		if err := admin.Do(ctx, "GET", "/v1/admin/samples?since=3600", nil, &out); err != nil || len(out.Samples) < 2 {
			t.Fatalf("GET /v1/admin/samples: %v, %d samples", err, len(out.Samples))
		}
		if got := op.eval(`document.querySelector('figure[data-chart="players"] .now').textContent`); got != "1" && got != "0" {
			t.Errorf("the players chart's latest figure reads %q; want 1 (pia) or 0 (a sample before her join)", got)
		}
		op.eval(`(document.querySelector('#range button[data-since="86400"]').click(), "")`)
		op.wait("the day's charts", `document.getElementById("charts-note").textContent.includes("last day") && document.querySelector('figure[data-chart="players"] path.line') !== null`, 10*time.Second)
		op.eval(`(document.querySelector('#range button[data-since="3600"]').click(), "")`)
		op.wait("the hour's charts", `document.getElementById("charts-note").textContent.includes("last hour")`, 10*time.Second)
		if *updateScreenshot {
			// A picture with some line to it: a quarter of the chart's minute.
			op.wait("fifteen samples", `+document.querySelector('figure[data-chart="players"]').dataset.points >= 15`, 30*time.Second)
			shot, err := chromedp.Run(op.tab.Ctx, chromedp.FullScreenshot(100)) // 100: a PNG
			if err != nil {
				t.Fatal(err)
			}
			writeScreenshot(t, "../docs/console.png", shot)
		}
		op.noExceptions()
	})

	run("the console fits a phone", func(t *testing.T) {
		ph := &page{t: t, name: "phone", tab: b.Tab(t)}
		c, cancel := context.WithTimeout(ph.tab.Ctx, 10*time.Second)
		_, err := chromedp.Call(c, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 390, Height: 844, DeviceScaleFactor: 3, Mobile: true})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		ph.consoleLogIn(base, "demo@ley.local", "demo-password")
		ph.wait("the console with its charts", `!document.getElementById("console").hidden && document.querySelector('figure[data-chart="tick"]') !== null`, 15*time.Second)
		if got := ph.eval(`String(document.documentElement.scrollWidth)`); got != "390" {
			t.Errorf("the console is %s px wide on a 390 px phone", got)
		}
		if got := ph.eval(`(() => { const r = document.getElementById("door-save").getBoundingClientRect(); return r.left >= 0 && r.right <= 390 ? "" : r.left + ".." + r.right; })()`); got != "" {
			t.Errorf("Save is at %s, off the phone's screen", got)
		}
		ph.noExceptions()
		// A login ends the account's other sessions: the operator's tab logs in again.
		op.consoleLogIn(base, "demo@ley.local", "demo-password")
		op.wait("the console again", `!document.getElementById("console").hidden`, 10*time.Second)
		admin.Token = op.eval(`sessionStorage.getItem("ley.token") ?? ""`)
	})

	run("closing the door from the console drains a player's page, and opening it lets players in again", func(t *testing.T) {
		dee := &page{t: t, name: "dee", tab: b.Tab(t, sessionHook)}
		dee.signUp(base, "dee-"+stamp+"@t.local", "dee", password)
		dee.join(village)
		op.eval(`(() => { const e = document.getElementById("door").open; e.checked = false; e.dispatchEvent(new Event("input", { bubbles: true })); document.getElementById("door-save").click(); return ""; })()`)
		op.wait("the question", `document.getElementById("confirm-close").open`, 5*time.Second)
		op.eval(`(document.getElementById("confirm-yes").click(), "")`)
		op.wait("the door closed", `document.getElementById("door-state").textContent === "closed"`, 10*time.Second)
		dee.wait("the Area closing", `!document.getElementById("banner").hidden && document.getElementById("banner-text").textContent.startsWith("This Area is closing")`, 10*time.Second)
		dee.wait("the realm closed", `document.getElementById("conn").dataset.state === "ended" && document.getElementById("banner-text").textContent.includes("realm is closed")`, 20*time.Second)
		if info, err := admin.Info(ctx); err != nil || info.Open {
			t.Fatalf("the realm after closing from the console: open %t (%v); want closed", info.Open, err)
		}
		op.eval(`(() => { const e = document.getElementById("door").open; e.checked = true; e.dispatchEvent(new Event("input", { bubbles: true })); document.getElementById("door-save").click(); return ""; })()`)
		op.wait("the door open again", `document.getElementById("door-state").textContent === "open"`, 10*time.Second)
		if info, err := admin.Info(ctx); err != nil || !info.Open {
			t.Fatalf("the realm after opening from the console: open %t (%v); want open", info.Open, err)
		}
		dee.noExceptions()
		op.noExceptions()
	})

	run("the live view stops asking while hidden and after a log out", func(t *testing.T) {
		op.wait("the live view asking", fmt.Sprintf(`globalThis.__leyFetches.filter((f) => f[0] === "/v1/admin/hosts" && f[1] >= %f).length >= 1`, op.now()), 10*time.Second)
		hidden := op.now()
		op.eval(`(Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" }), document.dispatchEvent(new Event("visibilitychange")), "")`)
		time.Sleep(5 * time.Second) // two and a half refresh intervals, in which a live timer would ask twice
		if n := op.adminFetches(hidden + 1); n != 0 {
			t.Errorf("the hidden console asked the admin routes %d times in 5 s; want none", n)
		}
		shown := op.now()
		op.eval(`(Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "visible" }), document.dispatchEvent(new Event("visibilitychange")), "")`)
		op.wait("the live view asking again", fmt.Sprintf(`globalThis.__leyFetches.filter((f) => f[0] === "/v1/admin/hosts" && f[1] >= %f).length >= 1`, shown), 10*time.Second)
		op.do(chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("auth")))
		out := op.now()
		time.Sleep(5 * time.Second) // as above
		if n := op.adminFetches(out + 1); n != 0 {
			t.Errorf("the logged-out console asked the admin routes %d times in 5 s; want none", n)
		}
		if got := op.eval(`document.querySelectorAll("#hosts tbody tr, #live-areas tbody tr, #accounts tbody tr, #audit tbody tr, #chart-grid figure").length + " " + document.querySelector("#login-form input[name=password]").value`); got != "0 " {
			t.Errorf("after the log out the console still holds %q (rows and charts, password); want nothing", got)
		}
		op.noExceptions()
	})
}
