package chrome

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium started for one test.
type Browser struct {
	ctx context.Context
}

// InCI reports whether the tests run under CI: LEY_CI (set by .ci/run)
// or CI set in the environment.
func InCI() bool { return os.Getenv("LEY_CI") != "" || os.Getenv("CI") != "" }

// find returns the Chromium to run, or "".
func find() string {
	if p := os.Getenv("LEY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// Start starts Chromium for t, headless, with a fresh profile in a
// temporary directory; it is stopped when t ends. Without Chromium t is
// skipped, or failed under CI.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := find()
	if path == "" {
		msg := "no Chromium: install Debian's chromium package (apt-get install chromium) or set LEY_CHROMIUM"
		if InCI() {
			t.Fatal(msg + " (the browser tests must run under CI)")
		}
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return &Browser{ctx: bctx}
}

// Tab is one tab of its own browser context.
type Tab struct {
	// Ctx runs chromedp actions in the tab.
	Ctx context.Context

	mu         sync.Mutex
	console    []string
	exceptions []string
}

// Tab opens a tab in a new browser context (its own cookies and
// storage), closed when t ends. Scripts given run in every page of the
// tab before the page's own (AddScriptToEvaluateOnNewDocument).
func (b *Browser) Tab(t testing.TB, scripts ...string) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	tab := &Tab{Ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			tab.mu.Lock()
			tab.console = append(tab.console, fmt.Sprintf("%s: %s", ev.Type, strings.Join(parts, " ")))
			tab.mu.Unlock()
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			tab.mu.Lock()
			tab.exceptions = append(tab.exceptions, msg)
			tab.mu.Unlock()
		}
	})
	if err != nil {
		cancel()
		t.Fatalf("listen to the tab: %v", err)
	}
	for _, s := range scripts {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: s}); err != nil {
			cancel()
			t.Fatalf("add a script to the tab: %v", err)
		}
	}
	t.Cleanup(cancel)
	return tab
}

// Console returns the console lines so far, each "type: text".
func (tab *Tab) Console() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.console...)
}

// Exceptions returns the uncaught exceptions so far.
func (tab *Tab) Exceptions() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.exceptions...)
}
