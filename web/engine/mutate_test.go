//go:build leytest

package engine_test

import (
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/web/engine/enginetest"
)

// TestMutatedRuleDiverges: with one rule changed (diagonal steps may cut
// walls' corners), the same script runs differently, so comparing runs
// finds a rule that differs between two builds.
func TestMutatedRuleDiverges(t *testing.T) {
	lib := content.Default()
	s, err := enginetest.NewScript(lib, "village", 7, 6, 600, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := enginetest.Run(lib, s)
	if err != nil {
		t.Fatal(err)
	}
	ecs.SetCornersCut(true)
	defer ecs.SetCornersCut(false)
	cut, err := enginetest.Run(lib, s)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := enginetest.Compare(rule, cut); n == 0 {
		t.Fatal("600 ticks of a script ran the same with and without the corner rule")
	}
}
