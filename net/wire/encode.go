package wire

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// encMode is built once. Nil slices encode as empty arrays, so that a
// Snapshot with a nil Ents matches the chunk path and no null ever goes on
// the wire; every other option is fxamacker's default (shortest-form
// integers, definite lengths, no tags on our types).
var encMode = func() cbor.UserBufferEncMode {
	em, err := cbor.EncOptions{
		NilContainers: cbor.NilContainerAsEmpty,
		IndefLength:   cbor.IndefLengthForbidden,
	}.UserBufferEncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

// envelopeValue is the whole message [v, t, body] as fxamacker sees it.
type envelopeValue struct {
	_    struct{} `cbor:",toarray"`
	V    uint16
	T    Type
	Body Message
}

// errNilMessage reports Encode of a nil message.
var errNilMessage = errors.New("wire: encode nil message")

// Encode returns msg in its envelope as a new byte slice. It is for
// control-rate messages; it allocates. For per-tick frames use
// [AppendSnapshotHeader] and the record appenders ([AppendCell],
// [AppendEntity], ...), [AppendIntentResult] and [AppendIntent].
func Encode(msg Message) ([]byte, error) { return AppendEncode(nil, msg) }

// AppendEncode appends msg in its envelope to dst and returns the extended
// slice. On error dst is returned unchanged in length. It allocates a few
// small objects per call (the encoder's bookkeeping) plus growth of dst.
func AppendEncode(dst []byte, msg Message) ([]byte, error) {
	if msg == nil {
		return dst, errNilMessage
	}
	if s, ok := msg.(*ShortSnapshot); ok {
		if len(s.Records) > MaxServerMessageSize {
			return dst, fmt.Errorf("wire: encode short snapshot: %w: %d bytes of records", ErrTooLarge, len(s.Records))
		}
		dst = appendHead(dst, majorBytes, uint64(len(s.Records))+2)
		dst = append(dst, s.Tick8, s.Ack8)
		return append(dst, s.Records...), nil
	}
	n := len(dst)
	buf := bytes.NewBuffer(dst)
	if err := encMode.MarshalToBuffer(&envelopeValue{V: Version, T: msg.Type(), Body: msg}, buf); err != nil {
		return dst[:n], fmt.Errorf("wire: encode %s: %w", msg.Type(), err)
	}
	return buf.Bytes(), nil
}

// AppendIntentResult appends an [IntentResult] message to dst without
// allocating if dst has 12 bytes spare. The bytes equal [Encode]'s.
func AppendIntentResult(dst []byte, seq uint32, code Code) []byte {
	dst = appendEnvelope(dst, TypeIntentResult)
	dst = append(dst, majorArray|2)
	dst = appendUint(dst, uint64(seq))
	return appendUint(dst, uint64(code))
}

// AppendIntent appends an [Intent] message to dst without allocating if
// dst has 32 bytes spare; a client or load driver sends these at rate. The
// bytes equal [Encode]'s.
func AppendIntent(dst []byte, in *Intent) []byte {
	dst = appendEnvelope(dst, TypeIntent)
	dst = append(dst, majorArray|5)
	dst = appendUint(dst, uint64(in.Seq))
	dst = appendUint(dst, uint64(in.Kind))
	dst = appendUint(dst, uint64(in.Dir))
	dst = append(dst, majorArray|2)
	dst = appendInt(dst, int64(in.Target.X))
	dst = appendInt(dst, int64(in.Target.Y))
	dst = append(dst, majorArray|3)
	dst = appendUint(dst, uint64(in.Item.From))
	dst = appendUint(dst, uint64(in.Item.To))
	return appendUint(dst, uint64(in.Item.Count))
}
