package blob

import (
	"testing"

	"github.com/leyworks/ley/ecs"
)

// TestConstantsFollowTheEngine: the bounds and the wall value the blob
// checks with are the engine's, without the blob importing it.
func TestConstantsFollowTheEngine(t *testing.T) {
	if maxSide != ecs.MaxGridSide || wallFloor != ecs.FloorWall {
		t.Fatalf("maxSide %d, wallFloor %d; the engine's are %d and %d", maxSide, wallFloor, ecs.MaxGridSide, ecs.FloorWall)
	}
}
