package wire

import (
	"fmt"
	"math"
)

// The head readers below decode the two server messages a client reads at
// rate, a snapshot's per-peer header and an intent_result, into the
// caller's struct without allocating, so that a client (or a load driver
// running thousands of them) can match answers to its seqs for a few
// nanoseconds a frame. They check what [Decode] checks for these types
// and agree with it on every input (FuzzHeadReaders).

// DecodeSnapshotHead decodes a snapshot message, of either form, into dst
// without decoding (or copying) its records: dst.Records is the records'
// byte string as a sub-slice of b, valid as long as b is; read it with
// [RecordReader]. last is the snapshot the connection received before it
// (its Tick and AckSeq), nil before the first: a short snapshot is
// expanded against it ([ShortSnapshot.Expand]), and one with no last is
// [ErrMalformed]. It checks the size
// limit, the envelope, the version and the type (another type is
// [ErrUnknownType]), the body's shape, each field's range, and that the
// records end the message exactly. On error dst is left zeroed. It does
// not allocate on success and never panics. dst and last may be the same.
func DecodeSnapshotHead(b []byte, last *Snapshot, dst *Snapshot) error {
	if IsShortSnapshot(b) {
		c, err := shortSnapshot(b)
		switch {
		case err != nil:
		case last == nil:
			err = fmt.Errorf("%w: short snapshot: no snapshot before it on this connection", ErrMalformed)
		}
		if err != nil {
			*dst = Snapshot{}
			return err
		}
		*dst = (&ShortSnapshot{Tick8: c[0], Ack8: c[1], Records: c[2:]}).Expand(last)
		return nil
	}
	t, body, err := envelope(b)
	if err != nil {
		*dst = Snapshot{}
		return err
	}
	if t != TypeSnapshot {
		*dst = Snapshot{}
		return fmt.Errorf("%w: %s where a snapshot was expected", ErrUnknownType, t)
	}
	r := reader{b: body}
	r.array(4)
	tick := r.uint(math.MaxUint64)
	ack := r.uint(math.MaxUint32)
	flags := r.uint(math.MaxUint8)
	major, n := r.head()
	switch {
	case r.err != nil:
	case major != majorBytes:
		r.err = errShape
	case n != uint64(len(r.b)):
		if n > uint64(len(r.b)) {
			r.err = errTruncated
		} else {
			r.err = errTrailing
		}
	}
	if r.err != nil {
		*dst = Snapshot{}
		return fmt.Errorf("%w: snapshot: %w", ErrMalformed, r.err)
	}
	*dst = Snapshot{Tick: tick, AckSeq: uint32(ack), Flags: SnapshotFlags(flags), Records: r.b}
	return nil
}

// DecodeIntentResult decodes an intent_result message into dst without
// allocating on success (errors allocate their message). It checks what
// [DecodeSnapshotHead] checks; a message of another type is
// [ErrUnknownType]. On error dst is left zeroed. It never panics.
func DecodeIntentResult(b []byte, dst *IntentResult) error {
	t, body, err := envelope(b)
	if err != nil {
		*dst = IntentResult{}
		return err
	}
	if t != TypeIntentResult {
		*dst = IntentResult{}
		return fmt.Errorf("%w: %s where an intent_result was expected", ErrUnknownType, t)
	}
	r := reader{b: body}
	r.array(2)
	seq := r.uint(math.MaxUint32)
	code := r.uint(math.MaxUint16)
	if r.err == nil && len(r.b) != 0 {
		r.err = errTrailing
	}
	if r.err != nil {
		*dst = IntentResult{}
		return fmt.Errorf("%w: intent_result: %w", ErrMalformed, r.err)
	}
	*dst = IntentResult{Seq: uint32(seq), Code: Code(code)}
	return nil
}

// Stream decodes the server messages of one connection in order: [Decode],
// but a short snapshot comes back a whole [*Snapshot], expanded against the
// snapshot before it on the connection (and refused [ErrMalformed] when
// there is none). A connection needs its own; the zero Stream is ready,
// and a new connection starts a new one. It is not safe for concurrent use.
type Stream struct {
	last    Snapshot // the last snapshot's tick and ack_seq
	snapped bool
}

// Decode decodes one message of the connection (see [Decode]).
func (st *Stream) Decode(b []byte) (Message, error) {
	if !IsShortSnapshot(b) {
		m, err := Decode(b)
		if s, ok := m.(*Snapshot); ok {
			st.last, st.snapped = Snapshot{Tick: s.Tick, AckSeq: s.AckSeq}, true
		}
		return m, err
	}
	var last *Snapshot
	if st.snapped {
		last = &st.last
	}
	var s Snapshot
	if err := DecodeSnapshotHead(b, last, &s); err != nil {
		return nil, err
	}
	st.last = Snapshot{Tick: s.Tick, AckSeq: s.AckSeq}
	s.Records = append([]byte{}, s.Records...)
	return &s, nil
}
