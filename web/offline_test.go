package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
	"github.com/leyworks/ley/web/internal/chrome"
)

// offlineHome is what the page shows of the offline home it plays: the
// body's square, the inventory slot by slot ("kind×count", as the SDK's
// session holds it) and what stands placed on one square.
type offlineHome struct {
	pos       [2]int
	inventory string
	placed    string
}

// home reads what the page shows of the offline home, with the items
// placed on square sq.
func (p *page) home(sq [2]int) offlineHome {
	p.t.Helper()
	return offlineHome{
		pos:       p.pos(),
		inventory: p.sdk(`s.inventory.map((st) => st.kind + "x" + st.count).join(" ")`),
		placed:    p.placed(sq[0], sq[1]),
	}
}

// playOffline clicks Play offline on the landing and waits until the
// offline home is played.
func (p *page) playOffline() {
	p.t.Helper()
	p.wait("the offer of offline play", `!document.getElementById("offline-offer").hidden && !document.getElementById("play-offline").disabled`, 10*time.Second)
	p.eval(`(document.getElementById("play-offline").click(), "")`)
	p.waitOffline()
}

// waitOffline waits until the page plays the offline home, saying so.
func (p *page) waitOffline() {
	p.t.Helper()
	p.wait("offline play", `!document.getElementById("play").hidden && !document.getElementById("offline-bar").hidden && document.getElementById("area-name").textContent === "Your offline home"`, 20*time.Second)
	p.waitReady()
	if got := p.eval(`document.getElementById("offline-bar").textContent`); !strings.Contains(got, "Offline — nothing here reaches the realm") {
		p.t.Errorf("the offline bar says %q", got)
	}
}

// savesMade is how many saves of the offline home the page has made
// since it loaded (they are numbered as they are made, from 1).
func (p *page) savesMade() int {
	p.t.Helper()
	s := p.eval(`document.getElementById("offline-saved").dataset.made ?? "0"`)
	n, err := strconv.Atoi(s)
	if err != nil {
		p.fail("the saves made: %q", s)
	}
	return n
}

// waitKept waits until the page has kept save n of the offline home (or
// a later one) in the browser.
func (p *page) waitKept(what string, n int) {
	p.t.Helper()
	p.wait(what, fmt.Sprintf(`+(document.getElementById("offline-saved").dataset.kept ?? "0") >= %d`, n), 15*time.Second)
}

