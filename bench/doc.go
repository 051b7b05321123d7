// Package bench holds ley's cross-package benchmarks: whole ticks, the
// clock driving many Areas, snapshot fan-out, codecs and loopback
// broadcast. Micro-benchmarks sit beside their code; these measure
// scenarios. `make bench` runs them all; bench/RESULTS.md records this
// machine's figures beside the command that produced them.
//
// bench/peer is not Go: it runs ley beside a Node.js peer (a Colyseus
// server) on the same work, driven by the same Node.js clients (`make
// peer`).
//
// bench/hostcost.sh counts, rather than times, what a home's intent costs
// its area host: instructions and cache misses per intent under
// cachegrind, by function, for changes too small to read through a
// shared machine's timing noise.
package bench
