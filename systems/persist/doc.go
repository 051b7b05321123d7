// Package persist turns an Area's durable state into a blob and back: the
// non-player bodies (wanderers with their random state; creatures with
// their kind, spawner and health) and the state of its doors. The map
// itself is not in the blob: the Area's template rebuilds it. Players are
// not in the blob either: their characters live in rows of their own (the
// director's characters table), so a player who moved on is never
// restored by an old Area blob.
//
// The format is package blob's: CBOR (integer-keyed maps, so later versions
// can add fields) with a version; Load refuses versions it does not know.
// Version 1 blobs (which carried the floor layer and no creatures) still
// load.
package persist
