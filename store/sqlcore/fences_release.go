//go:build !leytest

package sqlcore

import "context"

// The store's two fences of a snapshot that the transfer model test's
// mutation check removes (fences_leytest.go) stand in this build: the
// characters' states are written in the Area's transaction, and only
// where their rows still name the Area.

func snapshotSplit() func(context.Context) error { return nil }

func snapshotAreaCheckOff() bool { return false }
