package director

import (
	"net/http"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/census"
	"github.com/leyworks/ley/store"
)

// items: GET /v1/admin/items (admins) counts every item the store holds,
// at one instant, and checks that none is there twice and that each
// kind's count is what the Areas' ledgers made and unmade
// (docs/items.md). What live Areas changed since their last snapshot is
// not in it: the store is what a crash would leave.
func (d *Director) items(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	var n census.Counter
	if err := d.store.Holdings(r.Context(), func(h store.Holding) error { n.Add(h); return nil }); err != nil {
		return 0, nil, storeErr(err)
	}
	c := n.Census()
	out := apijson.ItemCensus{OK: c.OK(), Stacks: c.Stacks, Areas: c.Areas, Characters: c.Characters,
		Violations: c.Violations, Problems: c.Problems, Kinds: make([]apijson.ItemCount, len(c.Kinds))}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	for i, k := range c.Kinds {
		out.Kinds[i] = apijson.ItemCount{Kind: k.Kind, Present: k.Present, Created: k.Created, Destroyed: k.Destroyed}
	}
	return http.StatusOK, out, nil
}
