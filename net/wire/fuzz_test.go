package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// seed adds every golden file and a few malformed inputs to the corpus.
func seed(f *testing.F) {
	for _, m := range examples {
		f.Add(readGolden(f, m.Type()))
	}
	f.Add(readShortGolden(f))
	f.Add([]byte{})
	f.Add([]byte{0x83, 0x01, 0x0c, 0x84, 0x00, 0x00, 0x85, 0, 0, 0, 0, 0, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x83, 0x09, 0x01, 0x83, 0x61, 0x67, 0x01, 0x9f, 0x01, 0xff})
}

// isDecodeError reports whether err wraps exactly one of the sentinels.
func isDecodeError(err error) bool {
	return errors.Is(err, ErrMalformed) || errors.Is(err, ErrTooLarge) ||
		errors.Is(err, ErrVersion) || errors.Is(err, ErrUnknownType)
}

// roundTrip checks that a decoded message re-encodes, decodes again to an
// equal value, and that the second encoding is a fixed point.
func roundTrip(t *testing.T, in []byte, m Message) {
	t.Helper()
	b1, err := Encode(m)
	if err != nil {
		t.Fatalf("Encode(Decode(%x)): %v", in, err)
	}
	if len(b1) > len(in) { // shortest form never grows
		t.Fatalf("re-encoding grew %d -> %d bytes: %x -> %x", len(in), len(b1), in, b1)
	}
	m2, err := Decode(b1)
	if err != nil {
		t.Fatalf("Decode(Encode(Decode(%x))) = %v", in, err)
	}
	if !reflect.DeepEqual(m, m2) {
		t.Fatalf("round trip of %x: %+v != %+v", in, m, m2)
	}
	b2, err := Encode(m2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("encoding is not a fixed point: %x != %x", b1, b2)
	}
}

func FuzzDecode(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Decode(in)
		if err != nil {
			if !isDecodeError(err) {
				t.Fatalf("Decode(%x) = %v; want a sentinel", in, err)
			}
			return
		}
		typ, perr := Peek(in)
		if perr != nil || typ != m.Type() {
			t.Fatalf("Peek(%x) = %v, %v; Decode gave %s", in, typ, perr, m.Type())
		}
		roundTrip(t, in, m)
	})
}

func FuzzDecodeClient(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := DecodeClient(in)
		if err != nil {
			if !isDecodeError(err) {
				t.Fatalf("DecodeClient(%x) = %v; want a sentinel", in, err)
			}
			return
		}
		if !m.Type().FromClient() {
			t.Fatalf("DecodeClient(%x) returned a %s", in, m.Type())
		}
		roundTrip(t, in, m)
	})
}

func FuzzDecodeIntent(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		var got Intent
		err := DecodeIntent(in, &got)
		if err != nil {
			if !isDecodeError(err) {
				t.Fatalf("DecodeIntent(%x) = %v; want a sentinel", in, err)
			}
			if got != (Intent{}) {
				t.Fatalf("DecodeIntent(%x) failed but left %+v", in, got)
			}
			return
		}
		checkIntentAgainstCBOR(t, in, &got)
		b := AppendIntent(nil, &got)
		var again Intent
		if err := DecodeIntent(b, &again); err != nil || again != got {
			t.Fatalf("round trip of %x: %+v, %v; want %+v", in, again, err, got)
		}
	})
}

// FuzzHeadReaders: the head readers never panic, and accept what the full
// decoder accepts for their type, with the same fields (the records
// aliased rather than copied), and nothing else. The one difference: the
// full decoder also takes an array of small integers where the records'
// byte string belongs (fxamacker fills a []byte from either), which the
// schema does not allow and DecodeSnapshotHead refuses (a wrong shape). A
// short snapshot is compared expanded against the same last snapshot, and
// refused with none before it.
func FuzzHeadReaders(f *testing.F) {
	seed(f)
	f.Add([]byte{0x83, 0x02, 0x0c, 0x84, 0x1b})
	f.Add([]byte{0x83, 0x02, 0x0c, 0x84, 0x00, 0x1a, 0, 1, 0x11, 0x70, 0x00, 0x40})
	f.Add([]byte{0x44, 0x8c, 0x08, 0x04, 0x09})
	f.Add([]byte{0x42, 0x00, 0x00})
	last := Snapshot{Tick: 86402, AckSeq: 7}
	f.Fuzz(func(t *testing.T, in []byte) {
		var s Snapshot
		serr := DecodeSnapshotHead(in, &last, &s)
		var none Snapshot
		if err := DecodeSnapshotHead(in, nil, &none); IsShortSnapshot(in) && err == nil {
			t.Fatalf("DecodeSnapshotHead(%x) with no snapshot before it took a short snapshot", in)
		} else if !IsShortSnapshot(in) && (err == nil) != (serr == nil) {
			t.Fatalf("DecodeSnapshotHead(%x) = %v with a last snapshot, %v without", in, serr, err)
		}
		var r IntentResult
		rerr := DecodeIntentResult(in, &r)
		for _, err := range []error{serr, rerr} {
			if err != nil && !isDecodeError(err) {
				t.Fatalf("head reader of %x = %v; want a sentinel", in, err)
			}
		}
		m, err := Decode(in)
		if short, ok := m.(*ShortSnapshot); ok {
			m = new(short.Expand(&last))
		}
		ms, isSnap := m.(*Snapshot)
		if err == nil && isSnap && errors.Is(serr, errShape) {
			// Decode took the body, so its shape and integers are right:
			// the shape DecodeSnapshotHead refused is the records' (see
			// above).
			return
		}
		if (err == nil && isSnap) != (serr == nil) {
			t.Fatalf("DecodeSnapshotHead(%x) = %v; Decode = %T, %v", in, serr, m, err)
		}
		if serr == nil && (s.Tick != ms.Tick || s.AckSeq != ms.AckSeq || s.Flags != ms.Flags || !bytes.Equal(s.Records, ms.Records)) {
			t.Fatalf("DecodeSnapshotHead(%x) = %+v; Decode = %+v", in, s, ms)
		}
		mr, isRes := m.(*IntentResult)
		if (err == nil && isRes) != (rerr == nil) {
			t.Fatalf("DecodeIntentResult(%x) = %v; Decode = %T, %v", in, rerr, m, err)
		}
		if rerr == nil && r != *mr {
			t.Fatalf("DecodeIntentResult(%x) = %+v; Decode = %+v", in, r, *mr)
		}
	})
}
