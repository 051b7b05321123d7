package web

import (
	"embed"
	"io/fs"
)

//go:generate go run ./cmd/bundle

// dist is the bundled web client, as web/cmd/bundle writes it.
//
//go:embed dist
var dist embed.FS

// Files returns the bundled web client at its root: the player's page
// (index.html, app.js, app.css), the operator's console (console.html,
// console.js, console.css) and favicon.svg. It is read-only and safe for concurrent use.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil { // "dist" is a valid path, embedded above
		panic(err)
	}
	return sub
}
