// Package wire is the binary protocol between a client and an area host:
// every WebSocket binary frame holds one CBOR message (RFC 8949) in a
// versioned envelope [v, t, body], but for the short snapshot, one CBOR
// byte string ([ShortSnapshot]). docs/protocol.md is the specification,
// with the CDDL of every message; this package is its only implementation
// and a serialization layer only (no sessions, no game rules).
//
// # Outline
//
//   - Messages: one Go struct per message type ([Hello], [Resume],
//     [Intent], [HelloAck], [Error], [Snapshot], ...), all implementing
//     [Message]. Bodies are CBOR arrays in field order, never maps.
//   - Codes: the one registry of result and reason codes, [Code], with
//     [Code.String] and [Code.Meaning]. Numbers never change.
//   - Versions: [Version], [Versions] and [Negotiate].
//   - Encoding: [Encode] and [AppendEncode] for control-rate messages;
//     allocation-free append encoders for per-tick frames:
//     [AppendSnapshotHeader] or [AppendShortSnapshotHeader] (a short
//     snapshot, counted from the client's snapshot before) over records
//     built once per cell with
//     [AppendCell] and [AppendEntity] (and [AppendStep], [AppendPos],
//     [AppendState], [AppendEnter], [AppendGone]), [AppendIntentResult],
//     [AppendIntent].
//   - Decoding: [Decode] (either direction), [DecodeClient] (a server
//     reading a client), [DecodeIntent] (0 allocations into a caller's
//     struct), [Peek] (route by type), and for a client reading at rate
//     the head readers [DecodeSnapshotHead] (tick, ack_seq, flags; the
//     records left undecoded; a short snapshot expanded against the one
//     before) and [DecodeIntentResult], 0 allocations each; [Stream]
//     decodes a connection's messages in order, short snapshots expanded.
//     Errors wrap [ErrMalformed],
//     [ErrTooLarge], [ErrVersion] or [ErrUnknownType]; [CodeOf] maps them to
//     the [Code] to answer with.
//
// A snapshot round encodes each spatial-hash cell once:
//
//	rec = wire.AppendCell(rec[:0], cell, len(ents)) // per cell, once
//	for i := range ents {
//		rec = wire.AppendEntity(rec, &ents[i])
//	}
//	hdr = wire.AppendSnapshotHeader(hdr[:0], tick, ackSeq, flags, n) // per peer: n bytes of records follow
//	// write hdr, then the records of each cell the peer sees, with writev
//
// # Caveats
//
//   - The codec is github.com/fxamacker/cbor/v2, an implementation detail:
//     no exported API takes or returns its types. The hand-written encoders
//     produce the same bytes as its Marshal (shortest-form integers, nil
//     slices as empty arrays); tests prove it.
//   - Decoders never panic on any input, and reject rather than repair:
//     indefinite lengths, tags, simple values (null, booleans), floats,
//     out-of-range integers, extra array elements and trailing bytes are
//     all [ErrMalformed]. Integers in a longer-than-shortest form are
//     accepted and re-encode in shortest form.
//   - A hello is decoded whatever its envelope version says: its shape is
//     frozen so that version negotiation can happen at all. Every other
//     message with a version outside [Versions] is [ErrVersion].
//   - Range checks of game values (an intent's kind and direction, a
//     target inside the grid) are the caller's; this package checks only
//     what the encoding can express.
//   - Decoded messages never alias the input buffer, except the records
//     of [DecodeSnapshotHead], which it leaves in place; append encoders
//     write only into the caller's dst and keep nothing.
//   - A short snapshot means nothing alone: its tick and ack_seq are low
//     bytes counted from the snapshot the connection received before it.
//     [Decode] returns it as it came; [DecodeSnapshotHead] and [Stream]
//     expand it.
//   - Everything here is safe for concurrent use but a [Stream]; the
//     package holds only read-only state built at init.
package wire
