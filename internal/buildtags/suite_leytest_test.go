//go:build leytest

package buildtags

import (
	"testing"

	arche "github.com/mlange-42/arche/ecs"
)

// TestTheSuiteRunsTheProductsWorlds fails when the suite is built with the
// test machinery but without the product's tags: it would then test
// Worlds of another size than the ones that ship.
func TestTheSuiteRunsTheProductsWorlds(t *testing.T) {
	if arche.MaskTotalBits != 64 {
		t.Errorf("arche's masks are %d bits: this suite was built without the tag tiny (make test builds with -tags %s)", arche.MaskTotalBits, Test)
	}
}
