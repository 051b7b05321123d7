package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director"
)

// TestContentFlagEverywhere: director, run and areahost take --content,
// and --help names its environment twin.
func TestContentFlagEverywhere(t *testing.T) {
	for _, sub := range []string{"director", "run", "areahost"} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{sub, "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "--content ") {
				found = true
				if !strings.Contains(line, "(env LEY_CONTENT)") {
					t.Errorf("ley %s --help: %q; want it to name LEY_CONTENT", sub, line)
				}
			}
		}
		if !found {
			t.Errorf("ley %s --help lists no --content", sub)
		}
	}
}

// TestDirectorContent: no folder is the embedded content and nothing
// passed on to the hosts; a folder is loaded and passed on as an absolute
// path; a folder that is not there stops start-up naming the flag.
func TestDirectorContent(t *testing.T) {
	cfg := director.DefaultConfig()
	if err := directorContent(&cfg, ""); err != nil {
		t.Fatal(err)
	}
	if cfg.Content != content.Default() || cfg.Spawn.Content != "" {
		t.Errorf("no --content: Content %p, Spawn.Content %q; want the embedded content and \"\"", cfg.Content, cfg.Spawn.Content)
	}

	dir := t.TempDir()
	rules := `{"rules": [{"name": "forest", "max_players": 16, "steps_per_second": 5}]}`
	templates := `{"templates": [{"name": "forest", "rules": "forest", "map": "maps/home.tmj"}]}`
	for name, body := range map[string]string{content.RulesFile: rules, content.TemplatesFile: templates} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg = director.DefaultConfig()
	if err := directorContent(&cfg, rel); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Content.Kind("forest"); err != nil {
		t.Errorf("the folder's kind forest: %v", err)
	}
	if cfg.Spawn.Content != dir {
		t.Errorf("Spawn.Content = %q; want the folder's absolute path %q", cfg.Spawn.Content, dir)
	}

	cfg = director.DefaultConfig()
	err = directorContent(&cfg, filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "--content") || !strings.Contains(err.Error(), "no such folder") {
		t.Errorf("a missing folder: %v; want an error naming --content and the folder", err)
	}
}
