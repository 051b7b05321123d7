package director

import (
	"net/http"
	"strconv"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/store"
)

// pathArea reads the {id} of a route: an Area id.
func pathArea(r *http.Request) (store.AreaID, *apiError) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 32)
	if err != nil {
		return 0, errBadRequest("area id must be a number")
	}
	return store.AreaID(id), nil
}

// pathAccount reads the {account} of a route.
func pathAccount(r *http.Request) (store.AccountID, *apiError) {
	id, err := strconv.ParseUint(r.PathValue("account"), 10, 63)
	if err != nil || id == 0 {
		return 0, errBadRequest("account id must be a number")
	}
	return store.AccountID(id), nil
}

// accountJSON is an account as the API shows it.
func accountJSON(a store.Account) apijson.Account {
	return apijson.Account{ID: uint64(a.ID), Email: a.Email, Name: a.Name, Admin: a.Admin}
}

// areaJSON is an Area's record as the API shows it.
func areaJSON(a store.Area) apijson.Area {
	return apijson.Area{ID: uint32(a.ID), Name: a.Name, Kind: a.Kind, Template: a.Template, Owner: uint64(a.Owner), W: a.W, H: a.H}
}

// route is one endpoint of the API: a ServeMux pattern ("METHOD /path")
// and its handler. The route table is the one list of the API's
// endpoints: routes registers exactly these, and the tests hold
// openapi.yaml to it, path for path and method for method.
type route struct {
	pattern string
	handler http.Handler
}
