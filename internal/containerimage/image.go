package containerimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/leyworks/ley/internal/buildtags"
)

// The image's user and paths.
const (
	UID         = 65532                                // the user ley
	GID         = 65532                                // the group ley
	BinaryPath  = "/ley"                               // the entrypoint
	DataDir     = "/data"                              // owned by ley: the SQLite store's home
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt" // where Go's crypto/x509 looks first on Linux
)

var (
	// ErrNotStatic means the binary asks for a program interpreter or
	// shared libraries, which an empty base image does not have.
	ErrNotStatic = errors.New("image: binary is not statically linked")
	// ErrNotLinux means the binary is not a Linux ELF executable for an
	// architecture the image supports.
	ErrNotLinux = errors.New("image: binary is not a supported linux executable")
	// ErrNoCACerts means no CA bundle was found, or it holds no
	// certificate.
	ErrNoCACerts = errors.New("image: no CA certificate bundle")
)

// Config describes the image to assemble.
type Config struct {
	// Binary is the path of a static linux ley executable (BuildBinary
	// makes one).
	Binary string
	// CACerts is the path of a PEM CA bundle; "" takes FindCACerts'.
	CACerts string
	// Created is the image's creation time and every file's modification
	// time; zero means the Unix epoch, so that the same inputs give the
	// same digest.
	Created time.Time
	// Version, when set, is the org.opencontainers.image.version label.
	Version string
}

// New assembles ley's image from cfg. It reads the binary and the CA
// bundle into memory and compresses the layer once, keeping the result in
// memory for every later write (a few seconds and about 50 MB for a 40 MB
// binary). It fails with ErrNotStatic or ErrNotLinux for a binary an empty
// base cannot run, and ErrNoCACerts without a usable bundle.
func New(cfg Config) (v1.Image, error) {
	arch, err := CheckStatic(cfg.Binary)
	if err != nil {
		return nil, err
	}
	if cfg.CACerts == "" {
		if cfg.CACerts, err = FindCACerts(); err != nil {
			return nil, err
		}
	}
	certs, err := os.ReadFile(cfg.CACerts)
	if err != nil {
		return nil, fmt.Errorf("image: CA bundle: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(certs) {
		return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrNoCACerts, cfg.CACerts)
	}
	bin, err := os.ReadFile(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("image: binary: %w", err)
	}
	created := cfg.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()

	layerTar, err := rootfs(bin, certs, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}

	labels := map[string]string{
		"org.opencontainers.image.title":       "ley",
		"org.opencontainers.image.description": "ley: a server for sharded, persistent, grid-based multiplayer worlds (director, area host, tools)",
		"org.opencontainers.image.source":      "https://github.com/leyworks/ley",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if cfg.Version != "" {
		labels["org.opencontainers.image.version"] = cfg.Version
	}
	cf := &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: created},
		Config: v1.Config{
			User:         fmt.Sprintf("%d:%d", UID, GID),
			Entrypoint:   []string{BinaryPath},
			Env:          []string{"LEY_DATA_DIR=" + DataDir},
			WorkingDir:   "/",
			ExposedPorts: map[string]struct{}{"8080/tcp": {}, "7070/tcp": {}, "7100/tcp": {}},
			Volumes:      map[string]struct{}{DataDir: {}},
			Labels:       labels,
		},
	}
	img, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "ley internal/containerimage: static ley binary, CA bundle, user ley (65532), /data", Comment: "built without a container engine"},
	})
	if err != nil {
		return nil, fmt.Errorf("image: append layer: %w", err)
	}
	return img, nil
}

// rootfs returns the uncompressed tar of the image's only layer.
func rootfs(bin, certs []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid, gid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: gid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nley:x:%d:%d:ley:%s:/sbin/nologin\n", UID, GID, DataDir)
	group := fmt.Sprintf("root:x:0:\nley:x:%d:\n", GID)
	err := errors.Join(
		dir("etc/", 0o755, 0, 0),
		file("etc/group", 0o644, []byte(group)),
		file("etc/passwd", 0o644, []byte(passwd)),
		dir("etc/ssl/", 0o755, 0, 0),
		dir("etc/ssl/certs/", 0o755, 0, 0),
		file(strings.TrimPrefix(CACertsPath, "/"), 0o644, certs),
		dir(strings.TrimPrefix(DataDir, "/")+"/", 0o750, UID, GID),
		dir("tmp/", 0o1777, 0, 0),
		file(strings.TrimPrefix(BinaryPath, "/"), 0o755, bin),
		tw.Close(),
	)
	if err != nil {
		return nil, fmt.Errorf("image: layer tar: %w", err)
	}
	return buf.Bytes(), nil
}

