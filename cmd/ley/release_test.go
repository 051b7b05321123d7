package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leyworks/ley/internal/buildtags"
)

// TestReleaseBinaryHasNoTestMachinery builds the product binary as `make
// build` does (buildtags.Product) and reads its symbol table: the failpoints
// (internal/failpoint), the area host's simulation harness (area.Sim) and
// the mutation switches of the transfer model test exist only in leytest
// builds, so none of their symbols may be in it.
func TestReleaseBinaryHasNoTestMachinery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole binary")
	}
	bin := filepath.Join(t.TempDir(), "ley")
	build := exec.Command("go", "build", "-tags", buildtags.Product, "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=") // no -tags from the environment
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	symbols := strings.Split(string(out), "\n")
	if len(symbols) < 1000 {
		t.Fatalf("go tool nm listed %d symbols; want the whole binary's", len(symbols))
	}
	banned := []string{"internal/failpoint.", "area.(*Sim)", "area.NewSim", "area.SetSettling", "area.settlingOff",
		"director.noSourceEpoch", "director.noAccountLock", "ecs.cornersCutOn", "ecs.SetCornersCut", "interest.walkAlways"}
	for _, sym := range symbols {
		for _, b := range banned {
			if strings.Contains(sym, b) {
				t.Errorf("the product binary holds test machinery: %s", strings.TrimSpace(sym))
			}
		}
	}
	// The same check must see them in a leytest build, or it proves nothing.
	tagged := filepath.Join(t.TempDir(), "ley-leytest")
	build = exec.Command("go", "build", "-tags", buildtags.Test, "-o", tagged, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags leytest: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "tool", "nm", tagged).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if !strings.Contains(string(out), "internal/failpoint.Hit") {
		t.Errorf("a leytest build has no internal/failpoint.Hit symbol: the check above cannot see failpoints")
	}
}
