//go:build leytest

package sqlcore

import "context"

// Switches that remove the store's two fences of a snapshot, for the
// transfer model test's mutation check only (director/model_test.go),
// which sets them before it starts any director. SplitSnapshot, when not
// nil, has WriteSnapshot store the Area's blob and its characters' states
// in two transactions, calling it between them (a non-nil error ends the
// write there: a crash between the two); NoSnapshotAreaCheck writes a
// character's state even where its row names another Area. Both are off
// in every other use, and exist only in leytest builds.
var (
	SplitSnapshot       func(ctx context.Context) error
	NoSnapshotAreaCheck bool
)

func snapshotSplit() func(context.Context) error { return SplitSnapshot }

func snapshotAreaCheckOff() bool { return NoSnapshotAreaCheck }
