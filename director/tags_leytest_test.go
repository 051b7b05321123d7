//go:build leytest

package director

import "github.com/leyworks/ley/internal/buildtags"

// leyBuildTags are the build tags of the ley binary the tests spawn: the
// product's and leytest, its failpoints can be armed (LEY_FAILPOINT).
const leyBuildTags = buildtags.Test
