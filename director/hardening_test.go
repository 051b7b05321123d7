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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/wire"
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
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Allow: resp.Header.Get("Allow"), Raw: string(b)}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		r.t.Errorf("%s %s: %d without X-Content-Type-Options: nosniff", method, path, resp.StatusCode)
	}
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

// TestQuotas (issue 12, finding 8): owned Areas and live invites (admins
// exempt), pending grants and joins a minute, each refused with QUOTA_EXCEEDED naming it;
// a refused join changes nothing.
func TestQuotas(t *testing.T) {
	r := startRealm(t, func(c *Config) {
		c.MaxOwnedAreas, c.MaxPendingGrants, c.JoinsPerMinute, c.MaxLiveInvites = 2, 1, 3, 3
		c.MaxOwnedSquares = 2 * 64 * 64
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
	// Owned squares (issue 29, N2): another account's two Areas may not
	// cover more than the quota together; admins are exempt.
	big, _ := r.player("quota-big")
	if _, err := big.CreateArea(ctx, "Big", "village", 64, 64); err != nil {
		t.Fatal(err)
	}
	_, err = big.CreateArea(ctx, "Bigger", "village", 64, 65)
	if e := refusalOf(t, err); e.Status != http.StatusForbidden || e.Code != "QUOTA_EXCEEDED" || !strings.Contains(e.Message, "owned_squares") {
		t.Errorf("an Area past the owned squares: %v; want 403 QUOTA_EXCEEDED naming owned_squares", err)
	}
	if _, err := big.CreateArea(ctx, "Small", "village", 64, 64); err != nil {
		t.Errorf("an Area within the owned squares: %v", err)
	}
	admin, adminAcct := r.player("quota-admin")
	r.admin(adminAcct)
	var shared uint32
	for i := range 3 {
		a, err := admin.CreateArea(ctx, fmt.Sprintf("Shared %d", i), "village", 128, 128)
		if err != nil {
			t.Errorf("admin's Area %d: %v; want admins exempt from owned_areas", i+1, err)
		}
		shared = a.ID
	}
	// Live invites (issue 29, N9): two of A's and one of B's are the
	// account's three; a fourth is refused until one is used up.
	var codes []string
	for _, area := range []uint32{a.ID, a.ID, b.ID} {
		code, err := c.Invite(ctx, area, 1)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	_, err = c.Invite(ctx, b.ID, 1)
	if e := refusalOf(t, err); e.Status != http.StatusForbidden || e.Code != "QUOTA_EXCEEDED" || !strings.Contains(e.Message, "live_invites") {
		t.Errorf("fourth invite: %v; want 403 QUOTA_EXCEEDED naming live_invites", err)
	}
	friend, _ := r.player("quota-friend")
	if _, err := friend.Redeem(ctx, codes[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invite(ctx, b.ID, 1); err != nil {
		t.Errorf("an invite once one was used up: %v", err)
	}
	for range 4 {
		if _, err := admin.Invite(ctx, shared, 1); err != nil {
			t.Errorf("admin's invite: %v; want admins exempt from live_invites", err)
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
	ep, err := r.store.BeginIncarnation(ctx, store.AreaID(area.ID), store.TokenHash{})
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
	if a := signUp("Bob@Example.org", ""); a.Status != http.StatusCreated || a.Email != "bob@example.org" || !regexp.MustCompile(`^player-[0-9a-f]{6}$`).MatchString(a.Name) {
		t.Errorf("sign-up without a name: %d %s; want the canonical email and a player-xxxxxx name (never the email's local part)", a.Status, a.Raw)
	}
	for _, name := range []string{"alice liddell", "ＡＬＩＣＥ LIDDELL"} { // issue 29, N13: another's name, in any case or width
		if a := signUp("n13-"+strconv.Itoa(len(name))+"@t.local", name); a.Status != http.StatusConflict || a.Code != "NAME_TAKEN" {
			t.Errorf("sign-up named %q beside Alice Liddell: %d %s; want 409 NAME_TAKEN", name, a.Status, a.Raw)
		}
	}
	for _, name := range []string{"d\u0435mo", "\u2800"} { // issue 29, N13: a look-alike, a blank
		if a := signUp("n13@t.local", name); a.Status != http.StatusBadRequest || !strings.HasPrefix(a.Message, "name ") {
			t.Errorf("sign-up named %q: %d %s; want 400 about the name", name, a.Status, a.Raw)
		}
	}
}

// TestCrossSiteRequestsRefused (issue 29, N10): a page of another site
// cannot sign up or log in on a visitor's behalf: a body not declared JSON
// (what a form or a text/plain fetch sends without asking first) is
// refused 415, and a request naming another site's Origin is refused 403
// BAD_ORIGIN (checked where the request arrives, before a follower
// forwards it); the director's own pages and programs (no Origin) go
// through.
func TestCrossSiteRequestsRefused(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	self := strings.TrimPrefix(r.url, "http://")
	send := func(path, ctype, origin, body string) answer {
		t.Helper()
		req, err := http.NewRequest("POST", r.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		a := answer{Status: resp.StatusCode, Raw: string(b)}
		_ = json.Unmarshal(b, &a)
		return a
	}
	signUp := func(n int) string {
		return fmt.Sprintf(`{"email":"csrf%d@t.local","password":"correct horse battery"}`, n)
	}
	login := `{"email":"csrf1@t.local","password":"correct horse battery"}`
	tests := []struct {
		name, path, ctype, origin, body string
		status                          int
		code                            string
	}{
		{"text/plain sign-up from another site", "/v1/accounts", "text/plain", "http://evil.example", signUp(0), 403, "BAD_ORIGIN"},
		{"text/plain sign-up, no origin", "/v1/accounts", "text/plain;charset=UTF-8", "", signUp(0), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"form login", "/v1/session", "application/x-www-form-urlencoded", "http://evil.example", "email=csrf1%40t.local&password=x", 403, "BAD_ORIGIN"},
		{"JSON sign-up from another site", "/v1/accounts", "application/json", "http://evil.example", signUp(0), 403, "BAD_ORIGIN"},
		{"JSON sign-up from a sandboxed page", "/v1/accounts", "application/json", "null", signUp(0), 403, "BAD_ORIGIN"},
		{"JSON sign-up from another port of this host", "/v1/accounts", "application/json", "http://" + strings.Split(self, ":")[0] + ":1", signUp(0), 403, "BAD_ORIGIN"},
		{"JSON sign-up by a program", "/v1/accounts", "application/json", "", signUp(1), 201, ""},
		{"JSON sign-up from the director's own page", "/v1/accounts", "application/json; charset=utf-8", "http://" + self, signUp(2), 201, ""},
		{"JSON login from the director's own page", "/v1/session", "application/json", "http://" + self, login, 200, ""},
	}
	for _, tt := range tests {
		a := send(tt.path, tt.ctype, tt.origin, tt.body)
		if a.Status != tt.status || a.Code != tt.code {
			t.Errorf("%s: %d %s; want %d %s", tt.name, a.Status, a.Raw, tt.status, tt.code)
		}
	}
	// Nothing refused was created.
	if _, _, err := r.store.AccountByEmail(context.Background(), "csrf0@t.local"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an account refused as cross-site exists: %v", err)
	}
}

// TestMembersListedToOwnersOnly (issue 29, N14): a member of an Area sees
// only its own row of the members list; the owner and the realm's admins
// see them all; a stranger is refused. A follower's public /readyz names
// no other director's address (TestFollowerForwardsAndTakesOver checks).
func TestMembersListedToOwnersOnly(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts = 0 })
	ctx := context.Background()
	owner, _ := r.player("owner")
	member, macct := r.player("member")
	stranger, _ := r.player("stranger")
	admin, aacct := r.player("admin")
	r.admin(aacct)
	area, err := owner.CreateArea(ctx, "listed", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, err := owner.Invite(ctx, area.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := member.Redeem(ctx, code); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/v1/areas/%d/members", area.ID)
	list := func(c *dirclient.Client) ([]uint64, error) {
		var out struct {
			Members []struct {
				Account uint64 `json:"account"`
			} `json:"members"`
		}
		err := c.Do(ctx, "GET", path, nil, &out)
		var ids []uint64
		for _, m := range out.Members {
			ids = append(ids, m.Account)
		}
		return ids, err
	}
	for _, c := range []*dirclient.Client{owner, admin} {
		if ids, err := list(c); err != nil || len(ids) != 2 {
			t.Errorf("the owner's or an admin's list: %v, %v; want both members", ids, err)
		}
	}
	if ids, err := list(member); err != nil || len(ids) != 1 || ids[0] != macct.ID {
		t.Errorf("a member's list: %v, %v; want only itself (%d)", ids, err, macct.ID)
	}
	if _, err := list(stranger); refusal(t, err) != "NOT_MEMBER" {
		t.Errorf("a stranger's list: %v; want NOT_MEMBER", err)
	}
}

// TestLogoutEndsPlay (issue 29, N17): a grant taken before a logout is
// refused after it, and a session playing when the account logs out ends
// with taken_over.
func TestLogoutEndsPlay(t *testing.T) {
	r := startRealm(t, nil)
	r.waitHosts(1)
	ctx := context.Background()
	c, _ := r.player("leaver")
	area, err := c.CreateArea(ctx, "left", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	playing, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, playing)
	unused, err := c.Join(ctx, area.ID) // a second grant, never used before the logout
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "DELETE", "/v1/session", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.until(func(m wire.Message) bool { _, ok := m.(*wire.TakenOver); return ok }) // the session playing at logout
	if late, _, err := dialPeer(unused); err == nil || !strings.Contains(err.Error(), wire.CodeBadGrant.String()) {
		if late != nil {
			late.c.Close(1000, "")
		}
		t.Fatalf("hello with a grant taken before the logout: %v; want BAD_GRANT", err)
	}
}

// TestHostsListenOnIPv6 (issue 29): hosts spawned to listen on an IPv6
// address (--host-listen ::1) start, and players reach them there; the
// listen address was once joined as "::1:0" and every host exited.
func TestHostsListenOnIPv6(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.Listen = "::1" })
	r.waitHosts(1)
	ctx := context.Background()
	c, _ := r.player("six")
	area, err := c.CreateArea(ctx, "six", "home", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Join(ctx, area.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.WSURL, "ws://[::1]:") {
		t.Fatalf("ws_url %q; want the host's IPv6 listener", j.WSURL)
	}
	connect(t, j)
}

// TestSessionRequestsBounded (issue 29, N16): a session's authenticated
// requests are rate-limited (429 with Retry-After), another account's are
// not held up by it, and a burst of requests writes the session's row
// once, not once each; a logout still ends the session at once.
func TestSessionRequestsBounded(t *testing.T) {
	r := startRealm(t, func(c *Config) { c.Spawn.MinHosts, c.APIEvery, c.APIBurst = 0, time.Hour, 20 })
	ctx := context.Background()
	busy, _ := r.player("busy")
	calm, _ := r.player("calm")
	hash := store.HashToken(busy.Token)
	if _, _, err := busy.Me(ctx); err != nil { // the first request touches the row
		t.Fatal(err)
	}
	before, err := r.store.SessionByTokenHash(ctx, hash, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	var limited *dirclient.Error
	for range 40 {
		_, _, err := busy.Me(ctx)
		if err == nil {
			ok++
			continue
		}
		if !errors.As(err, &limited) || limited.Code != "RATE_LIMITED" {
			t.Fatalf("request %d: %v; want RATE_LIMITED past the burst", ok, err)
		}
		break
	}
	if limited == nil || ok != 19 {
		t.Fatalf("%d more requests went through and then %v; want 19, then RATE_LIMITED", ok, limited)
	}
	if _, _, err := calm.Me(ctx); err != nil {
		t.Fatalf("another account's request: %v", err)
	}
	after, err := r.store.SessionByTokenHash(ctx, hash, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !after.LastSeen.Equal(before.LastSeen) {
		t.Errorf("the session's row was written by the burst (last seen %v -> %v); want it believed from the cache", before.LastSeen, after.LastSeen)
	}
	if err := calm.Do(ctx, "DELETE", "/v1/session", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := calm.Me(ctx); refusal(t, err) != "SESSION_EXPIRED" {
		t.Fatalf("a request after logout: %v; want SESSION_EXPIRED", err)
	}
}

// TestMeShowsTheStoredSquare (issue 28, 8): /v1/me's character is where
// its Area last stored it: placed, at the body's square, once a snapshot
// stored it; right after a join of another Area by the door, in that Area
// and not placed (never placed at a square it does not stand on), until
// that Area stores its square.
func TestMeShowsTheStoredSquare(t *testing.T) {
	r := startRealm(t, nil)
	r.waitHosts(1)
	ctx := context.Background()
	owner, _ := r.player("me-owner")
	a, b := twoAreas(t, owner)
	c, _ := r.player("me")
	for _, area := range []uint32{a.ID, b.ID} {
		code, err := owner.Invite(ctx, area, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Redeem(ctx, code); err != nil {
			t.Fatal(err)
		}
	}
	j, err := c.Join(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := connect(t, j)
	p.snapshot(0)
	you := p.you()
	waitFor(t, "the body's square stored", func() bool {
		_, ch, err := c.Me(ctx)
		return err == nil && ch != nil && ch.Area == a.ID && ch.Placed && ch.X == you.X && ch.Y == you.Y
	})
	jb, err := c.Join(ctx, b.ID) // by the door: A lets go of the body
	if err != nil {
		t.Fatal(err)
	}
	if _, ch, err := c.Me(ctx); err != nil || ch == nil || ch.Area != b.ID || ch.Placed {
		t.Fatalf("/v1/me right after a door join of B: %+v, %v; want in B, not placed", ch, err)
	}
	pb, _ := connect(t, jb)
	pb.snapshot(0)
	youB := pb.you()
	waitFor(t, "the body's square in B stored", func() bool {
		_, ch, err := c.Me(ctx)
		return err == nil && ch != nil && ch.Area == b.ID && ch.Placed && ch.X == youB.X && ch.Y == youB.Y
	})
}
