//go:build leytest

package director

// leyBuildTags are the build tags of the ley binary the tests spawn: with
// leytest, its failpoints can be armed (LEY_FAILPOINT).
const leyBuildTags = "leytest"
