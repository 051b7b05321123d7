package director

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/store"
)

// answer is an API answer as the hardening tests look at it.
type answer struct {
	Status     int
	RetryAfter string
	Allow      string
	Raw        string
	Code       string `json:"code"`
	Message    string `json:"message"`
	ErrorID    string `json:"error_id"`
	Token      string `json:"token"`
	Email      string `json:"email"`
	Name       string `json:"name"`
}

// from returns an HTTP client whose connections come from the loopback
// address ip (any of 127.0.0.0/8 on Linux), so a test can act as several
// client addresses.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// call sends method path with body (if not "") and token (if not "")
// through hc and returns the answer, which must be one openapi.yaml gives
// (the request may break the document on purpose).
func (r *realm) call(hc *http.Client, method, path, token, body string) answer {
	r.t.Helper()
	hc = r.checked(hc, false)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Allow: resp.Header.Get("Allow"), Raw: string(b)}
	if resp.StatusCode/100 != 2 && resp.Header.Get("Content-Type") != "application/json" {
		r.t.Errorf("%s %s: %d with Content-Type %q; want application/json", method, path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &a); err != nil {
			r.t.Errorf("%s %s: body %q is not JSON: %v", method, path, b, err)
		}
	}
	return a
}

func credentialsJSON(email, password string) string {
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return string(b)
}

// wantRetryAfter checks a 429's Retry-After: whole seconds in [1, most].
func wantRetryAfter(t *testing.T, what string, a answer, most int) {
	t.Helper()
	n, err := strconv.Atoi(a.RetryAfter)
	if a.Status != http.StatusTooManyRequests || err != nil || n < 1 || n > most {
		t.Errorf("%s: status %d, Retry-After %q; want 429 with 1..%d seconds", what, a.Status, a.RetryAfter, most)
	}
}

// TestLoginLimitKeys (issue 12, finding 7): address and account limits
// live in separate key spaces, and wrong passwords delay only the address
// they come from; every 429 says when to retry.
func TestLoginLimitKeys(t *testing.T) {
	r := startRealm(t, func(c *Config) {
		c.Spawn.MinHosts = 0 // no joins here
		c.AuthBurst, c.AuthEvery = 11, time.Hour
		c.LoginFreeFailures, c.LoginDelay, c.LoginMaxDelay = 5, time.Minute, time.Hour
	})
	const pw = "correct horse battery"
	signer := from("127.0.8.50")
	for _, email := range []string{"owner@t.local", "other@t.local"} {
		if a := r.call(signer, "POST", "/v1/accounts", "", credentialsJSON(email, pw)); a.Status != http.StatusCreated {
			t.Fatalf("sign-up %s: %d %s", email, a.Status, a.Raw)
		}
	}

	// An email that looks like an address is not that address: eleven
	// tries with "127.0.8.99" from elsewhere leave 127.0.8.99 alone.
	stranger := from("127.0.8.1")
	var last answer
	for range 11 {
		last = r.call(stranger, "POST", "/v1/session", "", credentialsJSON("127.0.8.99", "wrong password"))
	}
	wantRetryAfter(t, "the stranger's 11th try", last, 3600)
	if a := r.call(from("127.0.8.99"), "POST", "/v1/session", "", credentialsJSON("other@t.local", pw)); a.Status != http.StatusOK {
		t.Errorf("login from 127.0.8.99 after a stranger used it as an email: %d %s; want 200", a.Status, a.Raw)
	}

	// Ten wrong passwords for owner from one address: that address waits
	// (a progressive delay, not a lock); the owner elsewhere does not.
	guesser := from("127.0.8.2")
	var codes []int
	for range 10 {
		a := r.call(guesser, "POST", "/v1/session", "", credentialsJSON("owner@t.local", "wrong password"))
		codes = append(codes, a.Status)
		if a.Status == http.StatusTooManyRequests {
			wantRetryAfter(t, "a delayed guess", a, 60)
		}
	}
	want := []int{401, 401, 401, 401, 401, 401, 429, 429, 429, 429}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("ten wrong passwords from one address: statuses %v; want %v", codes, want)
	}
	if a := r.call(guesser, "POST", "/v1/session", "", credentialsJSON("owner@t.local", pw)); a.Status != http.StatusTooManyRequests {
		t.Errorf("the right password from the delayed address: %d; want 429 until the delay passes", a.Status)
	}
	if a := r.call(from("127.0.8.3"), "POST", "/v1/session", "", credentialsJSON("owner@t.local", pw)); a.Status != http.StatusOK || a.Token == "" {
		t.Errorf("the owner from another address: %d %s; want 200 and a token", a.Status, a.Raw)
	}
}

