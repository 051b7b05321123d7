package director

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// Rules is an Area's rules blob (stored opaque by the store): its portals.
type Rules struct {
	Portals []PortalRule `json:"portals,omitempty"`
}

// PortalRule is one portal: square (X, Y) leads to (ToX, ToY) of ToArea.
type PortalRule struct {
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	ToArea uint32 `json:"to_area"`
	ToX    int32  `json:"to_x"`
	ToY    int32  `json:"to_y"`
}

func parseRules(b []byte) (Rules, error) {
	var r Rules
	if len(b) == 0 {
		return r, nil
	}
	err := json.Unmarshal(b, &r)
	return r, err
}

func (r Rules) controlPortals() []control.Portal {
	out := make([]control.Portal, len(r.Portals))
	for i, p := range r.Portals {
		out[i] = control.Portal{X: p.X, Y: p.Y, ToArea: p.ToArea, ToX: p.ToX, ToY: p.ToY}
	}
	return out
}

// setPortals: PUT /v1/areas/{id}/portals {portals: [...]} (the owner).
// They take effect when the Area next goes live.
func (d *Director) setPortals(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	id, e := pathArea(r)
	if e != nil {
		return 0, nil, e
	}
	var in Rules
	if e := decode(r, &in); e != nil {
		return 0, nil, e
	}
	role, err := d.store.MemberRole(r.Context(), id, acct.ID)
	if errors.Is(err, store.ErrNotMember) || (err == nil && role != store.RoleOwner) {
		return 0, nil, errForbidden
	} else if err != nil {
		return 0, nil, storeErr(err)
	}
	a, err := d.store.Area(r.Context(), id)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	if len(in.Portals) > registry.MaxPortals {
		return 0, nil, errBadRequest(fmt.Sprintf("at most %d portals", registry.MaxPortals))
	}
	for _, p := range in.Portals {
		// Only to an Area the caller is a member of, and a missing Area is
		// refused alike: nothing is told of one it cannot see, not even
		// whether it exists or its size.
		if ok, err := d.store.IsMember(r.Context(), store.AreaID(p.ToArea), acct.ID); err != nil {
			return 0, nil, storeErr(err)
		} else if !ok {
			return 0, nil, errBadRequest("a portal leads to no such area, or to one you are not a member of")
		}
		to, err := d.store.Area(r.Context(), store.AreaID(p.ToArea))
		if err != nil {
			return 0, nil, storeErr(err)
		}
		if p.X < 0 || p.Y < 0 || int(p.X) >= a.W || int(p.Y) >= a.H || p.ToX < 0 || p.ToY < 0 || int(p.ToX) >= to.W || int(p.ToY) >= to.H {
			return 0, nil, errBadRequest("a portal square is off its area's grid")
		}
	}
	b, _ := json.Marshal(in)
	if err := d.store.SetAreaRules(r.Context(), id, b); err != nil {
		return 0, nil, storeErr(err)
	}
	return http.StatusOK, in, nil
}
