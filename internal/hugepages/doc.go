// Package hugepages asks Linux to back the Go heap with transparent huge
// pages, where the system leaves that choice to each process
// (/sys/kernel/mm/transparent_hugepage/enabled set to "madvise", as on
// Debian): an area host touches a few cold lines of the state of each of
// hundreds of Areas every second, and with 4 KiB pages nearly every one
// of them is also a TLB miss. With "always" the kernel does this without
// being asked; with "never" the advice is ignored.
//
// The Go runtime does not give this advice itself (it did in Go 1.21.0
// only). Keep gives it to the heap's mappings, found in /proc/self/maps
// around an object known to be on the heap, and again as the heap grows:
// a mapping the runtime adds starts without it. The cost is memory: a
// huge page is resident whole once any of it is touched
// (bench/RESULTS.md, "Huge pages for the heap", gives both figures).
package hugepages
