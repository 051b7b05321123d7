package director

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/store"
)

// maxAuditPage bounds a page of GET /v1/admin/audit.
const maxAuditPage = 200

// audit: GET /v1/admin/audit?before=<id>&limit=<n> (admins): the audit
// log, newest first: every change an admin made (the realm's door, cap
// and words, sessions ended, memberships given and taken), who made it
// and when. A page holds limit entries (default 50,
// at most maxAuditPage) with ids below before (default: from the newest);
// more says whether older ones follow.
func (d *Director) audit(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	q := r.URL.Query()
	limit, before := 50, int64(0)
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxAuditPage {
			return 0, nil, errBadRequest(fmt.Sprintf("limit must be 1..%d", maxAuditPage))
		}
		limit = n
	}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return 0, nil, errBadRequest("before must be a change's id (1 or more)")
		}
		before = n
	}
	chs, err := d.store.Changes(r.Context(), before, limit+1)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	more := len(chs) > limit
	if more {
		chs = chs[:limit]
	}
	names := map[store.AccountID]string{}
	out := make([]apijson.Change, len(chs))
	for i, ch := range chs {
		name, ok := names[ch.Actor]
		if !ok {
			a, err := d.store.Account(r.Context(), ch.Actor)
			switch {
			case err == nil:
				name = a.Name
			case !errors.Is(err, store.ErrNotFound):
				return 0, nil, storeErr(err)
			}
			names[ch.Actor] = name
		}
		out[i] = apijson.Change{ID: ch.ID, At: ch.At.UTC(), Actor: uint64(ch.Actor), ActorName: name, Action: ch.Action, Target: ch.Target, Detail: ch.Detail}
	}
	return http.StatusOK, map[string]any{"changes": out, "more": more}, nil
}
