//go:build !leytest

package ecs

// cornersCut reports whether a diagonal step may cut a wall's corner:
// never, in this build (leytest builds let the divergence test's mutation
// check turn the rule off, to show that a changed rule is found).
func cornersCut() bool { return false }
