//go:build !(js && wasm)

package content

import "embed"

// embedded is the whole content folder, recipes included.
//
//go:embed data
var embedded embed.FS

// clientCopy is false: this build holds the recipes, so a blueprint's
// recipe is checked against them.
const clientCopy = false
