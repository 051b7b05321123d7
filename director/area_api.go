package director

import (
	"errors"
	"net/http"

	"github.com/leyworks/ley/store"
)

// getArea: GET /v1/areas/{id} -> the Area, to its members. A missing
// Area and one the account is not a member of are refused alike
// (NO_SUCH_AREA), as a join is, so Area ids cannot be probed.
func (d *Director) getArea(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	member, err := d.store.IsMember(r.Context(), id, acct.ID)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	if !member {
		return 0, nil, errNoSuchArea
	}
	a, err := d.store.Area(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, errNoSuchArea
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, areaJSON(a), nil
}
