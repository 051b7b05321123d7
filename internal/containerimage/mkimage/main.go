// Command mkimage builds ley's container image without a container engine
// (see package internal/containerimage): `make image` runs
//
//	go run ./internal/containerimage/mkimage -out bin/ley-image.tar
//
// from the module root, which compiles the static binary, assembles the
// image and writes a `docker save` tarball; -layout also writes an OCI
// image layout directory. It prints the tag, platform, digest and
// compressed size.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/leyworks/ley/internal/containerimage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "bin/ley-image.tar", "tarball to write (\"\": none)")
	layoutDir := flag.String("layout", "", "OCI image layout directory to write as well (\"\": none)")
	tag := flag.String("tag", "ley:dev", "image reference the tarball and layout are tagged with")
	arch := flag.String("arch", "", "GOARCH of the image (default: this machine's)")
	binary := flag.String("binary", "", "package this prebuilt static binary instead of building ./cmd/ley")
	caCerts := flag.String("cacerts", "", "PEM CA bundle to include (default: this machine's)")
	version := flag.String("version", "", "org.opencontainers.image.version label")
	flag.Parse()
	if *out == "" && *layoutDir == "" {
		return fmt.Errorf("nothing to write: give -out or -layout")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bin := *binary
	if bin == "" {
		tmp, err := os.MkdirTemp("", "mkimage-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		bin = filepath.Join(tmp, "ley")
		if err := containerimage.BuildBinary(ctx, containerimage.BuildConfig{ModuleDir: ".", GOARCH: *arch, Out: bin}); err != nil {
			return err
		}
	}
	img, err := containerimage.New(containerimage.Config{Binary: bin, CACerts: *caCerts, Version: *version})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := containerimage.WriteTarball(*out, *tag, img); err != nil {
			return err
		}
	}
	if *layoutDir != "" {
		if err := containerimage.WriteLayout(*layoutDir, *tag, img); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	size, err := containerimage.CompressedSize(img)
	if err != nil {
		return err
	}
	for _, dst := range []string{*out, *layoutDir} {
		if dst != "" {
			fmt.Printf("%s: %s %s/%s %s, %.1f MB compressed\n", dst, *tag, cf.OS, cf.Architecture, digest, float64(size)/1e6)
		}
	}
	return nil
}
