//go:build race

package area

// raceEnabled: the race detector empties sync.Pools at random, so
// allocation counts mean nothing under it; make test reruns those tests
// without it.
const raceEnabled = true
