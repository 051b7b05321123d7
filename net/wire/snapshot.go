package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// EntityKind says what an entity is.
type EntityKind uint8

// Entity kinds. Static objects (doors, trees, signs) are not entities:
// they come with the map of their cell ([Static]).
const (
	KindPlayer   EntityKind = 0
	KindCreature EntityKind = 1
)

// EntityFlags are an entity's boolean states.
type EntityFlags uint8

// The entity flags.
const (
	// FlagTransit: the entity is crossing a portal (its intents are
	// refused PORTAL_IN_PROGRESS until the crossing settles).
	FlagTransit EntityFlags = 1 << 0
	// FlagAway: a player whose connection dropped; the body waits for a
	// resume until the resume grace ends.
	FlagAway EntityFlags = 1 << 1
)

// EntityState is one entity as a snapshot record shows it. Look says what
// it is within its kind: for a creature, its creature kind's place in
// [AreaInfo].Creatures, counted from 1; 0 for a player (and for a creature
// of no listed kind). HP 0 means the entity has no health (it cannot be
// hurt).
type EntityState struct {
	ID     uint32
	Kind   EntityKind
	Look   uint16
	X, Y   int32
	Facing Dir
	HP     uint16
	Flags  EntityFlags
}

// SnapshotFlags qualify a whole snapshot.
type SnapshotFlags uint8

// The snapshot flags.
const (
	// SnapshotReset: before applying the records, drop the whole view
	// (every entity and every held cell). The first snapshot after a hello
	// or a resume has it.
	SnapshotReset SnapshotFlags = 1 << 0
)

// Snapshot is the latest-wins view of the world for one peer (server ->
// client): the tick, the highest intent seq applied for the peer's session,
// flags, and the records that bring the peer's view from what it held to
// the world as of Tick (see [RecordReader] and docs/protocol.md). A server
// builds it with [AppendSnapshotHeader] followed by record bytes shared
// between peers; [Encode] of a Snapshot gives the same bytes.
type Snapshot struct {
	_       struct{} `cbor:",toarray"`
	Tick    uint64
	AckSeq  uint32
	Flags   SnapshotFlags
	Records []byte
}

// MaxSnapshotHeaderSize is the most bytes [AppendSnapshotHeader] writes.
const MaxSnapshotHeaderSize = 3 + 1 + 9 + 5 + 2 + 5

// AppendSnapshotHeader appends the envelope, the snapshot body up to its
// records and the head of a byte string of recordsLen bytes. Followed by
// exactly recordsLen bytes of records, the whole is one complete message,
// byte for byte what [Encode] produces for the equivalent [Snapshot]. The
// parts may stay separate buffers handed to writev.
//
// It allocates only if dst lacks [MaxSnapshotHeaderSize] spare capacity.
// It panics if recordsLen is negative.
func AppendSnapshotHeader(dst []byte, tick uint64, ackSeq uint32, flags SnapshotFlags, recordsLen int) []byte {
	if recordsLen < 0 {
		panic("wire: negative records length")
	}
	dst = appendEnvelope(dst, TypeSnapshot)
	dst = append(dst, majorArray|4)
	dst = appendUint(dst, tick)
	dst = appendUint(dst, uint64(ackSeq))
	dst = appendUint(dst, uint64(flags))
	return appendHead(dst, majorBytes, uint64(recordsLen))
}

// ShortSnapshot is a snapshot in its short form (docs/protocol.md, "Short
// snapshots"): not an envelope but one CBOR byte string holding the low
// bytes of the tick and of ack_seq, then the records. Its flags are 0. What
// it stands for depends on the snapshot the connection received before it
// ([ShortSnapshot.Expand]); [Decode] returns one, [DecodeSnapshotHead]
// expands it on the way. A server builds it with
// [AppendShortSnapshotHeader] followed by the records.
type ShortSnapshot struct {
	Tick8, Ack8 uint8
	Records     []byte
}

// Type implements [Message]: a short snapshot is a snapshot.
func (*ShortSnapshot) Type() Type { return TypeSnapshot }

// Expand returns the snapshot s stands for, given last, the snapshot the
// connection received before it (of either form): the tick and ack_seq
// nearest at or after last's with s's low bytes, ack_seq in serial-number
// arithmetic (seqs wrap after 2^32-1, docs/protocol.md "Seqs"). Records
// alias s's.
func (s *ShortSnapshot) Expand(last *Snapshot) Snapshot {
	return Snapshot{
		Tick:    last.Tick + uint64(s.Tick8-uint8(last.Tick)),
		AckSeq:  last.AckSeq + uint32(s.Ack8-uint8(last.AckSeq)),
		Records: s.Records,
	}
}

// ShortReach is how far a short snapshot's tick and ack_seq may be from
// those of the snapshot the client holds: less than this, each (ack_seq
// counted in serial-number arithmetic).
const ShortReach = 256

// MaxShortSnapshotHeaderSize is the most bytes [AppendShortSnapshotHeader]
// writes.
const MaxShortSnapshotHeaderSize = 5 + 2

