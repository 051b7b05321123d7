package filegraph

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDirectorAndAreaFilesFormNoCycle holds the two packages everything
// passes through, and the packages under them, to files that read from the
// bottom up, in the product build and in the test build (leytest).
func TestDirectorAndAreaFilesFormNoCycle(t *testing.T) {
	for _, tags := range [][]string{nil, {"leytest"}} {
		gs, err := Load("../..", tags, "./director/...", "./area/...")
		if err != nil {
			t.Fatal(err)
		}
		if len(gs) < 8 {
			t.Fatalf("tags %v: loaded %d packages, want director, area and the packages under them", tags, len(gs))
		}
		for _, g := range gs {
			for _, c := range g.Cycles() {
				t.Errorf("tags %v: %s: files in a cycle: %s", tags, g.Package, describe(g, c))
			}
		}
	}
}

// describe names a cycle's files and the names that tie each to the next.
func describe(g Graph, cycle []string) string {
	var b strings.Builder
	b.WriteString(strings.Join(cycle, " "))
	for _, from := range cycle {
		for _, to := range cycle {
			why := g.Why[[2]string{from, to}]
			if len(why) == 0 {
				continue
			}
			names := make([]string, 0, len(why))
			for n := range why {
				names = append(names, n)
			}
			sort.Strings(names)
			fmt.Fprintf(&b, "\n\t%s -> %s: %s", from, to, strings.Join(names, " "))
		}
	}
	return b.String()
}

// TestCyclesFound checks the check: a package whose two files refer to
// each other is one cycle of those two, and a file above it is not in it;
// a layered package has none.
func TestCyclesFound(t *testing.T) {
	gs, err := Load(".", nil, "./testdata/cyclic", "./testdata/layered")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 {
		t.Fatalf("loaded %d packages, want 2", len(gs))
	}
	for _, g := range gs {
		cs := g.Cycles()
		switch {
		case strings.HasSuffix(g.Package, "/cyclic"):
			if len(cs) != 1 || !slices.Equal(cs[0], []string{"a.go", "b.go"}) {
				t.Errorf("cyclic: cycles %v, want [[a.go b.go]]", cs)
			}
			if !g.Edges["c.go"]["a.go"] || g.Edges["a.go"]["c.go"] {
				t.Errorf("cyclic: edges %v, want c.go -> a.go only", g.Edges["c.go"])
			}
			if why := g.Why[[2]string{"a.go", "b.go"}]; !why["B"] || !why["n"] {
				t.Errorf("cyclic: a.go -> b.go is made of %v, want B and n", why)
			}
		case strings.HasSuffix(g.Package, "/layered"):
			if len(cs) != 0 {
				t.Errorf("layered: cycles %v, want none", cs)
			}
		default:
			t.Errorf("unexpected package %s", g.Package)
		}
	}
}
