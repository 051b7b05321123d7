//go:build !leytest

package director

import "github.com/leyworks/ley/internal/buildtags"

// leyBuildTags are the build tags of the ley binary the tests spawn: a
// release build (the product's tags, no failpoints) when the tests are
// built without leytest.
const leyBuildTags = buildtags.Product
