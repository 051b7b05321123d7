//go:build race

package control

// raceEnabled: built with the race detector. The detector takes a
// socket's write to happen before any later read (the syscall package
// tells it so on each read and write); a quietConn's raw calls tell it
// nothing, so under the detector each of its reads and writes also makes
// an empty one through the syscall package, and what one process sent
// over a link is ordered before what the other does on receiving it, as
// with the net package. A product build makes none.
const raceEnabled = true
