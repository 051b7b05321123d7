package area

// putLazy stores v at k in *m, making the map first. The maps of what an
// Area has in flight (grants, crossings) are nil while nothing is: len of
// a nil map reads nothing, where len of an empty one reads its header, a
// cache line of its own that every rest decision of a home would wait
// for (bench/hostcost.sh). dropEmpty sets them back to nil.
func putLazy[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

// dropEmpty lets an emptied map go (putLazy makes it again).
func dropEmpty[K comparable, V any](m *map[K]V) {
	if *m != nil && len(*m) == 0 {
		*m = nil
	}
}
