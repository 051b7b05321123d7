//go:build !leytest

package director

// leyBuildTags are the build tags of the ley binary the tests spawn: a
// release build (no failpoints) when the tests are built without leytest.
const leyBuildTags = ""
