package containerimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/leyworks/ley/internal/buildtags"
)

// maxCompressed bounds what pulling the image may transfer.
const maxCompressed = 40 << 20

// moduleRoot is the ley module's root, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// entry is one file of the layer as the test expects it.
type entry struct {
	typ      byte
	mode     int64
	uid, gid int
}

// TestImageBuildsAndReadsBack builds the binary and the image the way
// `make image` does, writes the tarball and an OCI layout into a temporary
// directory, reads both back, and checks what an operator relies on.
func TestImageBuildsAndReadsBack(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ley")
	if err := BuildBinary(t.Context(), BuildConfig{ModuleDir: moduleRoot(t), Out: bin}); err != nil {
		t.Fatal(err)
	}
	img, err := New(Config{Binary: bin, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "out", "ley-image.tar")
	if err := WriteTarball(tarPath, "ley:dev", img); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("ley:dev")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatalf("read the tarball back: %v", err)
	}

	cf, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform = %s/%s; want linux/<arch>", cf.OS, cf.Architecture)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user = %q; want 65532:65532 (non-root)", cf.Config.User)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/ley"}) || len(cf.Config.Cmd) != 0 {
		t.Errorf("entrypoint, cmd = %q, %q; want [/ley], none", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if !slices.Contains(cf.Config.Env, "LEY_DATA_DIR=/data") {
		t.Errorf("env = %q; want LEY_DATA_DIR=/data", cf.Config.Env)
	}
	if _, ok := cf.Config.Volumes["/data"]; !ok {
		t.Errorf("volumes = %v; want /data", cf.Config.Volumes)
	}
	if cf.Config.Labels["org.opencontainers.image.version"] != "test" {
		t.Errorf("labels = %v; want the version", cf.Config.Labels)
	}
	if !cf.Created.Time.Equal(cf.History[0].Created.Time) || cf.Created.Unix() != 0 {
		t.Errorf("created = %v; want the Unix epoch (reproducible)", cf.Created)
	}

	layers, err := got.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers; want 1 on an empty base", len(layers))
	}
	want := map[string]entry{
		"etc/":                              {tar.TypeDir, 0o755, 0, 0},
		"etc/group":                         {tar.TypeReg, 0o644, 0, 0},
		"etc/passwd":                        {tar.TypeReg, 0o644, 0, 0},
		"etc/ssl/":                          {tar.TypeDir, 0o755, 0, 0},
		"etc/ssl/certs/":                    {tar.TypeDir, 0o755, 0, 0},
		"etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0o644, 0, 0},
		"data/":                             {tar.TypeDir, 0o750, 65532, 65532},
		"tmp/":                              {tar.TypeDir, 0o1777, 0, 0},
		"ley":                               {tar.TypeReg, 0o755, 0, 0},
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	seen := map[string]bool{}
	extracted := filepath.Join(dir, "extracted-ley")
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[h.Name]
		if !ok {
			t.Errorf("unexpected file in the layer: %s", h.Name)
			continue
		}
		seen[h.Name] = true
		if g := (entry{h.Typeflag, h.Mode, h.Uid, h.Gid}); g != w {
			t.Errorf("%s: type %c mode %o owner %d:%d; want type %c mode %o owner %d:%d", h.Name, g.typ, g.mode, g.uid, g.gid, w.typ, w.mode, w.uid, w.gid)
		}
		switch h.Name {
		case "ley":
			f, err := os.Create(extracted)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		case "etc/passwd":
			b, _ := io.ReadAll(tr)
			if !regexp.MustCompile(`(?m)^ley:x:65532:65532:`).Match(b) {
				t.Errorf("/etc/passwd = %q; want the user ley as 65532:65532", b)
			}
		case "etc/ssl/certs/ca-certificates.crt":
			b, _ := io.ReadAll(tr)
			if !strings.Contains(string(b), "BEGIN CERTIFICATE") {
				t.Errorf("CA bundle holds no certificate")
			}
		}
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("missing from the layer: %s", n)
		}
	}

	// The binary in the image is a static ELF: no program interpreter.
	f, err := elf.Open(extracted)
	if err != nil {
		t.Fatalf("the image's /ley is not ELF: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the image's /ley has a PT_INTERP program header: it is dynamically linked")
		}
	}
	f.Close()
	if arch, err := CheckStatic(extracted); err != nil || arch != cf.Architecture {
		t.Errorf("CheckStatic(/ley) = %q, %v; want %q", arch, err, cf.Architecture)
	}

	size, err := CompressedSize(got)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image: %s/%s, %.1f MB compressed", cf.OS, cf.Architecture, float64(size)/1e6)
	if size > maxCompressed {
		t.Errorf("compressed size %d bytes; want at most %d", size, maxCompressed)
	}

	// The OCI layout holds the same image, under the tag's name.
	lay := filepath.Join(dir, "layout")
	if err := WriteLayout(lay, "ley:dev", img); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != d || im.Manifests[0].MediaType != types.OCIManifestSchema1 ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "dev" {
		t.Errorf("layout index = %+v; want one OCI manifest %s named dev", im.Manifests, d)
	}

	// A CA bundle without a certificate is refused.
	noCerts := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(noCerts, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Binary: bin, CACerts: noCerts}); !errors.Is(err, ErrNoCACerts) {
		t.Errorf("New with an empty CA bundle = %v; want ErrNoCACerts", err)
	}

	// The same inputs give the same layer, byte for byte (and so the same
	// digests: gzip and the config are deterministic too).
	binBytes, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	l1, err1 := rootfs(binBytes, []byte("certs"), time.Unix(0, 0))
	l2, err2 := rootfs(binBytes, []byte("certs"), time.Unix(0, 0))
	if err1 != nil || err2 != nil || !bytes.Equal(l1, l2) {
		t.Errorf("two layers from the same inputs differ (%v, %v)", err1, err2)
	}
}

