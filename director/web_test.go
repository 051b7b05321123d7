package director

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leyworks/ley/web"
)

// TestWebClientServed: the director serves the embedded web client at /
// (index.html with its Content-Security-Policy) and its other files by
// name, revalidated by ETag; paths it does not name keep the API's JSON
// 404.
func TestWebClientServed(t *testing.T) {
	h := (&Director{}).routes()
	get := func(path string, header map[string]string) *http.Response {
		req := httptest.NewRequest("GET", path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	index, err := fs.ReadFile(web.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, ctype string
		want        []byte
	}{
		{"/", "text/html; charset=utf-8", index},
		{"/app.js", "text/javascript; charset=utf-8", nil},
		{"/app.css", "text/css; charset=utf-8", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp := get(tt.path, nil)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || len(body) == 0 {
				t.Fatalf("GET %s = %d, %d bytes; want 200 with the file", tt.path, resp.StatusCode, len(body))
			}
			if got := resp.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type = %q; want %q", got, tt.ctype)
			}
			if tt.want != nil && string(body) != string(tt.want) {
				t.Errorf("GET %s is not the embedded file", tt.path)
			}
			if got := resp.Header.Get("Content-Security-Policy"); (tt.path == "/") != (got != "") || (got != "" && !strings.Contains(got, "script-src 'self'")) {
				t.Errorf("Content-Security-Policy = %q", got)
			}
			again := get(tt.path, map[string]string{"If-None-Match": resp.Header.Get("ETag")})
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("GET %s with its ETag = %d; want 304", tt.path, again.StatusCode)
			}
		})
	}
	resp := get("/nothing.js", nil)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /nothing.js = %d %s; want the API's JSON 404", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestWebRoutesApart: the web client's routes are pages, none of them an
// API path, so the route table stays the API that openapi.yaml documents.
func TestWebRoutesApart(t *testing.T) {
	d := &Director{}
	api := map[string]bool{}
	for _, rt := range d.routeTable() {
		api[rt.pattern] = true
	}
	web := d.webRoutes()
	if len(web) < 3 {
		t.Fatalf("%d web routes; want index.html, app.js and app.css", len(web))
	}
	for _, rt := range web {
		if api[rt.pattern] || strings.HasPrefix(rt.pattern, "GET /v1/") || strings.HasPrefix(rt.pattern, "GET /director/") {
			t.Errorf("web route %q is an API path", rt.pattern)
		}
	}
}

// TestWebClientGzipped: a client that accepts gzip gets the web client's
// files gzipped (and told so, with Vary), each with an ETag of its own
// that revalidates; one that does not, or refuses it with q=0, gets them
// as they are; the favicon answers at /favicon.ico too.
func TestWebClientGzipped(t *testing.T) {
	h := (&Director{}).routes()
	get := func(path string, header map[string]string) *http.Response {
		req := httptest.NewRequest("GET", path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	js, err := fs.ReadFile(web.Files(), "app.js")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		accept string
		gzip   bool
	}{
		{"gzip, deflate, br", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"*", true},
		{"", false},
		{"br", false},
		{"gzip;q=0", false},
		{"gzip;q=0, *", false},
	}
	for _, tt := range tests {
		t.Run("Accept-Encoding="+tt.accept, func(t *testing.T) {
			resp := get("/app.js", map[string]string{"Accept-Encoding": tt.accept})
			body, _ := io.ReadAll(resp.Body)
			if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary = %q; want Accept-Encoding", got)
			}
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tt.gzip {
				t.Fatalf("gzipped = %v; want %v", got, tt.gzip)
			}
			if tt.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(plain, js) {
					t.Fatalf("the gzipped body is not app.js (%v)", err)
				}
				if len(body) >= len(js)/2 {
					t.Errorf("gzipped app.js is %d bytes of %d", len(body), len(js))
				}
			} else if !bytes.Equal(body, js) {
				t.Fatalf("the body is not app.js")
			}
			again := get("/app.js", map[string]string{"Accept-Encoding": tt.accept, "If-None-Match": resp.Header.Get("ETag")})
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("GET /app.js with its ETag = %d; want 304", again.StatusCode)
			}
		})
	}
	plain, zipped := get("/app.js", nil).Header.Get("ETag"), get("/app.js", map[string]string{"Accept-Encoding": "gzip"}).Header.Get("ETag")
	if plain == zipped {
		t.Errorf("the plain and gzipped app.js share the ETag %s", plain)
	}
	icon := get("/favicon.ico", nil)
	if icon.StatusCode != http.StatusOK || icon.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("GET /favicon.ico = %d %s; want 200 image/svg+xml", icon.StatusCode, icon.Header.Get("Content-Type"))
	}
}

// TestEngineServed: the engine (web/dist keeps it gzipped) is served at
// its name without .gz, as application/wasm: gzipped to a client that
// takes gzip, unzipped to one that does not, the same bytes either way,
// and cacheable for ever (its name changes with its contents); the
// player's page may compile it (CSP 'wasm-unsafe-eval') and names it
// nowhere but in its script, which the service worker keeps too.
func TestEngineServed(t *testing.T) {
	h := (&Director{}).routes()
	get := func(path, accept string) (*http.Response, []byte) {
		req := httptest.NewRequest("GET", path, nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		return rec.Result(), body
	}
	var name string
	entries, err := fs.ReadDir(web.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "engine-") && strings.HasSuffix(e.Name(), ".wasm.gz") {
			name = strings.TrimSuffix(e.Name(), ".gz")
		}
	}
	if name == "" {
		t.Fatal("web/dist holds no engine-<hash>.wasm.gz")
	}
	plain, raw := get("/"+name, "")
	zipped, gz := get("/"+name, "gzip")
	if plain.StatusCode != http.StatusOK || zipped.StatusCode != http.StatusOK {
		t.Fatalf("GET /%s = %d / %d; want 200", name, plain.StatusCode, zipped.StatusCode)
	}
	for _, r := range []*http.Response{plain, zipped} {
		if ct, cc := r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"); ct != "application/wasm" || !strings.Contains(cc, "immutable") {
			t.Errorf("Content-Type %q, Cache-Control %q; want application/wasm, immutable", ct, cc)
		}
	}
	if zipped.Header.Get("Content-Encoding") != "gzip" || plain.Header.Get("Content-Encoding") != "" {
		t.Errorf("Content-Encoding %q (gzip asked) and %q (not)", zipped.Header.Get("Content-Encoding"), plain.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, raw) || !bytes.HasPrefix(raw, []byte("\x00asm")) {
		t.Fatalf("the gzipped engine unzips to %d bytes (%v); the plain one is %d bytes of WebAssembly: %v", len(unzipped), err, len(raw), bytes.HasPrefix(raw, []byte("\x00asm")))
	}
	index, _ := get("/", "")
	if csp := index.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "'wasm-unsafe-eval'") || strings.Contains(csp, " 'unsafe-eval'") {
		t.Errorf("the page's CSP %q does not let it compile the engine", csp)
	}
	for _, script := range []string{"/app.js", "/sw.js"} {
		if _, js := get(script, ""); !bytes.Contains(js, []byte(name)) {
			t.Errorf("%s does not name %s", script, name)
		}
	}
}
