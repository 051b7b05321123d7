package director

import (
	"context"

	"github.com/leyworks/ley/director/census"
	"github.com/leyworks/ley/store"
)

// storedItems counts every item the store holds, at one instant, and
// checks the invariant of docs/items.md (census.Count).
func storedItems(ctx context.Context, st store.Store) (*census.Census, error) {
	hs, err := st.Holdings(ctx)
	if err != nil {
		return nil, err
	}
	c := census.Count(hs)
	return c, c.Err()
}
