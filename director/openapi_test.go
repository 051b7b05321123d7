package director

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/store/sqlite"
)

// TestOpenAPIDocumentLoads: openapi.yaml is an OpenAPI 3.1 document that
// loads and validates.
func TestOpenAPIDocumentLoads(t *testing.T) {
	s := loadSpec(t)
	if got := s.doc.OpenAPI; !s.doc.IsOpenAPI31OrLater() || got != "3.1.0" {
		t.Errorf("openapi = %q; want 3.1.0", got)
	}
	if got := s.doc.Components.SecuritySchemes["session"]; got == nil || got.Value.Scheme != "bearer" {
		t.Errorf("security scheme session = %+v; want http bearer", got)
	}
}

// TestRoutesMatchTheDocument: every route of the route table is an
// operation of openapi.yaml and every operation is a route, and the mux
// routes each operation's path and method to exactly that route.
func TestRoutesMatchTheDocument(t *testing.T) {
	s := loadSpec(t)
	d := &Director{} // handlers are built, never run
	table := map[string]bool{}
	for _, rt := range d.routeTable() {
		if table[rt.pattern] {
			t.Errorf("route %q is in the table twice", rt.pattern)
		}
		table[rt.pattern] = true
	}
	doc := map[string]bool{}
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			doc[method+" "+path] = true
		}
	}
	for p := range table {
		if !doc[p] {
			t.Errorf("route %q is not in openapi.yaml", p)
		}
	}
	for p := range doc {
		if !table[p] {
			t.Errorf("openapi.yaml's %q is no route", p)
		}
	}
	mux := d.mux()
	param := regexp.MustCompile(`\{[^}]+\}`)
	for p := range doc {
		method, path, _ := strings.Cut(p, " ")
		req := httptest.NewRequest(method, param.ReplaceAllString(path, "7"), nil)
		if _, got := mux.Handler(req); got != p {
			t.Errorf("the mux routes %s %s to %q; want %q", method, req.URL.Path, got, p)
		}
	}
}

