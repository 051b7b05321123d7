package content

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
)

// decodeData returns the n global tile IDs of a tile layer's data, flip
// flags still set. data is a JSON array of numbers (encoding "csv" or
// none) or a base64 string of little-endian uint32s, optionally
// compressed with zlib or gzip. It never holds more than about n*4 bytes
// of decoded data, whatever the input claims.
func decodeData(data json.RawMessage, encoding, compression string, n int) ([]uint32, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, invalidf("no data")
	}
	switch encoding {
	case "", "csv":
		if compression != "" {
			return nil, invalidf("compression %q needs encoding \"base64\"", compression)
		}
		return parseGIDArray(data, n)
	case "base64":
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, invalidf("encoding \"base64\": data is not a string")
		}
		return decodeBase64(s, compression, n)
	default:
		return nil, invalidf("unknown encoding %q (want \"csv\" or \"base64\")", encoding)
	}
}

func decodeBase64(s, compression string, n int) ([]uint32, error) {
	want := n * 4
	if compression == "" && base64.StdEncoding.DecodedLen(len(s)) > want+3 {
		return nil, invalidf("base64 data holds more than %d cells", n)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, invalidf("bad base64 data: %v", err)
	}
	var r io.Reader
	switch compression {
	case "":
		r = bytes.NewReader(raw)
	case "zlib":
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, invalidf("bad zlib data: %v", err)
		}
		defer zr.Close()
		r = zr
	case "gzip":
		gr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, invalidf("bad gzip data: %v", err)
		}
		defer gr.Close()
		r = gr
	case "zstd":
		return nil, unsupportedf("compression \"zstd\" (use zlib, gzip or none)")
	default:
		return nil, invalidf("unknown compression %q (want \"zlib\", \"gzip\" or none)", compression)
	}
	// Read one byte more than a full layer: a longer stream is an error,
	// and reading to the end makes zlib and gzip check their checksums.
	buf, err := io.ReadAll(io.LimitReader(r, int64(want)+1))
	if err != nil {
		return nil, invalidf("bad %s data: %v", compression, err)
	}
	if len(buf) != want {
		if len(buf) > want {
			return nil, invalidf("data holds more than %d cells", n)
		}
		return nil, invalidf("data holds %d bytes, want %d (%d cells of 4 bytes)", len(buf), want, n)
	}
	gids := make([]uint32, n)
	for i := range gids {
		gids[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	return gids, nil
}

// parseGIDArray reads a JSON array of exactly n whole numbers in
// [0, 2^32). It stops at the first cell past n, so an oversized array
// costs no memory.
func parseGIDArray(data []byte, n int) ([]uint32, error) {
	if data[0] != '[' {
		return nil, invalidf("data is not an array (or set encoding \"base64\")")
	}
	// Each cell takes at least two bytes ("0,"): size the slice by what
	// the input can hold, not by what the map claims.
	gids := make([]uint32, 0, min(n, len(data)/2+1))
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == ']' {
		return nil, invalidf("data holds 0 cells, want %d", n)
	}
	for {
		if len(gids) == n {
			return nil, invalidf("data holds more than %d cells", n)
		}
		start := i
		var v uint64
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			v = v*10 + uint64(data[i]-'0')
			if v > 0xFFFFFFFF {
				return nil, invalidf("data cell %d: %s... is not a tile ID", len(gids), data[start:i+1])
			}
			i++
		}
		if i == start {
			return nil, invalidf("data cell %d: not a whole number", len(gids))
		}
		gids = append(gids, uint32(v))
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, invalidf("data: unterminated array")
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			if len(gids) != n {
				return nil, invalidf("data holds %d cells, want %d", len(gids), n)
			}
			return gids, nil
		default:
			return nil, invalidf("data cell %d: not a whole number", len(gids)-1)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
