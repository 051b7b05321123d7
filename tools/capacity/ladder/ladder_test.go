package ladder_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
)

func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }

func TestQuickLadderWritesReport(t *testing.T) {
	cfg := ladder.QuickConfig()
	cfg.Binary = realmtest.Binary(t)
	cfg.Command = "go test ./tools/capacity/ladder"
	// Pinned where there are two CPUs to pin to (the realm on one, the
	// driver, this test, on the other), as players per core is measured.
	pinned := runtime.NumCPU() >= 2
	if pinned {
		pin, err := ladder.ParsePin("0:1")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Pin = pin
	}
	rep, err := ladder.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if pinned && rep.Pin != "0:1" {
		t.Errorf("the report's pin: %q; want 0:1, the realm on CPU 0, the driver on CPU 1", rep.Pin)
	}
	if len(rep.Rungs) == 0 {
		t.Fatal("no rungs climbed")
	}
	for i, g := range rep.Rungs {
		if g.Load.Connected == 0 || g.Load.Gap.Count == 0 {
			t.Errorf("rung %d: connected %d, gaps %d; want both > 0", i, g.Load.Connected, g.Load.Gap.Count)
		}
		if g.Hosts == 0 || g.HostsRSSKiB == 0 || g.DirectorRSSKiB == 0 {
			t.Errorf("rung %d: hosts %d, hosts RSS %d, director RSS %d; want all > 0", i, g.Hosts, g.HostsRSSKiB, g.DirectorRSSKiB)
		}
		if g.Held != (len(g.Broken) == 0) {
			t.Errorf("rung %d: held %v with broken %v", i, g.Held, g.Broken)
		}
	}
	dir := t.TempDir()
	paths, err := rep.Write(dir, "ladder-quick")
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	want := []string{"ladder-quick.md", "ladder-quick.json", "ladder-quick-gap.svg", "ladder-quick-cpu.svg", "ladder-quick-rss.svg"}
	if len(paths) != len(want) {
		t.Errorf("wrote %v; want %d files", paths, len(want))
	}
	for _, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, w))
		if err != nil {
			t.Errorf("%s: %v", w, err)
			continue
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", w)
		}
		if strings.HasSuffix(w, ".svg") && !strings.Contains(string(b), "<svg") {
			t.Errorf("%s is not an SVG", w)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ladder-quick.json"))
	var back ladder.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if len(back.Rungs) != len(rep.Rungs) || back.PerArea != cfg.PerArea || back.Command != cfg.Command {
		t.Errorf("report JSON round trip: %d rungs, per area %d, command %q", len(back.Rungs), back.PerArea, back.Command)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "ladder-quick.md"))
	if !strings.Contains(string(md), "| Areas |") || !strings.Contains(string(md), "ladder-quick-gap.svg") {
		t.Errorf("report Markdown lacks its table or charts:\n%s", md)
	}
}

func TestParsePin(t *testing.T) {
	for in, want := range map[string]string{"0:1": "0:1", "0-2:3": "0,1,2:3", "2,0:1": "0,2:1", "0:1-3": "0:1,2,3"} {
		p, err := ladder.ParsePin(in)
		if err != nil || p.String() != want {
			t.Errorf("ParsePin(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0:0", "0-1:1", "a:1", "0:", "2-1:3", "-1:2"} {
		if _, err := ladder.ParsePin(bad); !errors.Is(err, ladder.ErrConfig) {
			t.Errorf("ParsePin(%q): %v; want an ErrConfig", bad, err)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	tests := []struct {
		name string
		tune func(*ladder.Config)
	}{
		{"rungs that do not climb", func(c *ladder.Config) { c.Rungs = []int{4, 2} }},
		{"no rungs", func(c *ladder.Config) { c.Rungs = nil }},
		{"no players", func(c *ladder.Config) { c.PerArea = 0 }},
	}
	for _, tc := range tests {
		cfg := ladder.QuickConfig()
		tc.tune(&cfg)
		if _, err := ladder.Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