// CheckStatic reports whether the file at path is a Linux ELF executable
// that an empty base image can run: no PT_INTERP program header (no
// dynamic loader) and no DT_NEEDED libraries. It returns the binary's Go
// architecture name (amd64, arm64, ...).
func CheckStatic(path string) (arch string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNotLinux, path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("%w: %s: ELF type %v", ErrNotLinux, path, f.Type)
	}
	switch {
	case f.Machine == elf.EM_X86_64:
		arch = "amd64"
	case f.Machine == elf.EM_AARCH64:
		arch = "arm64"
	case f.Machine == elf.EM_RISCV && f.Class == elf.ELFCLASS64:
		arch = "riscv64"
	case f.Machine == elf.EM_PPC64 && f.Data == elf.ELFDATA2LSB:
		arch = "ppc64le"
	case f.Machine == elf.EM_S390:
		arch = "s390x"
	default:
		return "", fmt.Errorf("%w: %s: machine %v", ErrNotLinux, path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%w: %s has a program interpreter (PT_INTERP)", ErrNotStatic, path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "", fmt.Errorf("image: %s: read dynamic section: %w", path, err)
	}
	if len(libs) > 0 {
		return "", fmt.Errorf("%w: %s needs %s", ErrNotStatic, path, strings.Join(libs, ", "))
	}
	return arch, nil
}

// caBundles are the places Linux distributions keep their CA bundle, in
// the order Go's crypto/x509 tries them.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine
}

// FindCACerts returns the path of this machine's CA bundle: $SSL_CERT_FILE
// if set, else the first of the distributions' usual places that exists.
// It fails with ErrNoCACerts when there is none.
func FindCACerts() (string, error) {
	if p := os.Getenv("SSL_CERT_FILE"); p != "" {
		return p, nil
	}
	for _, p := range caBundles {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s (install ca-certificates, or set SSL_CERT_FILE)", ErrNoCACerts, strings.Join(caBundles, ", "))
}

// BuildConfig says how to compile the ley binary for the image.
type BuildConfig struct {
	// ModuleDir is the ley module's root (where go.mod is).
	ModuleDir string
	// GOARCH is the target architecture ("" means the go command's
	// default: this machine's).
	GOARCH string
	// Out is the path of the binary to write.
	Out string
	// Go is the go command to run ("" means "go" on $PATH).
	Go string
}

// BuildBinary compiles ./cmd/ley as a static linux binary (CGO_ENABLED=0,
// -trimpath, no symbol table, no build id) at cfg.Out and checks it with
// CheckStatic. It runs the go command (as slow as any build: a minute or
// two when nothing is cached) and returns its output in the error when it
// fails.
func BuildBinary(ctx context.Context, cfg BuildConfig) error {
	goCmd := cfg.Go
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("image: build: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("image: build: %w", err)
	}
	cmd := exec.CommandContext(ctx, goCmd, "build", "-tags", buildtags.Product, "-trimpath", "-ldflags=-s -w -buildid=", "-o", out, "./cmd/ley")
	cmd.Dir = cfg.ModuleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if cfg.GOARCH != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+cfg.GOARCH)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("image: go build ./cmd/ley: %w\n%s", err, msg)
	}
	arch, err := CheckStatic(out)
	if err != nil {
		return err
	}
	if cfg.GOARCH != "" && arch != cfg.GOARCH {
		return fmt.Errorf("%w: built %s, asked for %s", ErrNotLinux, arch, cfg.GOARCH)
	}
	return nil
}

// WriteTarball writes img to path as a `docker save` tarball tagged tag
// (such as "ley:dev"), creating path's directory. `docker load -i`,
// `crane push path REF` and `skopeo copy docker-archive:path docker://REF`
// read it.
func WriteTarball(path, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("image: tag %q: %w", tag, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("image: write %s: %w", path, err)
	}
	return nil
}

// WriteLayout writes img into the OCI image layout directory dir (created
// if needed; its index is replaced), its org.opencontainers.image.ref.name
// annotation the tag part of tag ("dev" for "ley:dev"). `crane push dir
// REF` and `skopeo copy oci:dir:dev docker://REF` read it.
func WriteLayout(dir, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("image: tag %q: %w", tag, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("image: layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.TagStr()})); err != nil {
		return fmt.Errorf("image: layout %s: %w", dir, err)
	}
	return nil
}

// CompressedSize returns what pulling img transfers: its manifest, its
// config and its compressed layers, in bytes.
func CompressedSize(img v1.Image) (int64, error) {
	m, err := img.RawManifest()
	if err != nil {
		return 0, fmt.Errorf("image: manifest: %w", err)
	}
	c, err := img.RawConfigFile()
	if err != nil {
		return 0, fmt.Errorf("image: config: %w", err)
	}
	n := int64(len(m) + len(c))
	layers, err := img.Layers()
	if err != nil {
		return 0, fmt.Errorf("image: layers: %w", err)
	}
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			return 0, fmt.Errorf("image: layer size: %w", err)
		}
		n += s
	}
	return n, nil
}
