//go:build !race

package control

// raceEnabled: built with the race detector (see race_on.go).
const raceEnabled = false