// AppendShortSnapshotHeader appends the head of a short snapshot of
// recordsLen bytes of records: the byte string's head, the tick's and
// ack_seq's low bytes. Followed by exactly recordsLen bytes of records,
// the whole is one complete message, byte for byte what [Encode] produces
// for the equivalent [ShortSnapshot]. The sender must know that the client
// holds a snapshot whose tick and ack_seq are each at or below these and
// less than [ShortReach] below (docs/protocol.md, "Short snapshots").
//
// It allocates only if dst lacks [MaxShortSnapshotHeaderSize] spare
// capacity. It panics if recordsLen is negative.
func AppendShortSnapshotHeader(dst []byte, tick uint64, ackSeq uint32, recordsLen int) []byte {
	if recordsLen < 0 {
		panic("wire: negative records length")
	}
	dst = appendHead(dst, majorBytes, uint64(recordsLen)+2)
	return append(dst, byte(tick), byte(ackSeq))
}

// IsShortSnapshot reports whether b, a server's message, is in the short
// snapshot form (a byte string head), not an envelope.
func IsShortSnapshot(b []byte) bool { return len(b) > 0 && b[0]&0xe0 == majorBytes }

// shortSnapshot checks a short snapshot's size and head and returns its
// content (tick8, ack8, records), a sub-slice of b.
func shortSnapshot(b []byte) ([]byte, error) {
	if len(b) > MaxServerMessageSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), MaxServerMessageSize)
	}
	r := reader{b: b}
	major, n := r.head()
	switch {
	case r.err != nil:
	case major != majorBytes:
		r.err = errShape
	case n > uint64(len(r.b)):
		r.err = errTruncated
	case n < uint64(len(r.b)):
		r.err = errTrailing
	case n < 2:
		r.err = errShort
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: short snapshot: %w", ErrMalformed, r.err)
	}
	return r.b, nil
}

// errShort reports a short snapshot without its tick and ack bytes.
var errShort = errors.New("shorter than its tick and ack bytes")

// Op is a snapshot record's kind: its first byte (a step carries its
// direction in the low three bits).
type Op uint8

// The record kinds. Records are a byte-oriented format inside the
// snapshot's byte string; unsigned numbers are LEB128 varints ("uv"),
// small enums single bytes ("u8"). See docs/protocol.md.
const (
	// OpStep (0x00..0x07, the direction in the low bits): id uv. The
	// entity moved one square in the direction and now faces it.
	OpStep Op = 0x00
	// OpPos (0x08): id uv, x uv, y uv. The entity now stands on (x, y).
	OpPos Op = 0x08
	// OpGone (0x09): id uv. The entity left the world.
	OpGone Op = 0x09
	// OpState (0x0a): id uv, hp uv, flags u8, facing u8. The entity's
	// health, flags or facing changed where it stands.
	OpState Op = 0x0a
	// OpEnter (0x10): an entity (id uv, kind u8, x uv, y uv, facing u8, hp
	// uv, flags u8). The entity is, whole, where it says (it came into a
	// held cell, or into the world).
	OpEnter Op = 0x10
	// OpCell (0x11): cell uv, n uv, then n entities (as OpEnter, without
	// the op byte). The cell's whole content: drop every entity standing in
	// the cell, then put these; the cell is held from now on.
	OpCell Op = 0x11
	// OpForget (0x12): cell uv. The cell left the view: drop every entity
	// standing in it; the cell is no longer held.
	OpForget Op = 0x12
)

// Record is one decoded snapshot record. Which fields are set depends on
// Op: Step sets ID and Dir; Pos ID, X, Y; Gone ID; State ID, HP, Flags,
// Facing; Enter Entity (also for each entity of a Cell record, with
// InCell set); Cell Cell and N; Forget Cell.
type Record struct {
	Op     Op // for a step, OpStep; the direction is in Dir
	Dir    Dir
	ID     uint32
	X, Y   int32
	HP     uint16
	Flags  EntityFlags
	Facing Dir
	Entity EntityState
	Cell   uint32
	N      int  // entities that follow a Cell record
	InCell bool // an Enter that is one of a Cell record's entities
}

// Errors of the record reader (wrapped by ErrMalformed).
var (
	errRecordOp    = errors.New("unknown record op")
	errVarint      = errors.New("bad varint")
	errRecordCount = errors.New("cell entity count beyond the record bytes")
)

// RecordReader reads snapshot records from a byte string without
// allocating. It never panics; on malformed input Next reports false and
// Err an error wrapping [ErrMalformed].
//
//	r := wire.RecordReader{B: snap.Records}
//	var rec wire.Record
//	for r.Next(&rec) { ... }
//	if err := r.Err(); err != nil { ... }
type RecordReader struct {
	B    []byte
	err  error
	left int // entities of the current Cell record still to read
}

// Err returns the first decoding error, or nil.
func (r *RecordReader) Err() error { return r.err }

