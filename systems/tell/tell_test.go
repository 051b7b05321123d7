package tell

import (
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// TestEveryOutcomeHasACode: every outcome the engine can answer maps to a
// wire code of its own (a gap would tell a refused player OK).
func TestEveryOutcomeHasACode(t *testing.T) {
	for o := ecs.OutcomeApplied; o.String() != "OUTCOME?"; o++ {
		if int(o) >= len(outcomeCodes) {
			t.Fatalf("outcome %v has no wire code", o)
		}
		if o != ecs.OutcomeApplied && Code(o) == wire.CodeOK {
			t.Fatalf("outcome %v maps to OK", o)
		}
	}
	if Code(ecs.OutcomeApplied) != wire.CodeOK {
		t.Fatal("applied does not map to OK")
	}
}

// TestEveryIntentKindMaps: every intent kind of the wire reaches the
// engine as its own kind; an unknown one as kind 0 (answered MALFORMED).
func TestEveryIntentKindMaps(t *testing.T) {
	seen := map[ecs.IntentKind]bool{}
	for k := wire.IntentStep; k <= wire.IntentBuy; k++ {
		got := Intent(&wire.Intent{Kind: k, Seq: 7}, 3)
		if got.Kind == 0 || seen[got.Kind] || got.Seq != 7 || got.Tag != 3 {
			t.Fatalf("wire kind %d became %+v", k, got)
		}
		seen[got.Kind] = true
	}
	if got := Intent(&wire.Intent{Kind: wire.IntentBuy + 1}, 0); got.Kind != 0 {
		t.Fatalf("an unknown kind became %v", got.Kind)
	}
}
