//go:build leytest

package ecs

import "sync/atomic"

// cornersCutOn removes the corner rule of [Grid.CheckStep], process-wide:
// a diagonal step may cut a wall's corner. It exists only in leytest
// builds, for the divergence test's mutation check (SetCornersCut).
var cornersCutOn atomic.Bool

// SetCornersCut lets diagonal steps cut walls' corners (on) or not (the
// rule). Tests only: the divergence test mutates the server's rules with
// it and must then see the browser's engine disagree.
func SetCornersCut(on bool) { cornersCutOn.Store(on) }

// cornersCut reports whether the corner rule is off (only after
// SetCornersCut(true)).
func cornersCut() bool { return cornersCutOn.Load() }