// TestNewRefusesWhatScratchCannotRun: a dynamically linked binary and a
// file that is not ELF are errors.
func TestNewRefusesWhatScratchCannotRun(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Binary: notELF}); !errors.Is(err, ErrNotLinux) {
		t.Errorf("New(shell script) = %v; want ErrNotLinux", err)
	}

	// /bin/sh on any Linux distribution with a libc is dynamically linked.
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckStatic(sh); !errors.Is(err, ErrNotStatic) {
		t.Errorf("CheckStatic(%s) = %v; want ErrNotStatic", sh, err)
	}
}

// TestDockerfileMatchesTheImage: docs/deploy/Dockerfile, for teams with
// Docker, builds what New builds: a static binary from the go.mod's Go
// release on an empty base, the same user, entrypoint, data directory and
// CA bundle path.
func TestDockerfileMatchesTheImage(t *testing.T) {
	root := moduleRoot(t)
	df, err := os.ReadFile(filepath.Join(root, "docs", "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	text := string(df)
	for _, want := range []string{
		"FROM golang:" + string(goLine[1]) + " AS build",
		"CGO_ENABLED=0 go build -tags " + buildtags.Product + " -trimpath", // the product's tags, as New builds
		"./cmd/ley",
		"\nFROM scratch\n",
		"USER 65532:65532",
		`ENTRYPOINT ["/ley"]`,
		"ENV LEY_DATA_DIR=/data",
		"VOLUME /data",
		"--chown=65532:65532 /out/root/data /data",
		"chmod 0750 /out/root/data",
		"ley:x:65532:65532:ley:/data:",
		"/out/root" + CACertsPath,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/deploy/Dockerfile lacks %q", want)
		}
	}
	if n := strings.Count(text, "\nFROM "); n != 2 {
		t.Errorf("docs/deploy/Dockerfile has %d stages; want a build stage and the scratch one", n)
	}
}
