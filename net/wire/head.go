package wire

import "math"

// CBOR major types (RFC 8949 section 3.1), shifted into the initial byte.
const (
	majorUint  = 0 << 5
	majorNeg   = 1 << 5
	majorBytes = 2 << 5
	majorText  = 3 << 5
	majorArray = 4 << 5
)

// appendHead appends a CBOR head in shortest form (RFC 8949 section 4.2.1),
// the same form fxamacker/cbor emits, so hand-written encoders and Marshal
// agree byte for byte.
func appendHead(dst []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(dst, major|byte(n))
	case n <= math.MaxUint8:
		return append(dst, major|24, byte(n))
	case n <= math.MaxUint16:
		return append(dst, major|25, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(dst, major|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, major|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
		byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// appendUint appends an unsigned integer.
func appendUint(dst []byte, v uint64) []byte { return appendHead(dst, majorUint, v) }

// appendInt appends a signed integer: major type 0 for v >= 0, major type 1
// carrying -1-v otherwise.
func appendInt(dst []byte, v int64) []byte {
	if v >= 0 {
		return appendHead(dst, majorUint, uint64(v))
	}
	return appendHead(dst, majorNeg, uint64(-1-v))
}

// reader reads CBOR heads from a byte slice with a sticky error: after the
// first failure every read returns zero and err stays set, so a decoder
// checks once at the end (the prometheus decbuf pattern). It never
// allocates and never panics: every length is checked against the input.
type reader struct {
	b   []byte
	err error
}

// head reads one head and returns its major type and argument. Indefinite
// lengths and reserved additional information are malformed.
func (r *reader) head() (major byte, arg uint64) {
	if r.err != nil {
		return 0, 0
	}
	if len(r.b) == 0 {
		r.err = errTruncated
		return 0, 0
	}
	ib := r.b[0]
	major, ai := ib&0xe0, ib&0x1f
	var n int
	switch {
	case ai < 24:
		r.b = r.b[1:]
		return major, uint64(ai)
	case ai == 24:
		n = 1
	case ai == 25:
		n = 2
	case ai == 26:
		n = 4
	case ai == 27:
		n = 8
	default:
		r.err = errIndefinite
		return 0, 0
	}
	if len(r.b) < 1+n {
		r.err = errTruncated
		return 0, 0
	}
	for _, c := range r.b[1 : 1+n] {
		arg = arg<<8 | uint64(c)
	}
	r.b = r.b[1+n:]
	return major, arg
}

// uint reads an unsigned integer no larger than max.
func (r *reader) uint(max uint64) uint64 {
	m, v := r.head()
	if r.err != nil {
		return 0
	}
	if m != majorUint {
		r.err = errNotUint
		return 0
	}
	if v > max {
		r.err = errRange
		return 0
	}
	return v
}

// int32 reads a signed integer that fits in an int32.
func (r *reader) int32() int32 {
	m, v := r.head()
	if r.err != nil {
		return 0
	}
	switch {
	case m == majorUint && v <= math.MaxInt32:
		return int32(v)
	case m == majorNeg && v <= math.MaxInt32: // -1-v >= MinInt32
		return int32(-1 - int64(v))
	case m == majorUint || m == majorNeg:
		r.err = errRange
	default:
		r.err = errNotInt
	}
	return 0
}

// array reads an array head and fails unless it has exactly n elements.
func (r *reader) array(n uint64) {
	m, v := r.head()
	if r.err != nil {
		return
	}
	if m != majorArray || v != n {
		r.err = errShape
	}
}

// skip reads past one data item of the kinds the protocol uses (integers,
// byte and text strings, arrays nested at most maxNesting deep): anything
// else, or input that ends inside the item, is malformed.
func (r *reader) skip() { r.skipDepth(0) }

func (r *reader) skipDepth(depth int) {
	m, v := r.head()
	if r.err != nil {
		return
	}
	switch m {
	case majorUint, majorNeg:
	case majorBytes, majorText:
		if v > uint64(len(r.b)) {
			r.err = errTruncated
			return
		}
		r.b = r.b[v:]
	case majorArray:
		if depth >= maxNesting || v > uint64(len(r.b)) { // an element takes a byte at least
			r.err = errShape
			return
		}
		for i := uint64(0); i < v && r.err == nil; i++ {
			r.skipDepth(depth + 1)
		}
	default:
		r.err = errShape
	}
}
