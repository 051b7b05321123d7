package director

import "net/http"

// routeTable returns the API's endpoints. It only builds handlers bound
// to d; none runs until served.
func (d *Director) routeTable() []route {
	api := func(pattern string, h handler) route { return route{pattern, d.serve(h)} }
	return []route{
		api("POST /v1/accounts", d.signUp),
		api("POST /v1/session", d.login),
		api("DELETE /v1/session", d.authed(d.logout)),
		api("GET /v1/me", d.authed(d.me)),
		api("GET /v1/areas", d.authed(d.myAreas)),
		api("POST /v1/areas", d.authed(d.createArea)),
		api("GET /v1/areas/{id}", d.authed(d.getArea)),
		api("GET /v1/areas/{id}/members", d.authed(d.members)),
		api("PUT /v1/areas/{id}/members/{account}", d.authed(d.setRole)),
		api("POST /v1/areas/{id}/invites", d.authed(d.createInvite)),
		api("GET /v1/me/invites", d.authed(d.myInvites)),
		api("POST /v1/invites/{code}/redeem", d.authed(d.redeem)),
		api("POST /v1/areas/{id}/join", d.authed(d.joinArea)),
		api("PUT /v1/areas/{id}/portals", d.authed(d.setPortals)),
		api("GET /v1/realm", d.authed(d.getRealm)),
		api("PUT /v1/realm", d.authed(d.putRealm)),
		api("POST /v1/admin/provision", d.authed(d.provision)),
		api("GET /v1/admin/hosts", d.authed(d.hostsStats)),
		api("GET /v1/admin/areas", d.authed(d.liveAreas)),
		api("GET /v1/admin/inspect", d.authed(d.inspect)),
		api("GET /v1/admin/samples", d.authed(d.samples)),
		api("GET /v1/admin/audit", d.authed(d.audit)),
		api("GET /v1/admin/items", d.authed(d.items)),
		api("GET /v1/admin/accounts", d.authed(d.findAccounts)),
		api("POST /v1/admin/accounts/{account}/logout", d.authed(d.endSessions)),
		api("PUT /v1/admin/areas/{id}/members/{account}", d.authed(d.giveMembership)),
		api("DELETE /v1/admin/areas/{id}/members/{account}", d.authed(d.takeMembership)),
		api("GET /v1/admin/areas/{id}", d.authed(d.areaDetail)),
		api("POST /v1/admin/areas/{id}/spectate", d.authed(d.spectate)),
		api("GET /director/info", d.info),
		{"GET /v1/openapi.yaml", http.HandlerFunc(serveOpenAPIYAML)},
		api("GET /v1/openapi.json", d.openAPIJSONDoc),
		{"GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })},
		{"GET /readyz", http.HandlerFunc(d.readyz)},
	}
}

// mux returns a ServeMux holding the route table and the web client's
// routes (web.go).
func (d *Director) mux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range append(d.routeTable(), d.webRoutes()...) {
		mux.Handle(rt.pattern, rt.handler)
	}
	return mux
}

// routes is the API's handler: the route table, and JSON answers for
// requests it has no route for.
func (d *Director) routes() http.Handler {
	return jsonErrors(d.mux())
}
