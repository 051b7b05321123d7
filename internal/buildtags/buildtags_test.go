package buildtags

import (
	"os"
	"regexp"
	"testing"
)

// TestMakefileBuildsWithTheseTags holds the Makefile's tag lists to this
// package's: the binary `make build` makes and the one the tests spawn
// must be built alike.
func TestMakefileBuildsWithTheseTags(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"TAGS": Product, "TESTTAGS": Test} {
		m := regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`).FindSubmatch(mk)
		if m == nil {
			t.Errorf("the Makefile sets no %s ?= ...", name)
			continue
		}
		if got := string(m[1]); got != want {
			t.Errorf("the Makefile's %s is %q, buildtags says %q", name, got, want)
		}
	}
}
