package content

import (
	"io/fs"
	"sync"
)

// Embedded returns the content built into the binary (rules.json,
// creatures.json, templates.json, items.json, recipes.json and maps/), a
// starting point for an operator's own folder. In the browser's engine
// (a js/wasm build) it holds no recipes.json: recipes are the server's
// secret, and nothing shipped to a client may carry them.
func Embedded() fs.FS {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		panic(err) // "data" is a valid path; fs.Sub fails on nothing else
	}
	return sub
}

var loadDefault = sync.OnceValues(func() (*Library, error) { return Load(Embedded()) })

// Default returns the embedded library, loaded on first use and shared
// afterwards. It panics if the embedded content is broken, which the
// package's tests rule out.
func Default() *Library {
	lib, err := loadDefault()
	if err != nil {
		panic("content: the embedded content is broken: " + err.Error())
	}
	return lib
}
