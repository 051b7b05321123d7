package web_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leyworks/ley/net/wire"
)

// tsObject returns the entries of the object literal `const name ... = {
// ... }` in the TypeScript file path: keys (unquoted) to values (numbers,
// or string literals without their quotes). It reads the simple literals
// the SDK mirrors net/wire with, one key: value per entry.
func tsObject(t *testing.T, path, name string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := regexp.MustCompile(`(?m)^(?:export )?const ` + name + `\b[^=]*=\s*\{`).FindIndex(src)
	if start == nil {
		t.Fatalf("%s: no object literal %s", path, name)
	}
	body := string(src[start[1]:])
	end := strings.Index(body, "\n}")
	if end < 0 {
		t.Fatalf("%s: %s does not end", path, name)
	}
	entry := regexp.MustCompile(`(?m)^\s*"?(\w+)"?\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*,?\s*(?://.*)?$`)
	out := map[string]string{}
	for _, line := range strings.Split(body[:end], "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "//") {
			continue
		}
		m := entry.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: %s: cannot read the entry %q", path, name, line)
		}
		if _, dup := out[m[1]]; dup {
			t.Fatalf("%s: %s: %s twice", path, name, m[1])
		}
		out[m[1]] = strings.Trim(m[2], `"`)
	}
	return out
}

// snake turns a TypeScript key such as portalTransferRejected into the
// protocol's name, portal_transfer_rejected.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestSDKMirrorsWire: the SDK's registry of codes (sdk/src/codes.ts), its
// message type numbers and names and its protocol version
// (sdk/src/protocol.ts) are net/wire's, name for name and number for
// number. The TypeScript is written by hand; this keeps it honest.
func TestSDKMirrorsWire(t *testing.T) {
	wantCodes := map[string]string{}
	for c := wire.Code(0); c.Known(); c++ {
		wantCodes[c.String()] = strconv.Itoa(int(c))
	}
	wantTypes := map[string]string{} // protocol name -> number
	for i := range 256 {
		if ty := wire.Type(i); ty.Known() {
			wantTypes[ty.String()] = strconv.Itoa(i)
		}
	}

	codes := tsObject(t, "sdk/src/codes.ts", "Code")
	same(t, "codes.ts Code", codes, wantCodes)
	meanings := tsObject(t, "sdk/src/codes.ts", "meanings")
	for name := range wantCodes {
		if meanings[name] == "" {
			t.Errorf("codes.ts meanings: no sentence for %s", name)
		}
	}
	for name := range meanings {
		if _, ok := wantCodes[name]; !ok {
			t.Errorf("codes.ts meanings: %s is no code", name)
		}
	}

	types := map[string]string{}
	for k, v := range tsObject(t, "sdk/src/protocol.ts", "MsgType") {
		types[snake(k)] = v
	}
	same(t, "protocol.ts MsgType", types, wantTypes)
	names := map[string]string{} // name -> number
	for num, name := range tsObject(t, "sdk/src/protocol.ts", "TYPE_NAMES") {
		names[name] = num
	}
	same(t, "protocol.ts TYPE_NAMES", names, wantTypes)

	src, err := os.ReadFile("sdk/src/protocol.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^export const PROTOCOL_VERSION = (\d+);`).FindSubmatch(src)
	if m == nil || string(m[1]) != strconv.Itoa(int(wire.Version)) {
		t.Errorf("protocol.ts PROTOCOL_VERSION = %q; want %d", m, wire.Version)
	}
}

// same reports every difference between got (the TypeScript's) and want
// (net/wire's), name to number.
func same(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, n := range want {
		switch g, ok := got[name]; {
		case !ok:
			t.Errorf("%s lacks %s (%s in net/wire)", what, name, n)
		case g != n:
			t.Errorf("%s: %s = %s; net/wire has %s", what, name, g, n)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s = %s is not in net/wire", what, name, g)
		}
	}
}
