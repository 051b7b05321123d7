package bundle

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Errors of this package.
var (
	// ErrBuild: esbuild reported errors; the message lists them.
	ErrBuild = errors.New("bundle: esbuild failed")
	// ErrStale: web/dist differs from a fresh bundle.
	ErrStale = errors.New("bundle: web/dist is not what the sources bundle into; run go generate ./web")
	// ErrVendor: the vendored cbor-x is missing a file or is not the locked version.
	ErrVendor = errors.New("bundle: web/third_party/cbor-x does not match web/sdk/package-lock.json")
)

// VendorFiles are the files of the cbor-x package that the browser build
// uses, kept in web/third_party/cbor-x.
var VendorFiles = []string{"LICENSE", "package.json", "index.js", "encode.js", "decode.js", "iterators.js", "scan.js"}

// banners head the scripts: what each is and whose code is inside (the
// console uses the SDK's HTTP client alone, without cbor-x).
var banners = map[string]string{
	"app": "/* ley web client: web/app and web/sdk bundled by web/cmd/bundle (go generate ./web). " +
		"Includes cbor-x (MIT, Kris Zyp: web/third_party/cbor-x/LICENSE) and Go's wasm_exec.js (BSD-3-Clause, The Go Authors: $GOROOT/LICENSE). */",
	"console": "/* ley operator's console: web/app/src/console.ts and web/sdk bundled by web/cmd/bundle (go generate ./web). */",
	"sw":      "/* ley web client's service worker: web/app/src/sw.ts bundled by web/cmd/bundle (go generate ./web). */",
}

// File is one output file, by its name in web/dist.
type File struct {
	Name string
	Data []byte
}

// vendorPlugin resolves the bare import "cbor-x" to the vendored copy, so
// the bundle is the same whether or not web/sdk/node_modules exists; and
// it builds cbor-x without eval, as cbor-x's own "no-eval" builds do
// (`new Function` becomes `new BlockedFunction`, an undefined name: the
// probe at load fails quietly and cbor-x never compiles readers), so the
// page runs under a Content-Security-Policy without 'unsafe-eval'.
func vendorPlugin(web string) api.Plugin {
	dir := filepath.Join(web, "third_party", "cbor-x")
	return api.Plugin{Name: "vendored-cbor-x", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^cbor-x$`}, func(api.OnResolveArgs) (api.OnResolveResult, error) {
			return api.OnResolveResult{Path: filepath.Join(dir, "index.js")}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `third_party[/\\]cbor-x[/\\]decode\.js$`}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
			src, err := os.ReadFile(args.Path)
			if err != nil {
				return api.OnLoadResult{}, err
			}
			out := noEval.ReplaceAll(src, []byte("new BlockedFunction("))
			if bytes.Equal(out, src) {
				return api.OnLoadResult{}, fmt.Errorf("%w: no new Function( in cbor-x's decode.js to block", ErrVendor)
			}
			s := string(out)
			return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
		})
	}}
}

// noEval matches cbor-x's uses of the Function constructor.
var noEval = regexp.MustCompile(`\bnew Function\(`)

// buildErr turns esbuild's messages into one error.
func buildErr(msgs []api.Message) error {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("\n  ")
		if m.Location != nil {
			fmt.Fprintf(&b, "%s:%d:%d: ", m.Location.File, m.Location.Line, m.Location.Column)
		}
		b.WriteString(m.Text)
	}
	return fmt.Errorf("%w:%s", ErrBuild, b.String())
}

// entries are the scripts of the web client: each TypeScript entry under
// app/src, bundled with its CSS into <name>.js and <name>.css; sw is the
// service worker that keeps the client (and its engine) for offline play.
var entries = []string{"app", "console", "sw"}

// EngineFile is the name of the engine in web/dist: engine-<hash>.wasm,
// stored gzipped (the director serves it so, or unzipped to a client
// that takes no gzip), the hash that of the unzipped file, so a new
// engine is a new name and a browser may keep one for ever.
func EngineFile(hash string) string { return "engine-" + hash + ".wasm.gz" }

// Engine builds the browser's engine (web/engine/wasm, GOOS=js
// GOARCH=wasm) with the go command on PATH, reproducibly (-trimpath, no
// VCS stamp), and returns it gzipped, named by [EngineFile], with the
// Go toolchain's wasm_exec.js that runs it.
func Engine(web string) (engine File, wasmExec []byte, err error) {
	root := filepath.Dir(web)
	tmp, err := os.MkdirTemp("", "ley-engine-")
	if err != nil {
		return File{}, nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "engine.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", out, "./web/engine/wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return File{}, nil, fmt.Errorf("%w: go build ./web/engine/wasm: %v\n%s", ErrBuild, err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return File{}, nil, err
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return File{}, nil, fmt.Errorf("bundle: go env GOROOT: %w", err)
	}
	wasmExec, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return File{}, nil, fmt.Errorf("bundle: the Go toolchain's wasm_exec.js: %w", err)
	}
	sum := sha256.Sum256(raw)
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(raw)                                   // into memory: no error
	_ = zw.Close()
	return File{Name: EngineFile(hex.EncodeToString(sum[:6])), Data: z.Bytes()}, wasmExec, nil
}

// goPlugin resolves the bare import "go:wasm_exec" to the Go toolchain's
// wasm_exec.js (which defines globalThis.Go, the engine's loader), so the
// client runs the engine with the runtime support of the Go that built it.
func goPlugin(wasmExec []byte) api.Plugin {
	return api.Plugin{Name: "go-wasm-exec", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^go:wasm_exec$`}, func(api.OnResolveArgs) (api.OnResolveResult, error) {
			return api.OnResolveResult{Path: "wasm_exec.js", Namespace: "go"}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "go"}, func(api.OnLoadArgs) (api.OnLoadResult, error) {
			s := string(wasmExec)
			return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
		})
	}}
}