func (r *RecordReader) uv(max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 || v > max {
		r.err = errVarint
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *RecordReader) u8() uint8 {
	if r.err != nil {
		return 0
	}
	if len(r.B) == 0 {
		r.err = errTruncated
		return 0
	}
	v := r.B[0]
	r.B = r.B[1:]
	return v
}

func (r *RecordReader) entity(e *EntityState) {
	e.ID = uint32(r.uv(1<<32 - 1))
	e.Kind = EntityKind(r.u8())
	e.Look = uint16(r.uv(1<<16 - 1))
	e.X = int32(r.uv(1<<31 - 1))
	e.Y = int32(r.uv(1<<31 - 1))
	e.Facing = Dir(r.u8())
	e.HP = uint16(r.uv(1<<16 - 1))
	e.Flags = EntityFlags(r.u8())
}

// Next reads the next record into rec and reports whether there was one.
func (r *RecordReader) Next(rec *Record) bool {
	if r.err != nil {
		return false
	}
	*rec = Record{}
	if r.left > 0 {
		r.left--
		rec.Op, rec.InCell = OpEnter, true
		r.entity(&rec.Entity)
		return r.check()
	}
	if len(r.B) == 0 {
		return false
	}
	op := Op(r.u8())
	switch {
	case op <= 0x07:
		rec.Op, rec.Dir = OpStep, Dir(op)
		rec.ID = uint32(r.uv(1<<32 - 1))
	case op == OpPos:
		rec.Op = op
		rec.ID = uint32(r.uv(1<<32 - 1))
		rec.X = int32(r.uv(1<<31 - 1))
		rec.Y = int32(r.uv(1<<31 - 1))
	case op == OpGone:
		rec.Op = op
		rec.ID = uint32(r.uv(1<<32 - 1))
	case op == OpState:
		rec.Op = op
		rec.ID = uint32(r.uv(1<<32 - 1))
		rec.HP = uint16(r.uv(1<<16 - 1))
		rec.Flags = EntityFlags(r.u8())
		rec.Facing = Dir(r.u8())
	case op == OpEnter:
		rec.Op = op
		r.entity(&rec.Entity)
	case op == OpCell:
		rec.Op = op
		rec.Cell = uint32(r.uv(1<<32 - 1))
		n := r.uv(1<<31 - 1)
		// Each entity takes at least 7 bytes: a count beyond what is left
		// is malformed (and is refused before anyone loops on it).
		if r.err == nil && n > uint64(len(r.B))/7 {
			r.err = errRecordCount
		}
		rec.N = int(n)
		r.left = rec.N
	case op == OpForget:
		rec.Op = op
		rec.Cell = uint32(r.uv(1<<32 - 1))
	default:
		r.err = errRecordOp
	}
	return r.check()
}

func (r *RecordReader) check() bool {
	if r.err != nil {
		r.err = fmt.Errorf("%w: snapshot record: %w", ErrMalformed, r.err)
		return false
	}
	return true
}

// AppendStep appends a step record: entity id moved one square in d.
func AppendStep(dst []byte, id uint32, d Dir) []byte {
	dst = append(dst, byte(OpStep)|byte(d&7))
	return binary.AppendUvarint(dst, uint64(id))
}

// AppendPos appends a position record: entity id now stands on (x, y).
func AppendPos(dst []byte, id uint32, x, y int32) []byte {
	dst = append(dst, byte(OpPos))
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = binary.AppendUvarint(dst, uint64(uint32(x)))
	return binary.AppendUvarint(dst, uint64(uint32(y)))
}

// AppendGone appends a gone record: entity id left the world.
func AppendGone(dst []byte, id uint32) []byte {
	dst = append(dst, byte(OpGone))
	return binary.AppendUvarint(dst, uint64(id))
}

// AppendState appends a state record: entity id's health, flags and
// facing where it stands.
func AppendState(dst []byte, id uint32, hp uint16, flags EntityFlags, facing Dir) []byte {
	dst = append(dst, byte(OpState))
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = binary.AppendUvarint(dst, uint64(hp))
	return append(dst, byte(flags), byte(facing))
}

// AppendEnter appends an enter record: entity e, whole.
func AppendEnter(dst []byte, e *EntityState) []byte {
	dst = append(dst, byte(OpEnter))
	return AppendEntity(dst, e)
}

// AppendCell appends the head of a cell record for n entities; append
// exactly n entities with [AppendEntity] after it.
func AppendCell(dst []byte, cell uint32, n int) []byte {
	dst = append(dst, byte(OpCell))
	dst = binary.AppendUvarint(dst, uint64(cell))
	return binary.AppendUvarint(dst, uint64(n))
}

// AppendEntity appends one entity of a cell or enter record (no op byte).
// Coordinates are squares of the grid (0 or more).
func AppendEntity(dst []byte, e *EntityState) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.ID))
	dst = append(dst, byte(e.Kind))
	dst = binary.AppendUvarint(dst, uint64(e.Look))
	dst = binary.AppendUvarint(dst, uint64(uint32(e.X)))
	dst = binary.AppendUvarint(dst, uint64(uint32(e.Y)))
	dst = append(dst, byte(e.Facing))
	dst = binary.AppendUvarint(dst, uint64(e.HP))
	return append(dst, byte(e.Flags))
}

// AppendForget appends a forget record: the cell left the view.
func AppendForget(dst []byte, cell uint32) []byte {
	dst = append(dst, byte(OpForget))
	return binary.AppendUvarint(dst, uint64(cell))
}
