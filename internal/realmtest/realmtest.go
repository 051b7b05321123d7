// Package realmtest is what the tests of several packages share to run
// ley as real processes: the ley binary, built once per test binary, and
// realms started from it (`ley run`: a director and its area host
// processes on free loopback ports, with a data directory of their own),
// waited for by polling and stopped when the test ends.
//
// A package whose tests use it gives it its TestMain, so that the binary
// is removed at the end:
//
//	func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }
//
// The binary is built on the first call of [Binary] (or [Start]), not
// before: tests that need none pay nothing. The realm itself is
// tools/capacity/ladder's (ladder.StartRealm, the one `ley ladder`
// climbs), so tests run the realm the product runs.
package realmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/leyworks/ley/internal/buildtags"
	"github.com/leyworks/ley/tools/capacity/ladder"
)

var (
	once   sync.Once
	mu     sync.Mutex
	dir    string // the build's temporary directory; guarded by mu
	bin    string // the binary, once built
	binErr error
)

// Main runs m's tests and then removes the binary built for them. Call it
// from TestMain and exit with its code.
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	d := dir
	mu.Unlock()
	if d != "" {
		os.RemoveAll(d)
	}
	return code
}

// Binary returns the path of ./cmd/ley built for this test binary: the
// first call builds it (`go build`, cached by the go command like any
// build) into a temporary directory that Main removes; a failed build
// fails tb, in every test that asks. Safe for concurrent use.
func Binary(tb testing.TB) string {
	tb.Helper()
	once.Do(build)
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return bin
}

func build() {
	d, err := os.MkdirTemp("", "ley-test-bin-")
	if err != nil {
		binErr = fmt.Errorf("realmtest: build ley: %w", err)
		return
	}
	mu.Lock()
	dir = d
	mu.Unlock()
	out := filepath.Join(d, "ley")
	cmd := exec.Command("go", "build", "-tags", buildtags.Product, "-o", out, "github.com/leyworks/ley/cmd/ley")
	if msg, err := cmd.CombinedOutput(); err != nil {
		binErr = fmt.Errorf("realmtest: go build ./cmd/ley: %w\n%s", err, msg)
		return
	}
	bin = out
}

// Start starts a realm from Binary with ladder.QuickConfig's settings,
// which tune (if not nil) may change (MaxHosts, PoolSize, RealmArgs ...),
// and waits until its director answers /readyz. Its hosts get
// --host-shutdown-grace=100ms. The realm stops when the test ends; if the
// test failed, what the realm logged at level ERROR (a
// panic's stack among it) is logged first.
func Start(tb testing.TB, tune func(*ladder.Config)) *ladder.Realm {
	tb.Helper()
	cfg := ladder.QuickConfig()
	cfg.Binary = Binary(tb)
	if tune != nil {
		tune(&cfg)
	}
	// The realm's hosts give their players 100 ms, not 2 s, when the test
	// stops them: every test's cleanup would wait that out.
	cfg.RealmArgs = append(cfg.RealmArgs, "--host-shutdown-grace=100ms")
	r, err := ladder.StartRealm(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.Stop)
	tb.Cleanup(func() { logErrors(tb, r) })
	return r
}

// logErrors logs, for a failed test, the first lines the realm logged at
// level ERROR.
func logErrors(tb testing.TB, r *ladder.Realm) {
	if !tb.Failed() {
		return
	}
	b, err := r.Log()
	if err != nil {
		tb.Logf("realm log: %v", err)
		return
	}
	n := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) || strings.HasPrefix(line, "panic") {
			tb.Logf("realm: %s", line)
			if n++; n == 20 {
				return
			}
		}
	}
}
