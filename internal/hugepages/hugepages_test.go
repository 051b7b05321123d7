package hugepages

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestHeapTakesTheGoHeapsMappingsOnly: of a real area host's maps (taken
// from one, Go 1.26, randomised heap base; a shared mapping and files
// added, one of them right below the heap), only the heap's mappings are taken, those on the runtime's
// 4 MiB grid in the run of anonymous mappings around a heap address: not
// the binary's bss, the C heap, a thread stack (on the grid too, behind
// its guard page), the C allocator's arenas, a file or a shared mapping.
func TestHeapTakesTheGoHeapsMappingsOnly(t *testing.T) {
	maps := `00400000-00f8e000 r-xp 00000000 fe:00 9978333                            /tmp/ley-new
01de4000-02384000 rw-p 019e4000 fe:00 9978333                            /tmp/ley-new
02384000-043d2000 rw-p 00000000 00:00 0 
09bdf000-09c00000 rw-p 00000000 00:00 0                                  [heap]
339e47800000-339e47c00000 rw-p 00000000 fe:00 43                         /var/lib/ley/data.db
339e47c00000-339e48000000 rw-p 00000000 00:00 0 
339e48000000-339e49000000 ---p 00000000 00:00 0 
339e49000000-339e4dc00000 rw-p 00000000 00:00 0 
339e4dc00000-339e50000000 ---p 00000000 00:00 0 
339e50000000-339e50400000 rw-p 00000000 00:00 0 
339e50400000-339e50401000 rw-p 00000000 00:00 0 
7fd7ec000000-7fd7ec021000 rw-p 00000000 00:00 0 
7fd7ec021000-7fd7f0000000 ---p 00000000 00:00 0 
7fd7f77ff000-7fd7f7800000 ---p 00000000 00:00 0 
7fd7f7800000-7fd7f8000000 rw-p 00000000 00:00 0 
7fd814f8d000-7fd81578d000 rw-p 00000000 00:00 0 
7fd820000000-7fd820800000 rw-s 00000000 00:01 1234                       /dev/zero (deleted)
7fd830000000-7fd830400000 rw-p 00000000 fe:00 42                         /var/lib/ley/data.db-shm
7ffc1a2e3000-7ffc1a304000 rw-p 00000000 00:00 0                          [stack]
`
	want := []Span{{0x339e47c00000, 0x339e48000000}, {0x339e49000000, 0x339e4dc00000}, {0x339e50000000, 0x339e50400000}}
	for _, at := range []uintptr{0x339e49001000, 0x339e4dbfffff, 0x339e50000000, 0x339e47c00000} {
		got, err := Heap(strings.NewReader(maps), at)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Heap(at %#x) = %x; want %x", at, got, want)
		}
	}
	for _, at := range []uintptr{0x7fd830000000, 0x1000, 0x00400000} { // a file's, none, the binary's
		if got, err := Heap(strings.NewReader(maps), at); err == nil {
			t.Fatalf("Heap(at %#x) = %x; want an error: not an anonymous mapping", at, got)
		}
	}
	if _, err := Heap(strings.NewReader("zzz rw-p 00000000 00:00 0\n"), 0); err == nil {
		t.Fatal("Heap took a mapping without bounds")
	}
}

// TestAdviseReachesTheHeap: after Advise, the mapping holding a fresh
// 64 MiB heap allocation carries the kernel's huge-page advice ("hg" in
// its VmFlags in /proc/self/smaps).
func TestAdviseReachesTheHeap(t *testing.T) {
	b := make([]byte, 64<<20)
	n, err := Advise()
	if err != nil {
		t.Fatal(err)
	}
	if n < int64(len(b)) {
		t.Fatalf("Advise spanned %d bytes; want at least the %d just allocated", n, len(b))
	}
	addr := uint64(uintptrOf(b))
	flags := vmFlags(t, addr)
	if !slices.Contains(flags, "hg") {
		t.Fatalf("the heap mapping at %#x has VmFlags %v; want hg (MADV_HUGEPAGE)", addr, flags)
	}
	b[0] = 1
}

// TestKeepAdvisesWhatTheHeapGrowsBy: once Keep's first round has advised
// the heap, the heap is grown (64 MiB allocations, until one lands in a
// mapping without the advice: one the runtime just added), and that
// mapping gets the advice at one of Keep's next rounds; Keep returns when
// its context ends.
func TestKeepAdvisesWhatTheHeapGrowsBy(t *testing.T) {
	pre := make([]byte, 8<<20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Keep(ctx, 50*time.Millisecond, func(err error) { t.Errorf("Keep failed: %v", err) })
	}()
	advised(t, pre) // the first round
	var grown [][]byte
	for len(grown) < 32 {
		b := make([]byte, 64<<20)
		grown = append(grown, b)
		if !slices.Contains(vmFlags(t, uint64(uintptrOf(b))), "hg") {
			advised(t, b) // a later round
			break
		}
	}
	if len(grown) == 32 {
		t.Fatal("32 allocations of 64 MiB all landed in mappings already advised: the heap never grew")
	}
	pre[0] = 1
	cancel()
	<-done
}

// advised waits until the heap mapping holding b carries the huge-page
// advice, and fails the test if it does not within 30 s.
func advised(t *testing.T, b []byte) {
	t.Helper()
	addr := uint64(uintptrOf(b))
	for deadline := time.Now().Add(30 * time.Second); !slices.Contains(vmFlags(t, addr), "hg"); {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s of Keep, the heap mapping at %#x has VmFlags %v; want hg", addr, vmFlags(t, addr))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// vmFlags returns the VmFlags of the mapping of this process holding addr.
func vmFlags(t *testing.T, addr uint64) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	in := false
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			s, _ := strconv.ParseUint(lo, 16, 64)
			e, _ := strconv.ParseUint(hi, 16, 64)
			in = s <= addr && addr < e
			continue
		}
		if in {
			if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return strings.Fields(rest)
			}
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

// uintptrOf returns the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