// defines are the constants the client's scripts are built with: the
// engine's name (LEY_ENGINE) and, for the service worker, the files it
// keeps (LEY_OFFLINE_FILES) under a cache named by them all
// (LEY_OFFLINE_CACHE).
func defines(engine string, files []string) map[string]string {
	sum := sha256.Sum256([]byte(strings.Join(files, "\n")))
	list, _ := json.Marshal(files) // strings: no error
	return map[string]string{
		"LEY_ENGINE":        fmt.Sprintf("%q", strings.TrimSuffix(engine, ".gz")),
		"LEY_OFFLINE_FILES": string(list),
		"LEY_OFFLINE_CACHE": fmt.Sprintf("%q", "ley-"+hex.EncodeToString(sum[:6])),
	}
}

// pages are the files of app/ copied as they are.
var pages = []string{"index.html", "console.html", "favicon.svg"}

// App bundles the web client found under web (the web/ directory): the
// TypeScript entries app/src/main.ts (the player's page) and
// app/src/console.ts (the operator's console), each with its CSS, into
// app.js and app.css, console.js and console.css; and app/index.html,
// app/console.html and app/favicon.svg as they are. The files come
// sorted by name.
func App(web string) ([]File, error) {
	web, err := filepath.Abs(web)
	if err != nil {
		return nil, err
	}
	engine, wasmExec, err := Engine(web)
	if err != nil {
		return nil, err
	}
	files := []File{engine}
	// What the service worker keeps: the player's page and all it loads
	// (the console is an operator's, online only).
	offline := []string{"./", "app.js", "app.css", "favicon.svg", strings.TrimSuffix(engine.Name, ".gz")}
	for _, name := range entries {
		src := name
		if name == "app" {
			src = "main"
		}
		res := api.Build(api.BuildOptions{
			EntryPoints:       []string{filepath.Join(web, "app", "src", src+".ts")},
			Outfile:           filepath.Join(web, "dist", name+".js"),
			AbsWorkingDir:     web,
			Bundle:            true,
			Write:             false,
			Format:            api.FormatIIFE,
			Platform:          api.PlatformBrowser,
			Target:            api.ES2022,
			MinifyWhitespace:  true,
			MinifyIdentifiers: true,
			MinifySyntax:      true,
			Charset:           api.CharsetUTF8,
			LegalComments:     api.LegalCommentsEndOfFile,
			Banner:            map[string]string{"js": banners[name]},
			Define:            defines(engine.Name, offline),
			Plugins:           []api.Plugin{vendorPlugin(web), goPlugin(wasmExec)},
			LogLevel:          api.LogLevelSilent,
		})
		if len(res.Errors) > 0 {
			return nil, buildErr(res.Errors)
		}
		if len(res.Warnings) > 0 {
			return nil, buildErr(res.Warnings)
		}
		for _, o := range res.OutputFiles {
			files = append(files, File{Name: filepath.Base(o.Path), Data: o.Contents})
		}
	}
	for _, name := range pages {
		b, err := os.ReadFile(filepath.Join(web, "app", name))
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		files = append(files, File{Name: name, Data: b})
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return files, nil
}

// Tests bundles the SDK's tests (sdk/test/main.ts under web) into one
// script for a browser page, unminified, with an inline source map; the
// page serves the engine as web/dist holds it (LEY_ENGINE names it).
func Tests(web string) ([]byte, error) {
	web, err := filepath.Abs(web)
	if err != nil {
		return nil, err
	}
	engine, wasmExec, err := Engine(web)
	if err != nil {
		return nil, err
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{filepath.Join(web, "sdk", "test", "main.ts")},
		Outfile:       "tests.js",
		AbsWorkingDir: web,
		Bundle:        true,
		Write:         false,
		Format:        api.FormatIIFE,
		Platform:      api.PlatformBrowser,
		Target:        api.ES2022,
		Sourcemap:     api.SourceMapInline,
		Define:        defines(engine.Name, nil),
		Plugins:       []api.Plugin{vendorPlugin(web), goPlugin(wasmExec)},
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return nil, buildErr(res.Errors)
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("%w: %d output files; want 1", ErrBuild, len(res.OutputFiles))
	}
	return res.OutputFiles[0].Contents, nil
}

// Write bundles the web client under web and replaces web/dist with it.
func Write(web string) error {
	files, err := App(web)
	if err != nil {
		return err
	}
	dist := filepath.Join(web, "dist")
	if err := os.RemoveAll(dist); err != nil {
		return err
	}
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dist, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Check bundles the web client under web and compares it with web/dist:
// an [ErrStale] error names every file that differs, is missing or is
// extra.
func Check(web string) error {
	files, err := App(web)
	if err != nil {
		return err
	}
	dist := filepath.Join(web, "dist")
	var diffs []string
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		got, err := os.ReadFile(filepath.Join(dist, f.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			diffs = append(diffs, f.Name+" is missing")
		case err != nil:
			return err
		case !bytes.Equal(got, f.Data):
			diffs = append(diffs, fmt.Sprintf("%s differs (%d bytes; a fresh bundle has %d)", f.Name, len(got), len(f.Data)))
		}
	}
	entries, err := os.ReadDir(dist)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if !want[e.Name()] {
			diffs = append(diffs, e.Name()+" is not part of the bundle")
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrStale, strings.Join(diffs, "; "))
	}
	return nil
}

// lockedVersion returns the version of package name that
// sdk/package-lock.json under web pins.
func lockedVersion(web, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(web, "sdk", "package-lock.json"))
	if err != nil {
		return "", err
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return "", fmt.Errorf("package-lock.json: %w", err)
	}
	p, ok := lock.Packages["node_modules/"+name]
	if !ok || p.Version == "" {
		return "", fmt.Errorf("%w: package-lock.json pins no %s", ErrVendor, name)
	}
	return p.Version, nil
}