// TestQuotas (issue 12, finding 8): owned Areas (admins exempt), pending
// grants and joins a minute, each refused with QUOTA_EXCEEDED naming it;
// a refused join changes nothing.
func TestQuotas(t *testing.T) {
	r := startRealm(t, func(c *Config) {
		c.MaxOwnedAreas, c.MaxPendingGrants, c.JoinsPerMinute = 2, 1, 3
	})
	ctx := context.Background()
	c, acct := r.player("quota")
	a, err := c.CreateArea(ctx, "A", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateArea(ctx, "B", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateArea(ctx, "C", "home", 16, 16)
	if e := refusalOf(t, err); e.Status != http.StatusForbidden || e.Code != "QUOTA_EXCEEDED" || !strings.Contains(e.Message, "owned_areas") {
		t.Errorf("third Area: %v; want 403 QUOTA_EXCEEDED naming owned_areas", err)
	}
	admin, adminAcct := r.player("quota-admin")
	r.admin(adminAcct)
	for i := range 3 {
		if _, err := admin.CreateArea(ctx, fmt.Sprintf("Shared %d", i), "village", 16, 16); err != nil {
			t.Errorf("admin's Area %d: %v; want admins exempt from owned_areas", i+1, err)
		}
	}

	tok := c.Token
	if _, err := c.Join(ctx, a.ID); err != nil { // 1st join: a grant pending in A
		t.Fatal(err)
	}
	j := r.call(http.DefaultClient, "POST", fmt.Sprintf("/v1/areas/%d/join", b.ID), tok, "") // 2nd
	if j.Code != "QUOTA_EXCEEDED" || !strings.Contains(j.Message, "pending_grants") {
		t.Errorf("join of B with a grant pending in A: %d %s; want QUOTA_EXCEEDED naming pending_grants", j.Status, j.Raw)
	}
	wantRetryAfter(t, "pending_grants", j, 90)
	if ch, err := r.store.Character(ctx, store.AccountID(acct.ID)); err != nil || ch.Area != store.AreaID(a.ID) {
		t.Errorf("after the refused join the character is %+v, %v; want still in A", ch, err)
	}
	if _, err := c.Join(ctx, a.ID); err != nil { // 3rd: a new grant for A replaces the old
		t.Errorf("join of A again: %v; want it to replace the pending grant", err)
	}
	j = r.call(http.DefaultClient, "POST", fmt.Sprintf("/v1/areas/%d/join", a.ID), tok, "") // 4th
	if j.Code != "QUOTA_EXCEEDED" || !strings.Contains(j.Message, "joins_per_minute") {
		t.Errorf("fourth join in a minute: %d %s; want QUOTA_EXCEEDED naming joins_per_minute", j.Status, j.Raw)
	}
	wantRetryAfter(t, "joins_per_minute", j, 20)
}

func refusalOf(t *testing.T, err error) *dirclient.Error {
	t.Helper()
	var e *dirclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v; want an API refusal", err)
	}
	return e
}

// TestNoAreaEnumeration (issue 12, finding 9): a join, and a portal, to a
// missing Area and to someone else's answer alike, and a portal says
// nothing of the other Area's size.
func TestNoAreaEnumeration(t *testing.T) {
	r := startRealm(t, nil)
	ctx := context.Background()
	owner, _ := r.player("hidden-owner")
	hidden, err := owner.CreateArea(ctx, "Hidden", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.player("prober")
	mine, err := c.CreateArea(ctx, "Mine", "home", 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	const missing = 999999
	join := func(id uint32) answer {
		return r.call(http.DefaultClient, "POST", fmt.Sprintf("/v1/areas/%d/join", id), c.Token, "")
	}
	j1, j2 := join(hidden.ID), join(missing)
	if j1.Status != j2.Status || j1.Code != j2.Code || j1.Message != j2.Message || j1.Status != http.StatusNotFound {
		t.Errorf("join of another's Area: %d %s; of a missing one: %d %s; want the same 404", j1.Status, j1.Raw, j2.Status, j2.Raw)
	}
	portal := func(to uint32, toX int) answer {
		body := fmt.Sprintf(`{"portals":[{"x":1,"y":1,"to_area":%d,"to_x":%d,"to_y":1}]}`, to, toX)
		return r.call(http.DefaultClient, "PUT", fmt.Sprintf("/v1/areas/%d/portals", mine.ID), c.Token, body)
	}
	// to_x 40 is off the hidden 16x16 Area's grid, 2 is on it.
	answers := []answer{portal(hidden.ID, 2), portal(hidden.ID, 40), portal(missing, 2), portal(missing, 40)}
	for i, a := range answers {
		if a.Status != answers[0].Status || a.Code != answers[0].Code || a.Message != answers[0].Message || a.Status/100 != 4 {
			t.Errorf("portal #%d: %d %s; want the same refusal as #0 (%d %s)", i, a.Status, a.Raw, answers[0].Status, answers[0].Raw)
		}
	}
}

// syncBuffer is a log destination tests can read while the director writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestErrorBodiesLeakNothing (issue 12, findings 9 and 11): decode errors
// name the field at most; an internal error answers an opaque id that the
// log holds with its cause; unknown routes and wrong methods answer the
// API's JSON error shape.
func TestErrorBodiesLeakNothing(t *testing.T) {
	var logs syncBuffer
	r := startRealm(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	ctx := context.Background()
	hc := http.DefaultClient
	tests := []struct {
		body, want string
	}{
		{`{"email": 5, "password": "correct horse battery"}`, `field "email" has the wrong type`},
		{`{"email": "a@b", "password": ["x"]}`, `field "password" has the wrong type`},
		{`{"email": "a@b", "bogus": 1}`, `unknown field "bogus"`},
		{`{"email": `, "malformed JSON: the body ends too early"},
		{`{"email" "a@b"}`, "malformed JSON at byte 10"},
		{`[1, 2]`, "a JSON object expected"},
		{``, "empty request body: a JSON object expected"},
	}
	for _, tt := range tests {
		a := r.call(hc, "POST", "/v1/accounts", "", tt.body)
		if a.Status != http.StatusBadRequest || a.Code != "BAD_REQUEST" || a.Message != tt.want {
			t.Errorf("sign-up with %q: %d %s; want 400 BAD_REQUEST %q", tt.body, a.Status, a.Raw, tt.want)
		}
		if strings.Contains(a.Raw, "Go ") || strings.Contains(a.Raw, "json:") || strings.Contains(a.Raw, "director.") {
			t.Errorf("sign-up with %q: body %s carries Go internals", tt.body, a.Raw)
		}
	}

	// An Area whose stored state cannot be read cannot start: the join
	// fails with an id, and the cause stays in the log.
	c, _ := r.player("leak")
	area, err := c.CreateArea(ctx, "Broken", "home", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := r.store.BeginIncarnation(ctx, store.AreaID(area.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.WriteSnapshot(ctx, store.Snapshot{Area: store.AreaID(area.ID), Epoch: ep, Seq: 1, Blob: []byte{0xff, 0xff}}); err != nil {
		t.Fatal(err)
	}
	j := r.call(hc, "POST", fmt.Sprintf("/v1/areas/%d/join", area.ID), c.Token, "")
	if j.Status != http.StatusServiceUnavailable || j.Code != "GRANT_FAILED" || len(j.ErrorID) != 16 || j.Message != "the area could not start" {
		t.Errorf("join of an Area that cannot start: %d %s; want 503 GRANT_FAILED, a plain message and a 16-digit error_id", j.Status, j.Raw)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if j.ErrorID != "" && strings.Contains(l, "error_id="+j.ErrorID) {
			line = l
		}
	}
	if !strings.Contains(line, "err=") || !strings.Contains(line, "host") {
		t.Errorf("log line of error %q = %q; want it with the cause (the host's error)", j.ErrorID, line)
	}
	if strings.Contains(j.Raw, "host") || strings.Contains(j.Raw, "blob") || strings.Contains(j.Raw, "persist") {
		t.Errorf("join's body %s carries the cause", j.Raw)
	}

	// Routes: a path no route has, and a method a route does not take.
	routes := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v1/nothing-here", http.StatusNotFound, "NOT_FOUND", ""},
		{"GET", "/nothing-here.html", http.StatusNotFound, "NOT_FOUND", ""}, // "/" is the web client (web.go)
		{"DELETE", "/v1/accounts", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "POST"},
		{"GET", "/v1/areas/1/join", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "POST"},
		{"POST", "/healthz", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "GET, HEAD"},
	}
	for _, rt := range routes {
		a := r.call(hc, rt.method, rt.path, "", "")
		if a.Status != rt.status || a.Code != rt.code || a.Message == "" || a.Allow != rt.allow {
			t.Errorf("%s %s: %d %s, Allow %q; want %d %s with a message, Allow %q", rt.method, rt.path, a.Status, a.Raw, a.Allow, rt.status, rt.code, rt.allow)
		}
	}
}

// TestSignUpInput (issue 12, finding 10): emails are one plain address,
// names are PRECIS nicknames, both bounded; every spelling of an address
// is one account.
func TestSignUpInput(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	hc := http.DefaultClient
	signUp := func(email, name string) answer {
		b, _ := json.Marshal(map[string]string{"email": email, "password": "correct horse battery", "name": name})
		return r.call(hc, "POST", "/v1/accounts", "", string(b))
	}
	bad := []struct {
		email, name, field string
	}{
		{"@", "x", "email"},
		{"x@y@z", "x", "email"},
		{"a\x00b@t.local", "x", "email"},
		{strings.Repeat("a", 60_000) + "@t.local", "x", "email"},
		{"Alice <alice@t.local>", "x", "email"},
		{"alice@t.local, bob@t.local", "x", "email"},
		{"\u202ealice@t.local", "x", "email"},
		{"ok1@t.local", strings.Repeat("n", 60_000), "name"},
		{"ok2@t.local", "a\x00b", "name"},
		{"ok3@t.local", "evil\u202etxt.exe", "name"},
		{"ok4@t.local", "\x1b[31mred\x1b[0m", "name"},
		{"ok5@t.local", " \t ", "name"},
	}
	for _, tt := range bad {
		a := signUp(tt.email, tt.name)
		if a.Status != http.StatusBadRequest || a.Code != "BAD_REQUEST" || !strings.HasPrefix(a.Message, tt.field+" ") {
			t.Errorf("sign-up %.30q / %.30q: %d %.200s; want 400 BAD_REQUEST about the %s", tt.email, tt.name, a.Status, a.Raw, tt.field)
		}
	}

	a := signUp("alice@t.local", "  Alice   Liddell ")
	if a.Status != http.StatusCreated || a.Email != "alice@t.local" || a.Name != "Alice Liddell" {
		t.Fatalf("sign-up alice@t.local: %d %s; want 201 with the name's spaces folded", a.Status, a.Raw)
	}
	for _, email := range []string{"ａlice@t.local", "ALICE@T.LOCAL", "alice@Ｔ.local"} {
		if a := signUp(email, "x"); a.Status != http.StatusConflict || a.Code != "EMAIL_TAKEN" {
			t.Errorf("sign-up %q beside alice@t.local: %d %s; want 409 EMAIL_TAKEN", email, a.Status, a.Raw)
		}
	}
	if a := r.call(hc, "POST", "/v1/session", "", credentialsJSON("ａlice@T.LOCAL", "correct horse battery")); a.Status != http.StatusOK {
		t.Errorf("login as ａlice@T.LOCAL: %d %s; want alice's session", a.Status, a.Raw)
	}
	if a := signUp("Bob@Example.org", ""); a.Status != http.StatusCreated || a.Email != "bob@example.org" || a.Name != "bob" {
		t.Errorf("sign-up without a name: %d %s; want the canonical email and its local part as the name", a.Status, a.Raw)
	}
}
