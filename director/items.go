package director

import (
	"maps"
	"net/http"
	"slices"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/director/census"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// items: GET /v1/admin/items (admins) counts every item of the realm and
// checks that none is there twice and that each kind's count is what the
// Areas' ledgers made and unmade (docs/items.md). By default it counts
// the store, read at one instant: what a crash would leave. With
// ?live=true it counts what is in play: each live Area as its host holds
// it now (its blob, and the states of the characters its next snapshot
// would write), each character whose row names such an Area as that Area
// holds it, and the store for the rest (Areas not live, or whose host did
// not answer: those are listed in unanswered). The hosts are read one
// after another, so a crossing under way between two readings may show
// as a violation a second count does not repeat.
func (d *Director) items(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	var live bool
	switch r.URL.Query().Get("live") {
	case "", "false":
	case "true":
		live = true
	default:
		return 0, nil, errBadRequest(`live must be "true" or "false"`)
	}
	var inPlay map[store.AreaID]*control.AreaItems
	var unanswered []string
	if live {
		inPlay, unanswered = d.registry.LiveItems(r.Context())
	}
	if unanswered == nil {
		unanswered = []string{} // [] rather than null
	}
	c, err := countItems(r, d.store, inPlay)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := apijson.ItemCensus{OK: c.OK(), Live: live, Stacks: c.Stacks, Areas: c.Areas, Characters: c.Characters,
		Violations: c.Violations, Problems: c.Problems, Unanswered: unanswered, Kinds: make([]apijson.ItemCount, len(c.Kinds))}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	for i, k := range c.Kinds {
		out.Kinds[i] = apijson.ItemCount{Kind: k.Kind, Present: k.Present, Created: k.Created, Destroyed: k.Destroyed}
	}
	return http.StatusOK, out, nil
}

// countItems counts the store's holdings, with the Areas of inPlay (and
// the characters whose rows name one of them and that it holds) counted
// as inPlay has them instead.
func countItems(r *http.Request, st store.Store, inPlay map[store.AreaID]*control.AreaItems) (*census.Census, error) {
	holders := map[store.AccountID][]store.AreaID{} // the live Areas holding each character
	for id, it := range inPlay {
		for _, ch := range it.Characters {
			holders[store.AccountID(ch.Account)] = append(holders[store.AccountID(ch.Account)], id)
		}
	}
	rowIn := map[store.AccountID]store.AreaID{} // where the rows of those characters are
	counted := map[store.AreaID]bool{}
	var n census.Counter
	err := st.Holdings(r.Context(), func(h store.Holding) error {
		switch {
		case h.Area != 0:
			if it := inPlay[h.Area]; it != nil {
				counted[h.Area] = true
				n.Add(store.Holding{Area: h.Area, W: it.W, H: it.H, State: it.Blob})
				return nil
			}
		case h.Account != 0:
			if in := holders[h.Account]; in != nil {
				rowIn[h.Account] = h.In
				if slices.Contains(in, h.In) {
					return nil // counted with the live Area that writes it
				}
			}
		}
		n.Add(h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(inPlay)) {
		it := inPlay[id]
		if !counted[id] {
			n.Add(store.Holding{Area: id, W: it.W, H: it.H, State: it.Blob}) // live, not stored yet
		}
		for _, ch := range it.Characters {
			if rowIn[store.AccountID(ch.Account)] == id {
				n.Add(store.Holding{Account: store.AccountID(ch.Account), State: ch.State, In: id})
			}
		}
	}
	return n.Census(), nil
}
