package wire

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fxamacker/cbor/v2"
)

// Details wrapped by ErrMalformed from the hand-written readers.
var (
	errTruncated  = errors.New("truncated")
	errIndefinite = errors.New("indefinite length or reserved head")
	errNotUint    = errors.New("want unsigned integer")
	errNotInt     = errors.New("want integer")
	errRange      = errors.New("integer out of range")
	errShape      = errors.New("wrong array shape")
	errTrailing   = errors.New("trailing bytes")
	errTextLen    = errors.New("text field too long")
	errVersions   = errors.New("too many versions")
	errFlow       = errors.New("flow window and directions disagree")
	errStash      = errors.New("stash too long")
	errRecipes    = errors.New("too many recipes, or a recipe with too many inputs or outputs")
	errOffered    = errors.New("a trade side with too many stacks")
	errPrices     = errors.New("more prices than slots")
)

// decMode is built once. The body types are fixed-shape toarray structs,
// so the limits can be tight: shallow nesting, bounded arrays and maps, no
// indefinite lengths, no tags, no simple values (no null, no booleans), and
// unknown fields or trailing bytes are errors. Text is checked for valid
// UTF-8 (the default).
var decMode = func() cbor.DecMode {
	var rejects []func(*cbor.SimpleValueRegistry) error
	for sv := 0; sv < 256; sv++ {
		if sv < 24 || sv > 31 {
			rejects = append(rejects, cbor.WithRejectedSimpleValue(cbor.SimpleValue(sv)))
		}
	}
	simple, err := cbor.NewSimpleValueRegistryFromDefaults(rejects...)
	if err != nil {
		panic(err)
	}
	dm, err := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels:   maxNesting,
		MaxArrayElements:  maxElements,
		MaxMapPairs:       maxElements,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
		UTF8:              cbor.UTF8RejectInvalid,
		SimpleValues:      simple,
		NaN:               cbor.NaNDecodeForbidden,
		Inf:               cbor.InfDecodeForbidden,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// Decode decodes one message of either direction and returns a pointer to
// a new body (*Hello, *Snapshot, ...). It checks the size limit of the
// message's direction, the envelope, the version (any version for a
// hello), the type, the body's shape and every field's bound. The result
// does not alias b. Errors wrap [ErrTooLarge], [ErrMalformed],
// [ErrVersion] or [ErrUnknownType]; it never panics. It allocates the body
// and its slices and strings. A short snapshot decodes to a
// [*ShortSnapshot] (its type is [TypeSnapshot]), which the caller expands
// against the snapshot before it.
func Decode(b []byte) (Message, error) {
	if IsShortSnapshot(b) {
		c, err := shortSnapshot(b)
		if err != nil {
			return nil, err
		}
		return &ShortSnapshot{Tick8: c[0], Ack8: c[1], Records: append([]byte{}, c[2:]...)}, nil
	}
	t, body, err := envelope(b)
	if err != nil {
		return nil, err
	}
	return decodeBody(t, body)
}

// DecodeClient is [Decode] for a server reading a client: it enforces
// [MaxClientMessageSize] first and answers [ErrUnknownType] for a
// server-to-client type.
func DecodeClient(b []byte) (Message, error) {
	if len(b) > MaxClientMessageSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), MaxClientMessageSize)
	}
	t, body, err := envelope(b)
	if err != nil {
		return nil, err
	}
	if !t.FromClient() {
		return nil, fmt.Errorf("%w: %s from a client", ErrUnknownType, t)
	}
	return decodeBody(t, body)
}

func decodeBody(t Type, body []byte) (Message, error) {
	if t == TypeIntent { // one decoder for intents, whichever entry point
		in := new(Intent)
		if err := decodeIntentBody(body, in); err != nil {
			return nil, err
		}
		return in, nil
	}
	m := newMessage(t)
	if err := decMode.Unmarshal(body, m); err != nil {
		// The CBOR library's words name Go types and fields: an error a
		// server may send back to a peer says only what was wrong.
		return nil, fmt.Errorf("%w: %s: %s", ErrMalformed, t, plainCBORError(err))
	}
	if err := check(m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, t, err)
	}
	return m, nil
}

// check enforces the bounds the CBOR decoder cannot express: text lengths
// and the hello's versions list.
func check(m Message) error {
	var texts [3]string
	switch m := m.(type) {
	case *Hello:
		if len(m.Versions) > MaxVersions {
			return errVersions
		}
		texts[0] = m.Grant
	case *Resume:
		texts[0] = m.Token
	case *HelloAck:
		texts[0] = m.ResumeToken
	case *Error:
		texts[0] = m.Detail
	case *Rehello:
		texts[0] = m.Detail
	case *PortalMoved:
		texts[0], texts[1] = m.WSURL, m.Grant
	case *Flow:
		if m.W > MaxFlowSide || m.H > MaxFlowSide || len(m.Dirs) != int(m.W)*int(m.H) {
			return errFlow
		}
		for _, d := range m.Dirs {
			if d > FlowTarget && d != FlowUnreached {
				return errFlow
			}
		}
	case *AreaInfo:
		texts[0] = m.Kind
		for i := range m.Creatures {
			if len(m.Creatures[i].Name) > MaxTextLen {
				return errTextLen
			}
		}
		for i := range m.Items {
			if len(m.Items[i].Name) > MaxTextLen || len(m.Items[i].Label) > MaxTextLen || len(m.Items[i].Station) > MaxTextLen {
				return errTextLen
			}
		}
	case *Inventory:
		if len(m.Stash) > MaxStash {
			return errStash
		}
	case *Trade:
		if len(m.Mine) > MaxOffered || len(m.Theirs) > MaxOffered {
			return errOffered
		}
	case *Container:
		if len(m.Prices) > len(m.Slots) {
			return errPrices
		}
	case *Recipes:
		if len(m.Known) > MaxRecipes {
			return errRecipes
		}
		for i := range m.Known {
			r := &m.Known[i]
			if len(r.Inputs) > MaxRecipeAmounts || len(r.Outputs) > MaxRecipeAmounts {
				return errRecipes
			}
			if len(r.Name) > MaxTextLen || len(r.Station) > MaxTextLen {
				return errTextLen
			}
		}
	case *Static:
		for i := range m.Objects {
			if len(m.Objects[i].Text) > MaxTextLen {
				return errTextLen
			}
		}
	case *Presence:
		for i := range m.Players {
			if len(m.Players[i].Name) > MaxTextLen {
				return errTextLen
			}
		}
	}
	for _, s := range texts {
		if len(s) > MaxTextLen {
			return errTextLen
		}
	}
	return nil
}

