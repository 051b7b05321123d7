package cyclic

// B refers back to A.
type B struct {
	n int
	a *A
}