// TestOpenAPIServed: the director serves the document it embeds, in YAML
// and in JSON, alike.
func TestOpenAPIServed(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	hc := r.checked(http.DefaultClient, true)
	get := func(path string) (string, []byte) {
		resp, err := hc.Get(r.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return resp.Header.Get("Content-Type"), b
	}
	ctYAML, y := get("/v1/openapi.yaml")
	ctJSON, j := get("/v1/openapi.json")
	if ctYAML != "application/yaml" || ctJSON != "application/json" {
		t.Errorf("content types %q, %q; want application/yaml, application/json", ctYAML, ctJSON)
	}
	if string(y) != string(OpenAPI()) {
		t.Errorf("GET /v1/openapi.yaml is not the embedded document")
	}
	fromYAML, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(fromYAML, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(j, &b); err != nil {
		t.Fatalf("GET /v1/openapi.json: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the JSON document differs from the YAML one")
	}
}

// TestRequestOffTheDocumentGets400: a request that breaks the document
// (as the document itself says) is answered the documented 400.
func TestRequestOffTheDocumentGets400(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	c, _ := r.player("offdoc")
	area, err := c.CreateArea(ctx, "Doc", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	s := loadSpec(t)
	tests := []struct {
		name, method, path, body string
		authed                   bool
	}{
		{"misspelt field", "POST", "/v1/accounts", `{"email":"x@t.local","pasword":"correct horse battery"}`, false},
		{"wrong type", "POST", "/v1/areas", `{"name":5}`, true},
		{"out of bounds", "POST", fmt.Sprintf("/v1/areas/%d/invites", area.ID), `{"uses":20000}`, true},
		{"no login password", "POST", "/v1/session", `{"email":"x@t.local"}`, false},
		{"area id not a number", "POST", "/v1/areas/abc/join", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, r.url+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			token := ""
			if tt.authed {
				token = c.Token
				req.Header.Set("Authorization", "Bearer "+token)
			}
			if _, err := s.checkRequest(req, []byte(tt.body)); err == nil {
				t.Fatalf("openapi.yaml accepts %s %s %s; want it refused", tt.method, tt.path, tt.body)
			}
			a := r.call(http.DefaultClient, tt.method, tt.path, token, tt.body)
			if a.Status != http.StatusBadRequest || a.Code != "BAD_REQUEST" {
				t.Errorf("%s %s %s: %d %s; want 400 BAD_REQUEST", tt.method, tt.path, tt.body, a.Status, a.Raw)
			}
		})
	}
}

// TestSpecCheckCatchesMismatches: the round-tripper that holds the API
// tests to openapi.yaml reports answers and requests the document does
// not give, and passes those it does.
func TestSpecCheckCatchesMismatches(t *testing.T) {
	const token = "Bearer abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ" // 43 characters
	err := func(code string) string { return `{"code":"` + code + `","message":"m"}` }
	tests := []struct {
		name, method, path, reqBody string
		status                      int
		header                      map[string]string
		body                        string
		want                        bool // a mismatch reported
	}{
		{"valid me", "GET", "/v1/me", "", 200, nil, `{"id":1,"email":"a@b","name":"a","admin":false}`, false},
		{"missing field", "GET", "/v1/me", "", 200, nil, `{"id":1}`, true},
		{"extra field", "GET", "/v1/me", "", 200, nil, `{"id":1,"email":"a@b","name":"a","admin":false,"x":1}`, true},
		{"join_id a string", "POST", "/v1/areas/1/join", "", 200, nil, `{"grant":"0123456789abcdef0123456789abcdef","ws_url":"ws://h/ws","join_id":"1796069276979109503","area":1}`, false},
		{"join_id a number", "POST", "/v1/areas/1/join", "", 200, nil, `{"grant":"0123456789abcdef0123456789abcdef","ws_url":"ws://h/ws","join_id":1796069276979109503,"area":1}`, true},
		{"undocumented status", "POST", "/v1/areas/1/join", "", 418, nil, err("TEAPOT"), true},
		{"documented code", "POST", "/v1/areas/1/join", "", 404, nil, err("NO_SUCH_AREA"), false},
		{"code of another status", "POST", "/v1/areas/1/join", "", 404, nil, err("NOT_MEMBER"), true},
		{"429 with Retry-After", "POST", "/v1/session", `{"email":"a@b","password":"p"}`, 429, map[string]string{"Retry-After": "3"}, err("RATE_LIMITED"), false},
		{"429 without Retry-After", "POST", "/v1/session", `{"email":"a@b","password":"p"}`, 429, nil, err("RATE_LIMITED"), true},
		{"internal without error_id", "GET", "/v1/me", "", 500, nil, err("INTERNAL"), true},
		{"a body where none is documented", "GET", "/healthz", "", 200, nil, `x`, true},
		{"request off the document", "POST", "/v1/session", `{"email":"a@b","password":"p","name":"n"}`, 200, nil, `{}`, true},
		{"no token", "GET", "/v1/me", "", 401, nil, err("UNAUTHORIZED"), true},
		{"no route, 404", "GET", "/nothing", "", 404, nil, err("NOT_FOUND"), false},
		{"no route, 200", "GET", "/nothing", "", 200, nil, `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var reports []string
			hc := &http.Client{Transport: &specCheck{spec: loadSpec(t), next: http.DefaultTransport, requests: true,
				report: func(f string, a ...any) { reports = append(reports, fmt.Sprintf(f, a...)) }}}
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.reqBody))
			if err != nil {
				t.Fatal(err)
			}
			if tt.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.name != "no token" {
				req.Header.Set("Authorization", token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := len(reports) > 0; got != tt.want {
				t.Errorf("mismatch reported = %v (%q); want %v", got, reports, tt.want)
			}
		})
	}
}

// TestJoinIDIsAJSONString: a join's answer carries join_id as a decimal
// string (its value is above 2^53, where JavaScript's numbers round), and
// the hello that carries the uint64 it spells is acknowledged for it.
func TestJoinIDIsAJSONString(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	c, _ := r.player("joinid")
	area, err := c.CreateArea(ctx, "Ids", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	a := r.call(http.DefaultClient, "POST", fmt.Sprintf("/v1/areas/%d/join", area.ID), c.Token, "")
	if a.Status != http.StatusOK {
		t.Fatalf("join: %d %s", a.Status, a.Raw)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(a.Raw), &raw); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(raw["join_id"], &s); err != nil {
		t.Fatalf("join_id = %s; want a JSON string", raw["join_id"])
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("join_id %q: %v", s, err)
	}
	if id <= 1<<53 {
		t.Errorf("join_id = %d; want one above 2^53 (the case this guards)", id)
	}
	var j dirclient.Join
	if err := json.Unmarshal([]byte(a.Raw), &j); err != nil {
		t.Fatal(err)
	}
	if j.JoinID != id {
		t.Errorf("dirclient.Join.JoinID = %d; want %d", j.JoinID, id)
	}
	_, ack := connect(t, j)
	if ack.JoinID != id {
		t.Errorf("hello_ack join_id = %d; want %d", ack.JoinID, id)
	}
}

// TestNewAccountJoinsAStarterArea: on a realm whose demo village is a
// starter Area (as ley run makes it), a new account is a member of it at
// sign-up and joins it at once.
func TestNewAccountJoinsAStarterArea(t *testing.T) {
	var demo Demo
	r := launchRealmWith(t, nil, func(d *Director) {
		var err error
		if demo, err = d.SeedDemo(context.Background(), "demo@t.local", "demo-password"); err != nil {
			t.Fatal(err)
		}
		d.AddStarterAreas(demo.Area)
	})
	r.waitHosts(r.d.cfg.Spawn.MinHosts)
	ctx := context.Background()
	c, _ := r.player("newcomer")
	areas := struct {
		Areas []dirclient.Area `json:"areas"`
	}{}
	if err := c.Do(ctx, "GET", "/v1/areas", nil, &areas); err != nil {
		t.Fatal(err)
	}
	if len(areas.Areas) != 1 || areas.Areas[0].ID != uint32(demo.Area) {
		t.Fatalf("a new account's Areas = %+v; want the starter Area %d", areas.Areas, demo.Area)
	}
	j, err := c.Join(ctx, uint32(demo.Area))
	if err != nil {
		t.Fatalf("join the starter Area: %v", err)
	}
	connect(t, j)
}

// TestStarterAreasChecked: Config.StarterAreas names Areas that must
// exist (Run refuses otherwise); each new account becomes a member of
// every one.
func TestStarterAreasChecked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ley.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.CreateAccount(ctx, store.NewAccount{Email: "owner@t.local", Name: "owner", PasswordPHC: "x", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var ids []store.AreaID
	for _, name := range []string{"Square", "Market"} {
		a, err := st.CreateArea(ctx, store.NewArea{Owner: owner.ID, Kind: "village", Template: EmptyTemplate, Name: name, W: 16, H: 16, Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	st.Close()
	tests := []struct {
		name    string
		starter []store.AreaID
		wantErr string
	}{
		{"both exist", ids, ""},
		{"one missing", []store.AreaID{ids[0], 999}, "starter area 999: no such area"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig()
			cfg.Spawn.MinHosts = 0
			cfg.StarterAreas = tt.starter
			d, err := New(cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- d.Run(runCtx, nil, nil) }()
			if tt.wantErr != "" {
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Errorf("Run = %v; want an error with %q", err, tt.wantErr)
					}
				case <-time.After(10 * time.Second):
					t.Error("Run did not refuse")
				}
				cancel()
				st.Close()
				return
			}
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			waitFor(t, "the director serving", func() bool { return d.ready.Load() })
			r := &realm{t: t, d: d, store: st, url: "http://" + d.httpAddr}
			_, acct := r.player("starter")
			got, err := st.AreasOf(ctx, store.AccountID(acct.ID))
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []store.AreaID
			for _, a := range got {
				gotIDs = append(gotIDs, a.ID)
			}
			if !reflect.DeepEqual(gotIDs, ids) {
				t.Errorf("the new account's Areas = %v; want %v", gotIDs, ids)
			}
		})
	}
}

// TestSecondLoginEndsTheFirstSession: as openapi.yaml says, a login ends
// the account's earlier sessions (401 SESSION_EXPIRED) and the new one
// works.
func TestSecondLoginEndsTheFirstSession(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	first, acct := r.player("twice")
	second := r.client()
	if _, err := second.Login(ctx, acct.Email, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.Me(ctx); refusal(t, err) != "SESSION_EXPIRED" {
		t.Errorf("the first session after a second login: %v; want SESSION_EXPIRED", err)
	}
	if got, _, err := second.Me(ctx); err != nil || got.ID != acct.ID {
		t.Errorf("the second session: %+v, %v; want account %d", got, err, acct.ID)
	}
}
