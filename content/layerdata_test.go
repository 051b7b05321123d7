package content

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// cells returns a layer's cells as Tiled's little-endian bytes.
func cells(t *testing.T, data []any) []byte {
	t.Helper()
	b := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v.(float64)))
	}
	return b
}

func zlibBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodingsRoundTrip saves the same layers in each of Tiled's
// encodings (as Tiled does, on a map of its own and on the shipped
// village) and checks they load equal.
func TestEncodingsRoundTrip(t *testing.T) {
	village, err := fsReadT(t, "maps/village.tmj")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct {
		name string
		m    func() jmap
	}{
		{"small", func() jmap { return smallMap(t) }},
		{"village", func() jmap { return decodeT(t, village) }},
	} {
		base := src.m()
		fsys := mapFS(t, base)
		if src.name == "village" {
			fsys = shippedFS(t, base)
		}
		want, err := LoadMap(fsys, "maps/small.tmj")
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []struct {
			name, compression string
			pack              func(t *testing.T, b []byte) []byte
		}{
			{"base64", "", func(t *testing.T, b []byte) []byte { return b }},
			{"base64+zlib", "zlib", zlibBytes},
			{"base64+gzip", "gzip", gzipBytes},
		} {
			t.Run(src.name+"/"+enc.name, func(t *testing.T) {
				m := src.m()
				for _, name := range []string{"floor", "walls"} {
					l := layerOf(t, m, name)
					raw := enc.pack(t, cells(t, l["data"].([]any)))
					l["encoding"], l["data"] = "base64", base64.StdEncoding.EncodeToString(raw)
					if enc.compression != "" {
						l["compression"] = enc.compression
					}
				}
				fsys := mapFS(t, m)
				if src.name == "village" {
					fsys = shippedFS(t, m)
				}
				got, err := LoadMap(fsys, "maps/small.tmj")
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Error("the map loads differently from its JSON-array twin")
				}
			})
		}
	}
}

func TestDecodeData(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     string
		encoding string
		n        int
		want     []uint32
		err      string
	}{
		{"array", `[1, 2,3 ,4]`, "", 4, []uint32{1, 2, 3, 4}, ""},
		{"csv", "[\n1,\n2]", "csv", 2, []uint32{1, 2}, ""},
		{"flags kept", `[4294967295, 0]`, "", 2, []uint32{0xFFFFFFFF, 0}, ""},
		{"too big", `[4294967296, 0]`, "", 2, nil, "data cell 0: 4294967296... is not a tile ID"},
		{"float", `[1.5, 0]`, "", 2, nil, "data cell 0: not a whole number"},
		{"empty", `[]`, "", 2, nil, "data holds 0 cells, want 2"},
		{"short", `[1]`, "", 2, nil, "data holds 1 cells, want 2"},
		{"long", `[1,2,3]`, "", 2, nil, "data holds more than 2 cells"},
		{"null", `null`, "", 2, nil, "no data"},
		{"string without encoding", `"AAAA"`, "", 1, nil, "data is not an array"},
		{"base64", `"AQAAAAIAAAA="`, "base64", 2, []uint32{1, 2}, ""},
		{"base64 short", `"AQAAAA=="`, "base64", 2, nil, "data holds 4 bytes, want 8"},
		{"base64 long", `"AQAAAAIAAAADAAAA"`, "base64", 2, nil, "base64 data holds more than 2 cells"},
		{"base64 of an array", `[1]`, "base64", 1, nil, "data is not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeData([]byte(tc.data), tc.encoding, "", tc.n)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestDecodeDataBombs: a small input that inflates past a layer's size
// is refused after reading one byte more than the layer holds.
func TestDecodeDataBombs(t *testing.T) {
	big := make([]byte, 1<<20)
	for _, c := range []struct {
		name string
		pack func(*testing.T, []byte) []byte
	}{{"zlib", zlibBytes}, {"gzip", gzipBytes}} {
		data := []byte(`"` + base64.StdEncoding.EncodeToString(c.pack(t, big)) + `"`)
		_, err := decodeData(data, "base64", c.name, 16)
		if err == nil || err.Error() != "data holds more than 16 cells" {
			t.Errorf("%s: err = %v; want data holds more than 16 cells", c.name, err)
		}
	}
}
