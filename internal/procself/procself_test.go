package procself

import (
	"runtime"
	"testing"
)

// TestRSSGrowsWithTouchedMemory: the figure is this process's resident
// set: touching 64 MiB more raises it by about that much.
func TestRSSGrowsWithTouchedMemory(t *testing.T) {
	before := RSSBytes()
	if before <= 0 {
		t.Fatalf("RSSBytes() = %d; want a positive resident set", before)
	}
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := RSSBytes()
	runtime.KeepAlive(b)
	if after-before < 48<<20 {
		t.Fatalf("RSS %d -> %d after touching 64 MiB; want it at least 48 MiB higher", before, after)
	}
}
