package procself

import (
	"syscall"
	"testing"
)

// TestRSSGrowsWithTouchedMemory: the figure is this process's resident
// set: touching 64 MiB more raises it by about that much. The memory is
// a fresh anonymous mapping, not the Go heap: a heap allocation may reuse
// pages already resident (an earlier run of this test, with -count, left
// its 64 MiB freed but resident), and then the resident set does not move.
func TestRSSGrowsWithTouchedMemory(t *testing.T) {
	before := RSSBytes()
	if before <= 0 {
		t.Fatalf("RSSBytes() = %d; want a positive resident set", before)
	}
	b, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := RSSBytes()
	if after-before < 48<<20 {
		t.Fatalf("RSS %d -> %d after touching 64 MiB; want it at least 48 MiB higher", before, after)
	}
}