// TestWebClientOffline plays offline in the browser with the realm gone.
// The page, opened while the realm runs, installs its service worker;
// then the realm stops (the whole `ley run`), and a reload still loads
// the page (from the service worker), which says the realm cannot be
// reached and offers offline play first of all. Offline play is the play
// screen, saying it is offline: the player walks and places a chair from
// the starter kit in the offline home. A reload while playing goes
// straight back to offline play, the body on the square it stood on, the
// chair where it was placed and the inventory as it was (each compared
// with what the page showed before the reload: a home not restored from
// the save starts at the spawn point with the whole kit); after a step
// and Leave, a reload and Play offline find the home as it was left. A
// save the engine cannot read is said in words, with a button that
// starts a new home in its place.
func TestWebClientOffline(t *testing.T) {
	b := chrome.Start(t)
	r := realmtest.Start(t, func(cfg *ladder.Config) { cfg.MaxHosts, cfg.PoolSize = 1, 1 })
	base := r.URL()
	p := &page{t: t, name: "ola", tab: b.Tab(t, sessionHook)}
	run := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			p.t = t
			f(t)
		}) {
			t.FailNow()
		}
	}

	run("the page installs its service worker while the realm answers", func(t *testing.T) {
		p.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("auth")))
		p.wait("the service worker in control of the page", `navigator.serviceWorker.controller !== null`, 30*time.Second)
		p.wait("offline play offered after the rest", `!document.getElementById("offline-offer").hidden && document.getElementById("offline-offer").dataset.unreachable === "false" && document.getElementById("realm").textContent.includes("playing")`, 10*time.Second)
	})

	run("with the realm stopped, a reload loads the page and offers offline play first", func(t *testing.T) {
		r.Stop()
		if resp, err := http.Get(base + "/"); err == nil {
			resp.Body.Close()
			t.Fatalf("the stopped realm still answers: %s", resp.Status)
		}
		p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("auth")))
		p.wait("the realm said not to answer", `document.getElementById("offline-offer").dataset.unreachable === "true" && document.getElementById("offline-title").textContent === "The realm cannot be reached"`, 15*time.Second)
		if got := p.eval(`String(document.getElementById("offline-offer").getBoundingClientRect().top < document.getElementById("welcome").getBoundingClientRect().top)`); got != "true" {
			t.Errorf("the offer of offline play is not above the landing's welcome while the realm does not answer")
		}
	})

	var spawn [2]int
	var chair [2]int // the square the chair stands on
	var before offlineHome
	run("offline play: walk, and place a chair from the starter kit", func(t *testing.T) {
		p.playOffline()
		spawn = p.pos()
		for range 4 {
			p.walk()
		}
		if p.pos() == spawn {
			p.walk()
		}
		slot := p.slotOf(chairKind)
		if slot < 0 {
			p.fail("no chairs in the offline inventory: %q", p.sdk(`s.inventory.map((st) => st.kind + "x" + st.count).join(" ")`))
		}
		var chairs int
		if _, err := fmt.Sscanf(p.slotCount(slot), "1x%d", &chairs); err != nil {
			t.Fatalf("the chairs' slot says %q", p.slotCount(slot))
		}
		p.pickKey(slot)
		chair = p.freeNextTo()
		p.click(chair[0], chair[1])
		p.waitPlaced("the chair placed", chair[0], chair[1], strconv.Itoa(chairKind))
		p.waitSlot(slot, chairKind, chairs-1)
		before = p.home(chair)
		if before.pos == spawn {
			t.Fatalf("the body stands on its spawn square %v after walking: a restore would not show", spawn)
		}
		p.noExceptions()
	})

	run("a reload while playing offline goes straight back to it, as saved", func(t *testing.T) {
		// The next save is made after the page showed all that: it holds it.
		p.waitKept("a save holding the chair kept", p.savesMade()+1)
		p.do(chromedp.Reload())
		p.waitOffline()
		p.waitPlaced("the chair after the reload", chair[0], chair[1], strconv.Itoa(chairKind))
		if got := p.home(chair); got != before {
			t.Errorf("after the reload the home shows %+v; it was %+v", got, before)
		}
		p.noExceptions()
	})

	run("after a step and Leave, a reload and Play offline find the home as left", func(t *testing.T) {
		p.walk()
		before = p.home(chair)
		p.do(chromedp.Click(chromedp.ID("leave")))
		p.wait("the landing again", `!document.getElementById("auth").hidden && !document.getElementById("offline-offer").hidden`, 10*time.Second)
		if got := p.eval(`sessionStorage.getItem("ley.playing") ?? "none"`); got != "none" {
			t.Errorf("after Leave the page keeps %q as played", got)
		}
		p.waitKept("the save of the Leave kept", p.savesMade())
		p.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("auth")))
		p.playOffline()
		p.waitPlaced("the chair after Leave and a reload", chair[0], chair[1], strconv.Itoa(chairKind))
		if got := p.home(chair); got != before {
			t.Errorf("after Leave and a reload the home shows %+v; it was left %+v", got, before)
		}
		p.noExceptions()
	})

	run("a save the engine cannot read is said in words, and a new home starts in its place", func(t *testing.T) {
		p.do(chromedp.Click(chromedp.ID("leave")))
		p.wait("the landing again", `!document.getElementById("auth").hidden`, 10*time.Second)
		p.waitKept("the save of the Leave kept", p.savesMade()) // before it is spoilt, not after
		spoil := `(async () => {
			const db = await new Promise((ok, fail) => { const r = indexedDB.open("ley-offline", 1); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
			await new Promise((ok, fail) => { const tx = db.transaction("saves", "readwrite"); tx.objectStore("saves").put(new Uint8Array([1, 2, 3]), "home"); tx.oncomplete = ok; tx.onabort = () => fail(tx.error); });
			db.close();
			globalThis.__spoilt = true; })()`
		p.eval(`(` + spoil + `, "")`)
		p.wait("the save spoilt", `globalThis.__spoilt === true`, 10*time.Second)
		p.eval(`(document.getElementById("play-offline").click(), "")`)
		p.wait("the unreadable save said in words", `!document.getElementById("auth").hidden && document.getElementById("offline-error").textContent.includes("cannot be read") && !document.getElementById("offline-fresh").hidden`, 20*time.Second)
		p.eval(`(document.getElementById("offline-fresh").click(), "")`)
		p.waitOffline()
		if got := p.pos(); got != spawn {
			t.Errorf("a new home puts the body on %v; want the spawn square %v", got, spawn)
		}
		if got := p.placed(chair[0], chair[1]); got != "" {
			t.Errorf("a new home has %q placed where the old one's chair stood", got)
		}
		if got := p.eval(`document.getElementById("offline-error").textContent + "|" + document.getElementById("offline-fresh").hidden`); got != "|true" {
			t.Errorf("the offer after the new home started: %q; want no error and no button", got)
		}
		p.noExceptions()
	})
}
