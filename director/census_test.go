package director

import (
	"context"

	"github.com/leyworks/ley/director/census"
	"github.com/leyworks/ley/store"
)

// storedItems counts every item the store holds, at one instant, and
// checks the invariant of docs/items.md (census.Counter).
func storedItems(ctx context.Context, st store.Store) (*census.Census, error) {
	var n census.Counter
	if err := st.Holdings(ctx, func(h store.Holding) error { n.Add(h); return nil }); err != nil {
		return nil, err
	}
	c := n.Census()
	return c, c.Err()
}