// DecodeIntent decodes an intent message into the caller's dst without
// allocating on success (errors allocate their message). It checks
// [MaxClientMessageSize], the envelope, the version and the type (a
// non-intent is [ErrUnknownType]), and accepts exactly the shape
// [4 fields, [x, y]] with every integer in range and no trailing bytes.
// Integers may be in any CBOR width; nothing else (tags, null, floats,
// indefinite lengths) is accepted. On error dst is left zeroed. It never
// panics.
func DecodeIntent(b []byte, dst *Intent) error {
	if len(b) > MaxClientMessageSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), MaxClientMessageSize)
	}
	t, body, err := envelope(b)
	if err != nil {
		*dst = Intent{}
		return err
	}
	if t != TypeIntent {
		*dst = Intent{}
		return fmt.Errorf("%w: %s where an intent was expected", ErrUnknownType, t)
	}
	return decodeIntentBody(body, dst)
}

func decodeIntentBody(body []byte, dst *Intent) error {
	r := reader{b: body}
	r.array(5)
	seq := r.uint(math.MaxUint32)
	kind := r.uint(math.MaxUint8)
	dir := r.uint(math.MaxUint8)
	r.array(2)
	x := r.int32()
	y := r.int32()
	r.array(3)
	from := r.uint(math.MaxUint8)
	to := r.uint(math.MaxUint8)
	count := r.uint(math.MaxUint16)
	if r.err == nil && len(r.b) != 0 {
		r.err = errTrailing
	}
	if r.err != nil {
		*dst = Intent{}
		return fmt.Errorf("%w: intent: %w", ErrMalformed, r.err)
	}
	*dst = Intent{Seq: uint32(seq), Kind: IntentKind(kind), Dir: Dir(dir), Target: Cell{X: x, Y: y},
		Item: ItemSlots{From: uint8(from), To: uint8(to), Count: uint16(count)}}
	return nil
}

// plainCBORError words a decoding error of the CBOR library without its
// Go type and field names.
func plainCBORError(err error) string {
	var typ *cbor.UnmarshalTypeError
	var syn *cbor.SyntaxError
	var sem *cbor.SemanticError
	var lim *cbor.MaxArrayElementsError
	var nest *cbor.MaxNestedLevelError
	switch {
	case errors.As(err, &typ):
		return "a field of the wrong type, or a body of the wrong shape"
	case errors.As(err, &lim):
		return "an array above the element limit"
	case errors.As(err, &nest):
		return "nested too deep"
	case errors.As(err, &syn), errors.As(err, &sem):
		return "not well-formed CBOR for this message"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "truncated"
	}
	return "not this message's shape"
}

// IntentSeq reads the seq of what looks like an intent ([v, 3, [seq,
// ...]]) without checking anything else, so that an intent too broken to
// decode can still be answered by its seq. It reports false when there is
// no such seq to read. It never allocates or panics.
func IntentSeq(b []byte) (uint32, bool) {
	seq, ok := firstUint(b, TypeIntent, 0, math.MaxUint32)
	return uint32(seq), ok
}

// JoinIDOf reads the join id of a hello or resume whose body may not
// decode (a wrong field, too many versions, another envelope version): the
// second element of the body, when it is an unsigned integer. A server
// echoes it in the error it answers such a join with, so that the client
// can tell which of its attempts was refused. It does not allocate.
func JoinIDOf(b []byte) (uint64, bool) {
	for _, t := range [...]Type{TypeHello, TypeResume} {
		if id, ok := firstUint(b, t, 1, math.MaxUint64); ok {
			return id, true
		}
	}
	return 0, false
}

// firstUint reads element i of the body of a message of type t (any
// envelope version) when elements 0..i-1 are well-formed CBOR items of
// the body and element i is an unsigned integer at most max.
func firstUint(b []byte, t Type, i int, max uint64) (uint64, bool) {
	r := reader{b: b}
	if major, n := r.head(); r.err != nil || major != majorArray || n != 3 {
		return 0, false
	}
	r.uint(1<<16 - 1)
	if got := r.uint(255); r.err != nil || Type(got) != t {
		return 0, false
	}
	if major, n := r.head(); r.err != nil || major != majorArray || n <= uint64(i) {
		return 0, false
	}
	for ; i > 0; i-- {
		r.skip()
	}
	v := r.uint(max)
	if r.err != nil {
		return 0, false
	}
	return v, true
}
