// Package transfer moves characters between a realm's Areas: portal
// crossings, which an Area's host asks for (portal_out) and the director
// answers (portal_result), and moves by the door (a join to another Area);
// and it rolls back crossings a crash left pending (Reconcile).
//
// Every move of one account is serialised by its lock (Transfers.Lock),
// which joins hold too. A crossing is idempotent on its transfer id;
// every failure answers a wire code and leaves the character where it
// was. The move itself is one store transaction (store.Store's
// MoveCharacter), fenced three ways: by its expiry (the source host's
// window), by the asking incarnation (FromEpoch), and by the source's
// snapshot that holds the character's state at the portal (FromSeq): a
// character's state (its inventory) is written only with its Area's
// blob, never by a move. docs/ownership.md says why nothing can be lost
// or doubled.
package transfer
