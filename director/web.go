package director

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leyworks/ley/web"
)

// webCSP is the Content-Security-Policy of the web client's pages: their
// own scripts and styles only, no eval but the compiling of WebAssembly
// (the engine, web/engine), and WebSockets to the area hosts (other ports
// of this host or other machines, so any ws: or wss:).
const webCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// webFile is one file of the embedded web client, ready to serve: as it
// is, and gzipped once at start (gz, nil when gzip would not make it
// smaller), each with its own ETag. A file stored gzipped (name.gz: the
// engine) is served under its name without .gz, gz as stored, and
// unzipped only for a client that takes no gzip (plain).
type webFile struct {
	name   string
	data   []byte
	plain  func() ([]byte, error) // a stored-gzipped file's unzipped bytes, made on first need
	etag   string
	gz     []byte
	gzEtag string
	ctype  string
	// immutable: its name changes with its contents (the engine), so a
	// browser may keep it for ever.
	immutable bool
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
		if name, ok := strings.CutSuffix(p, ".gz"); ok {
			f, err := storedGzip(name, b)
			if err != nil {
				return err
			}
			out = append(out, f)
			return nil
		}
		sum := sha256.Sum256(b)
		f := webFile{name: p, data: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(p)}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // a valid level: no error
		_, _ = zw.Write(b)                                     // into memory: no error
		_ = zw.Close()
		if z.Len() < len(b) {
			f.gz, f.gzEtag = z.Bytes(), `"`+hex.EncodeToString(sum[:12])+`-gz"`
		}
		out = append(out, f)
		return nil
	})
	return out, err
})

// storedGzip is a file web/dist keeps gzipped (the engine, 1.8 MB):
// served gzipped as it is, and unzipped the first time a client that
// takes no gzip asks (most browsers do take it: a director keeps 7 MB
// less for nothing).
func storedGzip(name string, gz []byte) (webFile, error) {
	if _, err := gzip.NewReader(bytes.NewReader(gz)); err != nil {
		return webFile{}, fmt.Errorf("%s.gz: %w", name, err)
	}
	sum := sha256.Sum256(gz)
	etag := hex.EncodeToString(sum[:12])
	plain := sync.OnceValues(func() ([]byte, error) {
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	})
	return webFile{name: name, plain: plain, etag: `"` + etag + `"`, gz: gz, gzEtag: `"` + etag + `-gz"`, ctype: contentType(name), immutable: true}, nil
}

// contentType is the Content-Type of a web file, by its extension.
func contentType(name string) string {
	if ctype := mime.TypeByExtension(path.Ext(name)); ctype != "" {
		return ctype
	}
	return "application/octet-stream"
}

// webRoutes returns the routes of the web client (package web, bundled
// in web/dist): index.html at /, the operator's console (console.html)
// at /console, and each other file at its name, and the
// favicon also at /favicon.ico (where a browser looks for one on a page
// that names none, such as this API's JSON). They are pages, not API
// operations, so they are kept out of the route table that openapi.yaml
// documents; paths they do not name keep the API's JSON 404. The files
// are served with an ETag and Cache-Control: no-cache, so a browser
// revalidates and gets a new bundle as soon as the director has one, and
// gzipped to a client that accepts it (Vary: Accept-Encoding).
func (d *Director) webRoutes() []route {
	files, err := webFiles()
	if err != nil { // the files are embedded: only a broken build gets here
		panic("director: embedded web client: " + err.Error())
	}
	routes := make([]route, 0, len(files))
	for _, f := range files {
		pattern := "GET /" + f.name
		switch f.name {
		case "index.html":
			pattern = "GET /{$}"
		case "console.html":
			pattern = "GET /console"
		}
		routes = append(routes, route{pattern, serveWebFile(f)})
		if f.name == "favicon.svg" {
			routes = append(routes, route{"GET /favicon.ico", serveWebFile(f)})
		}
	}
	return routes
}

// acceptsGzip reports whether a request's Accept-Encoding takes gzip: named
// (or "*") with a quality above 0 (RFC 9110, section 12.5.3).
func acceptsGzip(r *http.Request) bool {
	star := false
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				return q > 0
			case "*":
				star = q > 0
			}
		}
	}
	return star
}

// serveWebFile serves f (GET and HEAD, conditional on its ETag).
func serveWebFile(f webFile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("Cache-Control", "no-cache")
		if f.immutable {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		body, etag := f.data, f.etag
		if f.gz != nil {
			h.Set("Vary", "Accept-Encoding")
			if acceptsGzip(r) {
				body, etag = f.gz, f.gzEtag
				h.Set("Content-Encoding", "gzip")
			}
		}
		if body == nil && f.plain != nil {
			var err error
			if body, err = f.plain(); err != nil { // web/dist is embedded and checked: only a broken build gets here
				http.Error(w, "the embedded "+f.name+" does not unzip: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		h.Set("ETag", etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if path.Ext(f.name) == ".html" {
			h.Set("Content-Security-Policy", webCSP)
		}
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
	})
}

// OfferDemoLogin makes GET /director/info offer the login email/password
// to anyone, so that the web client's landing can play the demo in one
// click. Call it only for a login that is public anyway (`ley run`'s demo
// account with its default password): the info route needs no session.
// Safe for concurrent use.
func (d *Director) OfferDemoLogin(email, password string) {
	d.demo.Store(&DemoLogin{Email: email, Password: password})
}

// demoLogin returns the login d offers, if any.
func (d *Director) demoLogin() (DemoLogin, bool) {
	if l := d.demo.Load(); l != nil {
		return *l, true
	}
	return DemoLogin{}, false
}
