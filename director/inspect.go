package director

import (
	"net/http"

	"github.com/leyworks/ley/store"
)

// inspect: GET /v1/admin/inspect (admins): every host's Areas as their
// worlds hold them (player, creature and body counts) beside the hosts'
// session bookkeeping (bound, dropped within the grace, overdue,
// crossing, grants), read on each Area's goroutine.
func (d *Director) inspect(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	return http.StatusOK, map[string]any{"hosts": d.registry.Inspect(r.Context())}, nil
}
