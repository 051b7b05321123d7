// Package census counts the items a realm's store holds and checks the
// conservation invariant of docs/items.md: no item stack id twice, and,
// for every kind, the items present are those the Areas' ledgers say were
// created less those destroyed. It reads what [store.Store.Holdings] hands it
// (one instant of the store), so it judges the store as a crash would
// leave it.
package census
