package engine_test

import (
	"testing"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/web/engine/enginetest"
)

// TestSimIsDeterministic: the same script on two Sims of one template
// does the same thing, tick by tick (the premise of the divergence test:
// any difference it finds is the two builds', never chance), and the
// scripts do things worth comparing: bodies move and doors answer.
func TestSimIsDeterministic(t *testing.T) {
	lib := content.Default()
	for _, tpl := range []string{"village", "arena", "home"} {
		s, err := enginetest.NewScript(lib, tpl, 7, 6, 600, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		a, err := enginetest.Run(lib, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := enginetest.Run(lib, s)
		if err != nil {
			t.Fatal(err)
		}
		if n, first := enginetest.Compare(a, b); n != 0 {
			t.Fatalf("%s: two runs of one script differ in %d ticks; first %s", tpl, n, first)
		}
		if moved := moves(a); moved < 100 {
			t.Fatalf("%s: %d moves in 600 ticks: the script does too little to compare", tpl, moved)
		}
	}
}

// moves counts the ticks' body moves in a run.
func moves(run []enginetest.Tick) int {
	n := 0
	for i := 1; i < len(run); i++ {
		prev := map[int32][2]int32{}
		for b := run[i-1].Bodies; len(b) >= 5; b = b[5:] {
			prev[b[0]] = [2]int32{b[1], b[2]}
		}
		for b := run[i].Bodies; len(b) >= 5; b = b[5:] {
			if p, ok := prev[b[0]]; ok && p != [2]int32{b[1], b[2]} {
				n++
			}
		}
	}
	return n
}
