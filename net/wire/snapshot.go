package wire

// EntityKind says what an entity is.
type EntityKind uint8

// Entity kinds.
const (
	KindPlayer   EntityKind = 0
	KindCreature EntityKind = 1
	KindObject   EntityKind = 2
)

// EntityState is one entity as a snapshot shows it.
type EntityState struct {
	_      struct{} `cbor:",toarray"`
	ID     uint32
	Kind   EntityKind
	X      int32
	Y      int32
	Facing Dir
	Flags  uint8
}

// You is the receiving player's own state in a snapshot.
type You struct {
	_     struct{} `cbor:",toarray"`
	ID    uint32
	X     int32
	Y     int32
	HP    uint16
	Flags uint8
}

// CellChunk is the content of one spatial-hash cell in a snapshot. It
// replaces the client's whole view of that cell; an empty Ents clears it.
type CellChunk struct {
	_    struct{} `cbor:",toarray"`
	Cell uint32
	Ents []EntityState
}

// SnapshotHeader is the per-peer part of a snapshot frame.
type SnapshotHeader struct {
	Tick   uint64
	AckSeq uint32 // highest intent seq applied for this peer
	You    You
}

// Snapshot is the latest-wins view of the world for one peer (server ->
// client). A server builds it with [AppendSnapshotHeader] and shared
// [AppendCellChunk] chunks; [Encode] of a Snapshot gives the same bytes.
// Cells not listed keep the client's previous view.
type Snapshot struct {
	_      struct{} `cbor:",toarray"`
	Tick   uint64
	AckSeq uint32
	You    You
	Cells  []CellChunk
}

// AppendCellChunk appends the chunk [cell, [EntityState...]] for one
// spatial-hash cell to dst and returns the extended slice. The server
// encodes each cell once per snapshot round and shares the bytes among
// every peer whose interest covers the cell.
//
// It allocates only if dst lacks capacity (at most 22 bytes per entity
// plus 15). ents is only read. The result is a valid CBOR item equal to
// fxamacker/cbor's Marshal of the matching [CellChunk] with a non-nil Ents.
func AppendCellChunk(dst []byte, cell uint32, ents []EntityState) []byte {
	dst = append(dst, majorArray|2)
	dst = appendUint(dst, uint64(cell))
	dst = appendHead(dst, majorArray, uint64(len(ents)))
	for i := range ents {
		e := &ents[i]
		dst = append(dst, majorArray|6)
		dst = appendUint(dst, uint64(e.ID))
		dst = appendUint(dst, uint64(e.Kind))
		dst = appendInt(dst, int64(e.X))
		dst = appendInt(dst, int64(e.Y))
		dst = appendUint(dst, uint64(e.Facing))
		dst = appendUint(dst, uint64(e.Flags))
	}
	return dst
}

// MaxSnapshotHeaderSize is the most bytes [AppendSnapshotHeader] writes.
const MaxSnapshotHeaderSize = 3 + 1 + 9 + 5 + (1 + 5 + 5 + 5 + 3 + 2) + 9

// AppendSnapshotHeader appends the envelope, the snapshot body up to its
// cells, and the array head for nCells cells. Followed by exactly nCells
// chunks from [AppendCellChunk], header || chunk_1 || ... || chunk_n is
// one complete message, byte for byte what [Encode] produces for the
// equivalent [Snapshot] (and what fxamacker/cbor's Marshal produces for
// [v, t, Snapshot]). The parts may stay separate buffers handed to writev.
//
// It allocates only if dst lacks [MaxSnapshotHeaderSize] spare capacity.
// It panics if nCells is negative.
func AppendSnapshotHeader(dst []byte, h *SnapshotHeader, nCells int) []byte {
	if nCells < 0 {
		panic("wire: negative cell count")
	}
	dst = appendEnvelope(dst, TypeSnapshot)
	dst = append(dst, majorArray|4)
	dst = appendUint(dst, h.Tick)
	dst = appendUint(dst, uint64(h.AckSeq))
	dst = append(dst, majorArray|5)
	dst = appendUint(dst, uint64(h.You.ID))
	dst = appendInt(dst, int64(h.You.X))
	dst = appendInt(dst, int64(h.You.Y))
	dst = appendUint(dst, uint64(h.You.HP))
	dst = appendUint(dst, uint64(h.You.Flags))
	return appendHead(dst, majorArray, uint64(nCells))
}
