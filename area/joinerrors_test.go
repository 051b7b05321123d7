package area

import (
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/net/wire"
)

// TestJoinRefusalsSayWhatAndWhich: every refusal of a hello or resume
// carries the join id it answers (read from the message even when the
// rest does not decode), names the versions this server speaks, and says
// what was wrong in the protocol's words, never the server's internals; a
// message over the size limit is answered error{TOO_LARGE} before the
// close (1009).
func TestJoinRefusalsSayWhatAndWhich(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	grant := d.grant(1, 100, 1, 4, 4, time.Minute)
	errorOf := func(c *client) *wire.Error {
		t.Helper()
		return expectMsg[*wire.Error](c, 5*time.Second)
	}
	cases := []struct {
		name string
		msg  any // a raw CBOR value
		code wire.Code
		join uint64
		says string
	}{
		{"hello speaking only version 8", []any{7, 1, []any{grant, 4545, []any{8}}}, wire.CodeVersionUnsupported, 4545, wire.VersionsDetail()},
		{"hello speaking only version 6, the last without short snapshots", []any{6, 1, []any{grant, 4555, []any{6}}}, wire.CodeVersionUnsupported, 4555, wire.VersionsDetail()},
		{"hello speaking only version 5, the last without trade", []any{5, 1, []any{grant, 4554, []any{5}}}, wire.CodeVersionUnsupported, 4554, wire.VersionsDetail()},
		{"hello speaking only version 4, the last without crafting", []any{4, 1, []any{grant, 4553, []any{4}}}, wire.CodeVersionUnsupported, 4553, wire.VersionsDetail()},
		{"hello speaking only version 3, the last without plots", []any{3, 1, []any{grant, 4552, []any{3}}}, wire.CodeVersionUnsupported, 4552, wire.VersionsDetail()},
		{"hello speaking only version 2, the last without items", []any{2, 1, []any{grant, 4551, []any{2}}}, wire.CodeVersionUnsupported, 4551, wire.VersionsDetail()},
		{"hello speaking only version 1", []any{7, 1, []any{grant, 4546, []any{1}}}, wire.CodeVersionUnsupported, 4546, wire.VersionsDetail()},
		{"hello speaking no version", []any{7, 1, []any{grant, 4547, []any{}}}, wire.CodeVersionUnsupported, 4547, wire.VersionsDetail()},
		{"hello with 17 versions", []any{7, 1, []any{grant, 4548, []any{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}}}, wire.CodeMalformed, 4548, "versions"},
		{"resume in envelope version 1", []any{1, 2, []any{"r-token", 4549}}, wire.CodeVersionUnsupported, 4549, ""},
		{"a short snapshot from a client", []byte{0x8c, 0x08, 0x04, 0x09}, wire.CodeUnknownType, 0, "snapshot"}, // a server's message: refused by its type
		{"resume with a join id of the wrong type", []any{7, 2, []any{"r-token", "4550"}}, wire.CodeMalformed, 0, "resume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, h)
			c.raw(tc.msg)
			e := errorOf(c)
			if e.Code != tc.code || e.JoinID != tc.join {
				t.Fatalf("error{%v, join_id %d, %q}; want %v, join_id %d", e.Code, e.JoinID, e.Detail, tc.code, tc.join)
			}
			if !strings.Contains(e.Detail, tc.says) {
				t.Errorf("detail %q does not say %q", e.Detail, tc.says)
			}
			for _, internal := range []string{"wire:", "cbor", "struct", "Go ", "uint64"} {
				if strings.Contains(e.Detail, internal) {
					t.Errorf("detail %q names the server's internals (%q)", e.Detail, internal)
				}
			}
		})
	}
	t.Run("a message over 64 KiB", func(t *testing.T) {
		c := dial(t, h)
		if err := c.c.WriteMessage(make([]byte, wire.MaxClientMessageSize+1)); err != nil {
			t.Fatal(err)
		}
		if e := errorOf(c); e.Code != wire.CodeTooLarge {
			t.Fatalf("error %+v; want TOO_LARGE", e)
		}
		if err := c.closed(5 * time.Second); err == nil || !strings.Contains(err.Error(), "1009") {
			t.Fatalf("close %v; want 1009", err)
		}
	})
}
