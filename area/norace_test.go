//go:build !race

package area

const raceEnabled = false
