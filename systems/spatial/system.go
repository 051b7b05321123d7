package spatial

import (
	"fmt"

	"github.com/leyworks/ley/ecs"
)

// DefaultCellSize is the side of a hash cell, in squares, when Attach is
// given size 0 for an Area that has no hash yet.
const DefaultCellSize = 16

// Attach returns Area a's spatial hash, making it on first use: a Hash over
// a's grid with hash cells of side size (0: DefaultCellSize), holding every
// body already in a, registered with a.AddIndex so that the Area keeps it in
// step with every spawn, move and despawn as it happens. Everything that
// reads positions by neighbourhood (interest management, sensing) shares
// this one hash: a later Attach returns it, and fails if it asks for another
// size (0 accepts any). Call it from the ticking goroutine (or before the
// Area runs), outside a query.
func Attach(a *ecs.Area, size int) (*Hash, error) {
	for _, ix := range a.Indexes() {
		if h, ok := ix.(*Hash); ok {
			if size != 0 && int(h.size) != size {
				return nil, fmt.Errorf("spatial: area %d has a hash of cell size %d; asked for %d", a.ID, h.size, size)
			}
			return h, nil
		}
	}
	if size == 0 {
		size = DefaultCellSize
	}
	h, err := New(int(a.Grid.W()), int(a.Grid.H()), size)
	if err != nil {
		return nil, err
	}
	a.AddIndex(h)
	return h, nil
}
