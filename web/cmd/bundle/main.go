// Command bundle builds ley's web client into web/dist with esbuild's Go
// API (see package bundle): `go generate ./web`, or from the module root
// `go run ./web/cmd/bundle`.
//
//	bundle          bundle web/app and web/sdk into web/dist
//	bundle -check   exit 1 if web/dist is not what the sources bundle into
//	bundle -vendor  refresh web/third_party/cbor-x from web/sdk/node_modules
//	                (after npm ci in web/sdk)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leyworks/ley/web/bundle"
)

func main() {
	check := flag.Bool("check", false, "compare web/dist with a fresh bundle instead of writing it")
	vendor := flag.Bool("vendor", false, "copy cbor-x from web/sdk/node_modules into web/third_party/cbor-x")
	dir := flag.String("web", "", "the web/ directory (default: . or ./web, whichever holds sdk/)")
	flag.Parse()
	web, err := webDir(*dir)
	if err == nil {
		switch {
		case *vendor:
			err = bundle.Vendor(web)
		case *check:
			err = bundle.Check(web)
		default:
			err = bundle.Write(web)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// webDir finds the web/ directory: the flag, else the working directory
// (go generate runs in web/), else ./web (the module root).
func webDir(flagged string) (string, error) {
	if flagged != "" {
		return flagged, nil
	}
	for _, d := range []string{".", "web"} {
		if st, err := os.Stat(filepath.Join(d, "sdk", "package.json")); err == nil && !st.IsDir() {
			return d, nil
		}
	}
	return "", fmt.Errorf("bundle: no web/sdk here; run from the module root or web/, or pass -web")
}
