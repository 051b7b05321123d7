package director

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/leyworks/ley/web"
)

// webCSP is the Content-Security-Policy of the web client's page: its
// own scripts and styles only, no eval, and WebSockets to the area hosts
// (other ports of this host or other machines, so any ws: or wss:).
const webCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// webFile is one file of the embedded web client, ready to serve.
type webFile struct {
	name  string
	data  []byte
	etag  string
	ctype string
}

// webFiles reads the embedded web client once.
var webFiles = sync.OnceValues(func() ([]webFile, error) {
	var out []webFile
	err := fs.WalkDir(web.Files(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.Files(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		out = append(out, webFile{name: p, data: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype})
		return nil
	})
	return out, err
})

// webRoutes returns the routes of the web client (package web, bundled
// in web/dist): index.html at / and each other file at its name. They are
// pages, not API operations, so they are kept out of the route table that
// openapi.yaml documents; paths they do not name keep the API's JSON 404.
// The files are served with an ETag and Cache-Control: no-cache, so a
// browser revalidates and gets a new bundle as soon as the director has
// one.
func (d *Director) webRoutes() []route {
	files, err := webFiles()
	if err != nil { // the files are embedded: only a broken build gets here
		panic("director: embedded web client: " + err.Error())
	}
	routes := make([]route, 0, len(files))
	for _, f := range files {
		pattern := "GET /" + f.name
		if f.name == "index.html" {
			pattern = "GET /{$}"
		}
		routes = append(routes, route{pattern, serveWebFile(f)})
	}
	return routes
}

// serveWebFile serves f (GET and HEAD, conditional on its ETag).
func serveWebFile(f webFile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if f.name == "index.html" {
			h.Set("Content-Security-Policy", webCSP)
		}
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
	})
}
