package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leyworks/ley/web"
)

// distEngine returns the engine as web/dist ships it, unzipped.
func distEngine(t *testing.T) (name string, wasm []byte, gzipped int) {
	t.Helper()
	entries, err := fs.ReadDir(web.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "engine-") || !strings.HasSuffix(e.Name(), ".wasm.gz") {
			continue
		}
		gz, err := fs.ReadFile(web.Files(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(e.Name(), ".gz"), raw, len(gz)
	}
	t.Fatal("web/dist holds no engine-<hash>.wasm.gz (go generate ./web)")
	return "", nil, 0
}

// wasmExec returns the Go toolchain's wasm_exec.js.
func wasmExec(t *testing.T) []byte {
	t.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEngineKeepsNoRecipe: the engine a browser downloads holds none of
// the content's recipes (they are the server's secret; a js/wasm build's
// content leaves recipes.json out), while it does hold the rest of the
// content (the offline Area's map and rules).
func TestEngineKeepsNoRecipe(t *testing.T) {
	_, wasm, _ := distEngine(t)
	recipes, err := os.ReadFile("../content/data/recipes.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for line := range strings.SplitSeq(string(recipes), "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, `"inputs"`) && !strings.Contains(line, `"recipes"`) {
			continue
		}
		lines++
		if bytes.Contains(wasm, []byte(line)) {
			t.Errorf("the engine holds recipes.json's %q", line)
		}
	}
	if lines < 5 {
		t.Fatalf("recipes.json has %d recipe lines: not the file this test knows", lines)
	}
	rules, err := os.ReadFile("../content/data/rules.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(wasm, rules) {
		t.Fatal("the engine does not hold rules.json: the check above looks in the wrong place")
	}
}

// The engine's size budget (bench/RESULTS.md, "The engine in the
// browser", says why): what a player downloads once, and keeps.
const (
	engineBudgetRaw  = 8 << 20 // bytes, as compiled
	engineBudgetGzip = 2 << 20 // bytes, as served
)

// TestEngineWithinBudget: the engine web/dist ships stays within its
// size budget.
func TestEngineWithinBudget(t *testing.T) {
	name, wasm, gz := distEngine(t)
	t.Logf("%s: %d bytes, %d gzipped", name, len(wasm), gz)
	if len(wasm) > engineBudgetRaw || gz > engineBudgetGzip {
		t.Fatalf("%s is %d bytes (%d gzipped): over its budget of %d (%d gzipped)", name, len(wasm), gz, engineBudgetRaw, engineBudgetGzip)
	}
}
