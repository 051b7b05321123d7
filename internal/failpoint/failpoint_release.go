//go:build !leytest

package failpoint

// Enabled reports whether this build holds failpoints (the leytest tag).
const Enabled = false

// Hit does nothing: this build holds no failpoints.
func Hit(string) {}

// Armed reports false: this build holds no failpoints.
func Armed(string) bool { return false }

// Panic does nothing: this build holds no failpoints.
func Panic(string) {}