// packageVersion returns the version of the package.json in dir.
func packageVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", dir, err)
	}
	return p.Version, nil
}

// CheckVendor reports an [ErrVendor] error unless web/third_party/cbor-x
// holds every one of [VendorFiles] at the version the lockfile pins.
func CheckVendor(web string) error {
	want, err := lockedVersion(web, "cbor-x")
	if err != nil {
		return err
	}
	dir := filepath.Join(web, "third_party", "cbor-x")
	for _, f := range VendorFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%w: %v", ErrVendor, err)
		}
	}
	got, err := packageVersion(dir)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: vendored cbor-x %s; the lockfile pins %s", ErrVendor, got, want)
	}
	return nil
}

// Vendor copies [VendorFiles] of cbor-x from web/sdk/node_modules (an
// `npm ci` there installs exactly the locked version, checked against the
// lockfile's integrity hash) into web/third_party/cbor-x.
func Vendor(web string) error {
	want, err := lockedVersion(web, "cbor-x")
	if err != nil {
		return err
	}
	src := filepath.Join(web, "sdk", "node_modules", "cbor-x")
	got, err := packageVersion(src)
	if err != nil {
		return fmt.Errorf("bundle: run npm ci in web/sdk first: %w", err)
	}
	if got != want {
		return fmt.Errorf("%w: node_modules has cbor-x %s; the lockfile pins %s (run npm ci)", ErrVendor, got, want)
	}
	dst := filepath.Join(web, "third_party", "cbor-x")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range VendorFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
