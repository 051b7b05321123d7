// Package bench holds ley's cross-package benchmarks: whole ticks, the
// clock driving many Areas, snapshot fan-out, codecs and loopback
// broadcast. Micro-benchmarks sit beside their code; these measure
// scenarios. `make bench` runs them all; bench/RESULTS.md records this
// machine's figures beside the command that produced them.
package bench
