package cyclic

// C only uses A: it is above the cycle, not in it.
func C(a A) int { return a.Size() }
