//go:build js && wasm

package content

import "embed"

// embedded is the content folder without recipes.json: a js/wasm build is
// the browser's engine, and recipes are the server's secret.
//
//go:embed data/rules.json data/creatures.json data/templates.json data/items.json data/maps
var embedded embed.FS

// clientCopy is true: a client's copy has no recipes, so a blueprint's
// "teaches" names a recipe it cannot check (and using one offline teaches
// nothing).
const clientCopy = true
