package cyclic

// A is used by b.go's B and uses it.
type A struct{ b *B }

func (a A) Size() int { return a.b.n }
