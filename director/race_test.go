//go:build race

package director

// raceEnabled: the race detector slows the in-process transfer model
// about fourteenfold; the mutation check, which runs it thousands of
// times, runs without it.
const raceEnabled = true
