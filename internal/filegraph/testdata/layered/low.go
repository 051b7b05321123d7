package layered

// Low needs nothing.
type Low struct{ n int }
