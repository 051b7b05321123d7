package wire

import "fmt"

// Version is the protocol version this package encodes. Version 2 made
// snapshots deltas and added area_info; version 3 added items (the item
// intents, inventory, container, an object's item, area_info's item
// kinds); version 4 added plots (area_info), the stash (inventory) and
// OFF_PLOT; version 5 added crafting (the craft and use intents, recipes,
// an item kind's station, NO_RECIPE and KNOWN); version 6 added trade,
// stalls and things that live (the trade, offer, confirm, cancel, price
// and buy intents, trade, a container's prices and ready tick, an item
// kind's becomes and grows, a recipe's seconds, and their codes); version
// 7 added the short snapshot ([ShortSnapshot]). This side speaks only it:
// every client of the earlier versions is in this repository and moved
// with it.
const Version uint16 = 7

// Versions lists every protocol version this side speaks, highest first.
// Treat it as read-only.
var Versions = []uint16{Version}

// Size limits, checked on the whole message before any decoding work.
const (
	// MaxClientMessageSize bounds a client-to-server message. The largest
	// legitimate one is a hello (a grant, a few versions), well under 1 KiB.
	MaxClientMessageSize = 64 << 10

	// MaxServerMessageSize bounds a server-to-client message; snapshots
	// are the largest. An Area host splits nothing: a snapshot must fit.
	MaxServerMessageSize = 1 << 20

	// MaxTextLen bounds every text field (grant, token, detail, name,
	// URL) in bytes.
	MaxTextLen = 1024

	// MaxVersions bounds the versions list of a [Hello].
	MaxVersions = 16

	// maxElements bounds every array (cells per snapshot, entities per
	// cell, objects, players) when decoding.
	maxElements = 4096

	// maxNesting bounds nesting of arrays inside a body. A snapshot body
	// needs 4: body, cells, chunk, entity list, entity.
	maxNesting = 8
)

// Negotiate picks the highest version in [Versions] that the client also
// speaks. If there is none it returns (0, false) and the server answers an
// [Error] with [CodeVersionUnsupported]. It does not allocate.
func Negotiate(clientVersions []uint16) (uint16, bool) {
	for _, v := range Versions { // highest first
		for _, c := range clientVersions {
			if c == v {
				return v, true
			}
		}
	}
	return 0, false
}

// VersionsDetail is the detail of a VERSION_UNSUPPORTED refusal: the
// versions this side speaks, e.g. "this server speaks protocol version 2".
func VersionsDetail() string {
	if len(Versions) == 1 {
		return fmt.Sprintf("this server speaks protocol version %d", Versions[0])
	}
	s := "this server speaks protocol versions"
	for i, v := range Versions {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", v)
	}
	return s
}

// supported reports whether v is in Versions.
func supported(v uint64) bool {
	for _, s := range Versions {
		if uint64(s) == v {
			return true
		}
	}
	return false
}

// appendEnvelope appends the envelope head: a 3-element array, the
// version and the type. The body follows.
func appendEnvelope(dst []byte, t Type) []byte {
	return append(dst, majorArray|3, byte(Version), byte(t))
}

// Peek checks the envelope of a message and returns its type, without
// decoding the body. A server uses it to route: [TypeIntent] to
// [DecodeIntent], anything else to [DecodeClient]. It enforces
// [MaxServerMessageSize], or [MaxClientMessageSize] for a client type, and
// the version (except for a hello, whose shape is frozen). A short
// snapshot ([ShortSnapshot]) is [TypeSnapshot]; its head is checked, not
// its records. It does not allocate on success.
func Peek(b []byte) (Type, error) {
	if IsShortSnapshot(b) {
		_, err := shortSnapshot(b)
		return TypeSnapshot, err
	}
	t, _, err := envelope(b)
	return t, err
}

// envelope parses [v, t, ...] and returns the type and the body bytes.
func envelope(b []byte) (Type, []byte, error) {
	if len(b) > MaxServerMessageSize {
		return 0, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), MaxServerMessageSize)
	}
	r := reader{b: b}
	r.array(3)
	v := r.uint(1<<16 - 1)
	t := Type(r.uint(255))
	if r.err != nil {
		return 0, nil, fmt.Errorf("%w: envelope: %w", ErrMalformed, r.err)
	}
	if !t.Known() {
		return 0, nil, fmt.Errorf("%w: %d", ErrUnknownType, t)
	}
	if t.FromClient() && len(b) > MaxClientMessageSize {
		return 0, nil, fmt.Errorf("%w: %s of %d bytes, limit %d", ErrTooLarge, t, len(b), MaxClientMessageSize)
	}
	if t != TypeHello && !supported(v) {
		return 0, nil, fmt.Errorf("%w: %d", ErrVersion, v)
	}
	return t, r.b, nil
}

// appendEnvelope writes version and type as single bytes; this fails to
// compile if either ever needs more than one.
const (
	_ = uint8(23 - Version)
	_ = uint8(23 - TypeAreaInfo)
)
