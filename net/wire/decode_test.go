package wire

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := parseHex([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeErrors(t *testing.T) {
	longText := func(n int) []byte { // hello with an n-byte grant
		b, err := Encode(&Hello{Grant: strings.Repeat("g", n), Versions: []uint16{3}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"not an array", mustHex(t, "01"), ErrMalformed},
		{"envelope of 2", mustHex(t, "82 01 09"), ErrMalformed},
		{"indefinite envelope", mustHex(t, "9f 01 09 82 01 00 ff"), ErrMalformed},
		{"truncated head", mustHex(t, "83 07 19 00"), ErrMalformed},
		{"version 1", mustHex(t, "83 01 0b 82 07 0f"), ErrVersion},
		{"version 2", mustHex(t, "83 02 0b 82 07 0f"), ErrVersion},
		{"version 3", mustHex(t, "83 03 0b 82 07 0f"), ErrVersion},
		{"version 5", mustHex(t, "83 05 0b 82 07 0f"), ErrVersion},
		{"version 6", mustHex(t, "83 06 0b 82 07 0f"), ErrVersion},
		{"version 8", mustHex(t, "83 08 0b 82 07 0f"), ErrVersion},
		{"version 0", mustHex(t, "83 00 0b 82 07 0f"), ErrVersion},
		{"unknown type", mustHex(t, "83 07 07 80"), ErrUnknownType},
		{"type 255", mustHex(t, "83 07 18 ff 80"), ErrUnknownType},
		{"type beyond uint8", mustHex(t, "83 07 19 01 00 80"), ErrMalformed},
		{"trailing bytes", mustHex(t, "83 07 0b 82 07 0f 00"), ErrMalformed},
		{"missing body", mustHex(t, "83 07 0b"), ErrMalformed},
		{"body too short", mustHex(t, "83 07 0b 81 07"), ErrMalformed},
		{"body too long", mustHex(t, "83 07 0b 83 07 0f 00"), ErrMalformed},
		{"body is a map", mustHex(t, "83 07 0b a2 00 07 01 0f"), ErrMalformed},
		{"negative seq", mustHex(t, "83 07 0b 82 20 0f"), ErrMalformed},
		{"seq beyond uint32", mustHex(t, "83 07 0b 82 1b 00 00 00 01 00 00 00 00 0f"), ErrMalformed},
		{"null field", mustHex(t, "83 07 0b 82 f6 0f"), ErrMalformed},
		{"float field", mustHex(t, "83 07 0b 82 f9 3c 00 0f"), ErrMalformed},
		{"tagged field", mustHex(t, "83 07 0b 82 c1 07 0f"), ErrMalformed},
		{"bad utf-8", mustHex(t, "83 07 09 84 03 00 00 62 ff fe"), ErrMalformed},
		{"null list", mustHex(t, "83 07 0d 84 09 03 f6 80"), ErrMalformed},
		{"huge array head", mustHex(t, "83 07 0d 84 09 03 9b ff ff ff ff ff ff ff ff 80"), ErrMalformed},
		{"huge byte string head", mustHex(t, "83 07 0c 84 00 00 00 5b ff ff ff ff ff ff ff ff"), ErrMalformed},
		{"flow of fewer directions than squares", mustHex(t, "83 07 18 18 87 0c 19 03 e9 10 03 03 02 45 02 02 08 01 00"), ErrMalformed},
		{"flow with no such direction", mustHex(t, "83 07 18 18 87 0c 19 03 e9 10 03 03 02 46 02 02 08 01 00 09"), ErrMalformed},
		{"huge text head", mustHex(t, "83 07 09 84 03 00 00 7b ff ff ff ff ff ff ff ff"), ErrMalformed},
		{"array above element limit", append(append(mustHex(t, "83 07 0d 84 09 03 99 10 01"), make([]byte, 4097)...), 0x80), ErrMalformed},
		{"deep nesting", append(mustHex(t, "83 07 0d 84 09 03 80 81"), bytes.Repeat([]byte{0x81}, 64)...), ErrMalformed},
		{"text above MaxTextLen", longText(MaxTextLen + 1), ErrMalformed},
		{"too many versions", mustHex(t, "83 07 01 83 60 00 91 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01"), ErrMalformed},
		{"recipe of nine inputs", mustHex(t, "83 07 18 19 81 81 85 01 60 60 89"+strings.Repeat(" 82 01 01", 9)+" 80"), ErrMalformed},
		{"above server limit", make([]byte, MaxServerMessageSize+1), ErrTooLarge},
		{"client message above client limit", append(mustHex(t, "83 07 01 83 7a 00 01 00 00"), make([]byte, 1<<16)...), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.in)
			if !errors.Is(err, tt.want) {
				t.Errorf("Decode(%.40x) = %v, %v; want %v", tt.in, m, err, tt.want)
			}
		})
	}
	if _, err := Decode(longText(MaxTextLen)); err != nil {
		t.Errorf("Decode(hello with a %d-byte grant) = %v; want nil", MaxTextLen, err)
	}
}

// TestDecodeHugeHeadsDoNotAllocate: a head announcing 2^64 elements or
// bytes is refused before any allocation of that size: decoding such a
// message a thousand times allocates a few kilobytes each at most.
func TestDecodeHugeHeadsDoNotAllocate(t *testing.T) {
	for _, in := range [][]byte{
		mustHex(t, "83 07 0d 84 09 03 9b ff ff ff ff ff ff ff ff 80"),
		mustHex(t, "83 07 0c 84 00 00 00 5b ff ff ff ff ff ff ff ff"),
		mustHex(t, "83 07 0c 84 00 00 00 5a 7f ff ff ff"),
		mustHex(t, "83 07 0e 82 05 9a 7f ff ff ff"),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 1000 {
			if _, err := Decode(in); err == nil {
				t.Fatalf("Decode(%x) succeeded", in)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / 1000; per > 4096 {
			t.Errorf("Decode(%x) allocates %d bytes per call; want at most 4 KiB", in, per)
		}
	}
}

func TestDecodeHelloAnyVersion(t *testing.T) {
	// A future client says v=9 in its envelope; the hello body is frozen,
	// so it still decodes and negotiation answers.
	in := mustHex(t, "83 09 01 83 61 67 01 82 09 07")
	m, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &Hello{Grant: "g", JoinID: 1, Versions: []uint16{9, 7}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Decode = %+v; want %+v", m, want)
	}
	if v, ok := Negotiate(want.Versions); v != 7 || !ok {
		t.Errorf("Negotiate = %d, %v; want 7, true", v, ok)
	}
}

func TestDecodeClient(t *testing.T) {
	tests := []struct {
		msg  Message
		want error
	}{
		{&Hello{Grant: "g", Versions: []uint16{3}}, nil},
		{&Resume{Token: "t"}, nil},
		{&Intent{Seq: 1}, nil},
		{&HelloAck{}, ErrUnknownType},
		{&Snapshot{}, ErrUnknownType},
	}
	for _, tt := range tests {
		b, err := Encode(tt.msg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeClient(b); !errors.Is(err, tt.want) {
			t.Errorf("DecodeClient(%s) = %v; want %v", tt.msg.Type(), err, tt.want)
		}
	}
	if _, err := DecodeClient(make([]byte, MaxClientMessageSize+1)); !errors.Is(err, ErrTooLarge) || CodeOf(err) != CodeTooLarge {
		t.Errorf("DecodeClient(64 KiB + 1) = %v; want %v", err, ErrTooLarge)
	}
}

func TestDecodeIntent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Intent
		err  error
	}{
		{"golden", "83 07 03 85 07 01 00 82 0c 22 83 00 00 00", Intent{Seq: 7, Kind: 1, Target: Cell{X: 12, Y: -3}}, nil},
		{"long-form ints", "83 07 03 85 1a 00 00 00 07 18 01 19 00 00 82 1b 00 00 00 00 00 00 00 0c 38 02 83 00 00 00",
			Intent{Seq: 7, Kind: 1, Target: Cell{X: 12, Y: -3}}, nil},
		{"extremes", "83 07 03 85 1a ff ff ff ff 18 ff 18 ff 82 3a 7f ff ff ff 1a 7f ff ff ff 83 18 ff 18 ff 19 ff ff",
			Intent{Seq: 1<<32 - 1, Kind: 255, Dir: 255, Target: Cell{X: -1 << 31, Y: 1<<31 - 1}, Item: ItemSlots{From: 255, To: 255, Count: 1<<16 - 1}}, nil},
		{"count above uint16", "83 07 03 85 07 06 00 82 00 00 83 00 00 1a 00 01 00 00", Intent{}, ErrMalformed},
		{"no item slots (version 2's shape)", "83 07 03 84 07 01 00 82 0c 22", Intent{}, ErrMalformed},
		{"x below int32", "83 07 03 85 07 01 00 82 3a 80 00 00 00 00 83 00 00 00", Intent{}, ErrMalformed},
		{"y above int32", "83 07 03 85 07 01 00 82 00 1a 80 00 00 00 83 00 00 00", Intent{}, ErrMalformed},
		{"kind above uint8", "83 07 03 85 07 19 01 00 00 82 00 00 83 00 00 00", Intent{}, ErrMalformed},
		{"text x", "83 07 03 85 07 01 00 82 61 61 00 83 00 00 00", Intent{}, ErrMalformed},
		{"trailing", "83 07 03 85 07 01 00 82 0c 22 83 00 00 00 00", Intent{}, ErrMalformed},
		{"truncated", "83 07 03 85 07 01 00 82 0c 83 00 00", Intent{}, ErrMalformed},
		{"indefinite target", "83 07 03 85 07 01 00 9f 0c 22 ff 83 00 00 00", Intent{}, ErrMalformed},
		{"not an intent", "83 07 0b 82 07 0f", Intent{}, ErrUnknownType},
		{"version 1", "83 01 03 84 07 01 00 82 0c 22", Intent{}, ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Intent{Seq: 99}
			err := DecodeIntent(mustHex(t, tt.in), &got)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("DecodeIntent err = %v; want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("DecodeIntent = %+v; want %+v", got, tt.want)
			}
			if tt.err == nil {
				checkIntentAgainstCBOR(t, mustHex(t, tt.in), &got)
			}
		})
	}
}

// checkIntentAgainstCBOR: whatever the hand-written intent decoder accepts,
// fxamacker decodes to the same value (the fast path is a strict subset).
func checkIntentAgainstCBOR(t testing.TB, b []byte, got *Intent) {
	t.Helper()
	var env struct {
		_    struct{} `cbor:",toarray"`
		V    uint16
		T    Type
		Body Intent
	}
	if err := decMode.Unmarshal(b, &env); err != nil {
		t.Fatalf("fxamacker rejects what DecodeIntent accepted (%x): %v", b, err)
	}
	if env.Body != *got {
		t.Fatalf("fxamacker = %+v; DecodeIntent = %+v", env.Body, *got)
	}
}

func TestDecodeIntentAllocs(t *testing.T) {
	b := AppendIntent(nil, &Intent{Seq: 1 << 20, Kind: IntentStep, Dir: DirSW, Target: Cell{X: -70000, Y: 3}})
	var in Intent
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodeIntent(b, &in); err != nil {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("DecodeIntent allocs = %v; want 0", allocs)
	}
}

func TestEncodeNil(t *testing.T) {
	if _, err := Encode(nil); err == nil {
		t.Error("Encode(nil) = nil error; want an error")
	}
}

func TestEncodeMatchesDefaultMarshal(t *testing.T) {
	// The envelope as fxamacker's plain Marshal would write it: our
	// encoder options change nothing for non-nil values.
	for _, m := range examples {
		want, err := cbor.Marshal([]any{Version, m.Type(), m})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Encode(%s) = %x; want %x", m.Type(), got, want)
		}
	}
}
