package hugepages

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"
	"unsafe"
)

// chunk is the Go heap's mapping granule on Linux: the runtime maps heap
// memory in whole 4 MiB chunks (its pallocChunkBytes), each aligned to
// 4 MiB, within arenas it reserved beforehand (PROT_NONE).
const chunk = 4 << 20

// Span is one mapping of the process's address space, [Start, End).
type Span struct{ Start, End uintptr }

// mapping is one line of /proc/self/maps.
type mapping struct {
	Span
	perms string
	anon  bool // no file, no name
}

// Heap returns the heap's mappings listed in maps (the format of
// /proc/self/maps), given the address of an object on the heap: the run
// of anonymous mappings around the one holding it, each ending where the
// next begins (the heap's arenas, mapped or only reserved), and of those
// the private read-write ones on the 4 MiB grid. Thread stacks, the
// binary's bss, the C heap and the C allocator's arenas lie apart from
// that run, each behind a guard page, a file or a gap.
func Heap(maps io.Reader, at uintptr) ([]Span, error) {
	var all []mapping
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode [path]
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("hugepages: bad mapping %q", sc.Text())
		}
		all = append(all, mapping{Span{uintptr(start), uintptr(end)}, string(f[1]), len(f) == 5 && string(f[4]) == "0"})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(m mapping) bool { return m.Start <= at && at < m.End })
	if i < 0 || !all[i].anon {
		return nil, fmt.Errorf("hugepages: no anonymous mapping holds the heap address %#x", at)
	}
	lo, hi := i, i
	for lo > 0 && all[lo-1].anon && all[lo-1].End == all[lo].Start {
		lo--
	}
	for hi+1 < len(all) && all[hi+1].anon && all[hi+1].Start == all[hi].End {
		hi++
	}
	var out []Span
	for _, m := range all[lo : hi+1] {
		if m.perms == "rw-p" && m.Start%chunk == 0 && m.End%chunk == 0 {
			out = append(out, m.Span)
		}
	}
	return out, nil
}

// probe is an object on the heap: where it lies tells Advise where the
// heap is.
var probe = onHeap()

// onHeap returns a new object on the heap: a call the compiler may not
// inline, whose result escapes, so that the object is neither on a stack
// nor laid out statically in the binary's data.
//
//go:noinline
func onHeap() *[64]byte { return new([64]byte) }

// Advise advises every heap mapping of this process MADV_HUGEPAGE and
// returns how many bytes they span. Advice already given is given again
// (the kernel keeps it; nothing changes). Where the system has no
// transparent huge pages it returns an error.
func Advise() (int64, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("hugepages: %w", err)
	}
	defer f.Close()
	spans, err := Heap(f, uintptr(unsafe.Pointer(probe)))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, s := range spans {
		if err := advise(s); err != nil {
			return n, fmt.Errorf("hugepages: madvise %#x-%#x: %w", s.Start, s.End, err)
		}
		n += int64(s.End - s.Start)
	}
	return n, nil
}

// Keep advises the heap at once and then every period until ctx ends, so
// that mappings the heap grows by get the advice too. It reports the
// first failure to fail (and stops: the system has no transparent huge
// pages, or no /proc) and returns when ctx ends.
func Keep(ctx context.Context, period time.Duration, fail func(error)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if _, err := Advise(); err != nil {
			fail(err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
