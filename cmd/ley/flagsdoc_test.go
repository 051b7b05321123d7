package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateFlagsDoc = flag.Bool("update-flags-doc", false, "rewrite the Flags section of docs/operations.md from the commands")

// TestOperationsDocListsEveryFlag keeps docs/operations.md's Flags section
// what the commands say: every command's flag table (its --help) appears
// there verbatim. go test ./cmd/ley -run TestOperationsDoc -update-flags-doc
// rewrites the section.
func TestOperationsDocListsEveryFlag(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "operations.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot()
	var section strings.Builder
	section.WriteString("## Flags\n\nGenerated from `ley <command> --help` (`go test ./cmd/ley -run TestOperationsDoc -update-flags-doc`).\n")
	for _, name := range []string{"run", "director", "areahost", "migrate", "load", "ladder", "demo"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		table := cmd.Flags().FlagUsages()
		section.WriteString("\n### ley " + name + "\n\n```\nFlags:\n" + table + "```\n")
		if !*updateFlagsDoc && !strings.Contains(string(doc), "```\nFlags:\n"+table+"```") {
			t.Errorf("docs/operations.md's flags of ley %s are not what the command says; rerun with -update-flags-doc", name)
		}
	}
	if !*updateFlagsDoc {
		return
	}
	text := string(doc)
	i := strings.Index(text, "## Flags\n")
	if i < 0 {
		t.Fatal("docs/operations.md has no ## Flags section")
	}
	rest := text[i+len("## Flags\n"):]
	end := len(text)
	if j := strings.Index(rest, "\n## "); j >= 0 {
		end = i + len("## Flags\n") + j + 1
	}
	out := text[:i] + section.String() + text[end:]
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
