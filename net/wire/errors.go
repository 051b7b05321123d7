package wire

import (
	"errors"
	"strings"
)

// Decoding errors. Every error returned by a decoder in this package wraps
// exactly one of these with %w; use [errors.Is] or [CodeOf].
var (
	// ErrMalformed reports bytes that are not a well-formed message of the
	// announced type: bad CBOR, wrong shape, out-of-range integer, trailing
	// bytes, a field above its length bound.
	ErrMalformed = errors.New("wire: malformed message")

	// ErrTooLarge reports a message longer than the size limit for its
	// direction; it is checked before any decoding work.
	ErrTooLarge = errors.New("wire: message too large")

	// ErrVersion reports an envelope version this side does not speak.
	ErrVersion = errors.New("wire: unsupported protocol version")

	// ErrUnknownType reports a message type that is not in the catalogue,
	// or not allowed in the direction being decoded.
	ErrUnknownType = errors.New("wire: unknown message type")
)

// CodeOf maps an error from this package to the code a server answers with:
// nil is [CodeOK], [ErrMalformed] is [CodeMalformed], [ErrTooLarge] is
// [CodeTooLarge], [ErrVersion] is [CodeVersionUnsupported], [ErrUnknownType]
// is [CodeUnknownType], and anything else is [CodeInternal].
func CodeOf(err error) Code {
	switch {
	case err == nil:
		return CodeOK
	case errors.Is(err, ErrMalformed):
		return CodeMalformed
	case errors.Is(err, ErrTooLarge):
		return CodeTooLarge
	case errors.Is(err, ErrVersion):
		return CodeVersionUnsupported
	case errors.Is(err, ErrUnknownType):
		return CodeUnknownType
	default:
		return CodeInternal
	}
}

// Detail is err as a server may send it back to a peer (an error's detail):
// what was wrong with the peer's message, in the protocol's words, with
// none of this package's names. It never names the server's internals:
// decode errors say which message and field broke which rule.
func Detail(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "wire: ", "")
}
