package load

import "github.com/leyworks/ley/net/wire"

// The head-only parsers below read just the fields the driver needs from a
// server frame, without decoding (or allocating for) the rest. They follow
// docs/protocol.md: envelope [v, t, body], snapshot body [tick, ack_seq,
// flags, records], intent_result body [seq, code].

// cborHead reads one CBOR head: its major type, argument and the rest.
func cborHead(b []byte) (major byte, arg uint64, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, 0, nil, false
	}
	major, ai := b[0]>>5, b[0]&0x1f
	var n int
	switch {
	case ai < 24:
		return major, uint64(ai), b[1:], true
	case ai == 24:
		n = 1
	case ai == 25:
		n = 2
	case ai == 26:
		n = 4
	case ai == 27:
		n = 8
	default:
		return 0, 0, nil, false
	}
	if len(b) < 1+n {
		return 0, 0, nil, false
	}
	for _, c := range b[1 : 1+n] {
		arg = arg<<8 | uint64(c)
	}
	return major, arg, b[1+n:], true
}

const (
	majorUint  = 0
	majorArray = 4
)

// body skips the envelope of b (already checked by wire.Peek) and checks
// the body is an array of n elements.
func body(b []byte, n uint64) ([]byte, bool) {
	m, a, b, ok := cborHead(b) // [v, t, body]
	if !ok || m != majorArray || a != 3 {
		return nil, false
	}
	if _, _, b, ok = cborHead(b); !ok { // v
		return nil, false
	}
	if _, _, b, ok = cborHead(b); !ok { // t
		return nil, false
	}
	m, a, b, ok = cborHead(b)
	if !ok || m != majorArray || a != n {
		return nil, false
	}
	return b, true
}

// snapshotAck returns a snapshot frame's ack_seq.
func snapshotAck(b []byte) (uint32, bool) {
	b, ok := body(b, 4)
	if !ok {
		return 0, false
	}
	m, _, b, ok := cborHead(b) // tick
	if !ok || m != majorUint {
		return 0, false
	}
	m, ack, _, ok := cborHead(b)
	if !ok || m != majorUint || ack > 1<<32-1 {
		return 0, false
	}
	return uint32(ack), true
}

// intentResult returns an intent_result frame's seq and code.
func intentResult(b []byte) (uint32, wire.Code, bool) {
	b, ok := body(b, 2)
	if !ok {
		return 0, 0, false
	}
	m, seq, b, ok := cborHead(b)
	if !ok || m != majorUint || seq > 1<<32-1 {
		return 0, 0, false
	}
	m, code, _, ok := cborHead(b)
	if !ok || m != majorUint || code > 1<<16-1 {
		return 0, 0, false
	}
	return uint32(seq), wire.Code(code), true
}
