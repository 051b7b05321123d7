//go:build race

package bench

// raceEnabled: the race detector empties sync.Pools at random and
// instruments allocations, so allocation counts mean nothing under it;
// make test reruns those tests without it.
const raceEnabled = true
