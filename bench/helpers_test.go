package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/leyworks/ley/internal/buildtags"
)

// secondsFromEnv is the duration the environment variable name gives in
// whole seconds, or def when it is unset.
func secondsFromEnv(b *testing.B, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, s, err)
	}
	return time.Duration(n) * time.Second
}

// buildBinary builds the main package at pkg (relative to bench/) into the
// benchmark's temporary directory and returns its path.
func buildBinary(b *testing.B, pkg, name string) string {
	bin := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-tags", buildtags.Product, "-o", bin, pkg)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("build %s: %v", name, err)
	}
	return bin
}
