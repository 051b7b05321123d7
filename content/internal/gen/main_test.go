package main

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// committed is where go generate writes the maps, from this folder.
const committed = "../../data/maps"

// TestGeneratedFilesCurrent runs the generator into a fresh folder and
// compares with the committed files: a change to the generator must come
// with `go generate ./content`. The PNG is compared by its pixels, since
// its compressed bytes may differ between Go releases.
func TestGeneratedFilesCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	fresh, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadDir(committed)
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []os.DirEntry) []string {
		var s []string
		for _, e := range es {
			s = append(s, e.Name())
		}
		return s
	}
	if !slices.Equal(names(fresh), names(old)) {
		t.Fatalf("the generator writes %v; %s holds %v", names(fresh), committed, names(old))
	}
	for _, e := range fresh {
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(committed, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		same := bytes.Equal(got, want)
		if filepath.Ext(e.Name()) == ".png" {
			same = samePixels(t, got, want)
		}
		if !same {
			t.Errorf("%s is stale: run go generate ./content", e.Name())
		}
	}
}

func samePixels(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(p []byte) *image.NRGBA {
		img, err := png.Decode(bytes.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		n := image.NewNRGBA(img.Bounds())
		draw.Draw(n, n.Bounds(), img, img.Bounds().Min, draw.Src)
		return n
	}
	x, y := decode(a), decode(b)
	return x.Bounds() == y.Bounds() && bytes.Equal(x.Pix, y.Pix)
}

// TestGenerateDeterministic: two runs write the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	a, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between runs", name)
		}
	}
}
