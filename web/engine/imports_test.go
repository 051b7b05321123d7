package engine_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEngineLeavesTheSystemAlone: the browser's engine (web/engine/wasm,
// built for GOOS=js GOARCH=wasm) depends on no network package of the
// standard library, and no package of its own (ley's or a module's)
// reaches the file system, processes or the network itself (os, os/exec,
// syscall, net...): it is the simulation and nothing else. Only ley's
// engine packages are in it: no host, director, store or socket code.
func TestEngineLeavesTheSystemAlone(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{.Standard}}|{{join .Imports " "}}`, "github.com/leyworks/ley/web/engine/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	system := map[string]bool{"os": true, "os/exec": true, "os/signal": true, "syscall": true, "net": true, "plugin": true}
	allowed := []string{"ecs", "systems", "content", "net/wire", "web/engine"}
	pkgs := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		path, std, imports := parts[0], parts[1] == "true", strings.Fields(parts[2])
		pkgs++
		if std {
			if path == "net" || strings.HasPrefix(path, "net/") || strings.HasPrefix(path, "crypto/tls") {
				t.Errorf("the engine depends on %s", path)
			}
			continue
		}
		for _, imp := range imports {
			if system[imp] || strings.HasPrefix(imp, "net/") {
				t.Errorf("%s imports %s", path, imp)
			}
		}
		if rel, ours := strings.CutPrefix(path, "github.com/leyworks/ley/"); ours {
			ok := false
			for _, a := range allowed {
				ok = ok || rel == a || strings.HasPrefix(rel, a+"/")
			}
			if !ok {
				t.Errorf("the engine holds %s, which is not an engine package", path)
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("go list named %d packages: not the engine's dependencies", pkgs)
	}
}
