package layered

// High needs only Low.
func High(l Low) int { return l.n }
