// Package dirclient is a typed client of the director's HTTP API, for the
// load driver, tools and tests.
package dirclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/leyworks/ley/director/apijson"
)

// Error is a refusal from the API: the HTTP status and its {code, message}
// (and error_id, for an internal error: the id the director logged its
// cause under).
type Error struct {
	Status int
	// RetryAfter is the answer's Retry-After (whole seconds), or 0 when
	// it has none: when a refusal that is only for now can be asked again.
	RetryAfter time.Duration `json:"-"`
	Code       string        `json:"code"`
	Message    string        `json:"message"`
	ErrorID    string        `json:"error_id,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("director: %d %s: %s", e.Status, e.Code, e.Message)
}

// Client talks to one director. Token, once set by Login, authenticates
// the calls that need a session. Safe for concurrent use if Token is not
// changed meanwhile.
type Client struct {
	Base  string // http://host:port
	Token string
	HTTP  *http.Client
}

// New returns a client of the director at base (http://host:port).
func New(base string) *Client {
	return &Client{Base: base, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

// Do sends a JSON request and decodes a JSON answer into out (if not nil).
// A non-2xx answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Message = "HTTP", string(data)
		}
		return e
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

// The API's JSON shapes, shared with the director (package apijson).
type (
	// Account is an account as the API shows it.
	Account = apijson.Account
	// Character is where a player's character is.
	Character = apijson.Character
	// Area is an Area as the API shows it.
	Area = apijson.Area
	// NewAreaRequest is POST /v1/areas's body: a name, and a kind or a
	// template or both (a template's map sets the size; W and H only for
	// EmptyTemplate, or equal to the map's).
	NewAreaRequest = apijson.NewArea
	// MyInvite is an invite the account made that can still be redeemed.
	MyInvite = apijson.Invite
	// Realm is the realm door's settings.
	Realm = apijson.Realm
	// ProvisionRequest asks for Count accounts <Prefix>-<i>@load.ley, all
	// with Password, spread over Areas Areas (see apijson.ProvisionRequest).
	ProvisionRequest = apijson.ProvisionRequest
	// Provisioned is one account made by Provision.
	Provisioned = apijson.Provisioned
	// HostStats is one host's last heartbeat as GET /v1/admin/hosts shows it.
	HostStats = apijson.HostStats
	// LiveArea is a live Area as GET /v1/admin/areas shows it.
	LiveArea = apijson.LiveArea
	// HostInspection is one host's answer to GET /v1/admin/inspect: the
	// ground truth of each of its Areas.
	HostInspection = apijson.HostInspection
	// AreaInspection is one Area of a host's inspection.
	AreaInspection = apijson.AreaInspection
)

// Register creates an account.
func (c *Client) Register(ctx context.Context, email, password, name string) (Account, error) {
	var a Account
	err := c.Do(ctx, "POST", "/v1/accounts", map[string]string{"email": email, "password": password, "name": name}, &a)
	return a, err
}

// Login opens a session and keeps its token in c.Token.
func (c *Client) Login(ctx context.Context, email, password string) (Account, error) {
	var out struct {
		Token   string  `json:"token"`
		Account Account `json:"account"`
	}
	if err := c.Do(ctx, "POST", "/v1/session", map[string]string{"email": email, "password": password}, &out); err != nil {
		return Account{}, err
	}
	c.Token = out.Token
	return out.Account, nil
}

// Logout revokes the session.
func (c *Client) Logout(ctx context.Context) error {
	return c.Do(ctx, "DELETE", "/v1/session", nil, nil)
}

// EmptyTemplate is the built-in template of an open floor of any size,
// players only.
const EmptyTemplate = "empty"

// CreateArea creates an Area of kind owned by the session's account: an
// open floor of w x h squares (the built-in template "empty"), or, with w
// and h 0, the kind's default template, whose map sets its size. See
// NewArea for any other template.
func (c *Client) CreateArea(ctx context.Context, name, kind string, w, h int) (Area, error) {
	in := NewAreaRequest{Name: name, Kind: kind}
	if w != 0 || h != 0 {
		in.Template, in.W, in.H = EmptyTemplate, w, h
	}
	return c.NewArea(ctx, in)
}

// NewArea creates an Area owned by the session's account.
func (c *Client) NewArea(ctx context.Context, in NewAreaRequest) (Area, error) {
	var a Area
	err := c.Do(ctx, "POST", "/v1/areas", in, &a)
	return a, err
}

// Area returns an Area the account is a member of.
func (c *Client) Area(ctx context.Context, id uint32) (Area, error) {
	var a Area
	err := c.Do(ctx, "GET", fmt.Sprintf("/v1/areas/%d", id), nil, &a)
	return a, err
}

// Invite creates an invite code to area.
func (c *Client) Invite(ctx context.Context, area uint32, uses int) (string, error) {
	var out struct {
		Code string `json:"code"`
	}
	err := c.Do(ctx, "POST", fmt.Sprintf("/v1/areas/%d/invites", area), map[string]int{"uses": uses}, &out)
	return out.Code, err
}

// MyInvites lists the invites the account made that can still be
// redeemed, newest first; more reports others past the ones listed.
func (c *Client) MyInvites(ctx context.Context) (invites []MyInvite, more bool, err error) {
	var out struct {
		Invites []MyInvite `json:"invites"`
		More    bool       `json:"more"`
	}
	err = c.Do(ctx, "GET", "/v1/me/invites", nil, &out)
	return out.Invites, out.More, err
}

// Redeem redeems an invite code, making the account a member.
func (c *Client) Redeem(ctx context.Context, code string) (uint32, error) {
	var out struct {
		Area uint32 `json:"area"`
	}
	err := c.Do(ctx, "POST", "/v1/invites/"+code+"/redeem", nil, &out)
	return out.Area, err
}

// Join is a successful join's answer. JoinID is a decimal string on the
// wire (its values exceed 2^53, which JavaScript's numbers cannot hold)
// and the uint64 that hello carries here.
type Join struct {
	Grant  string `json:"grant"`
	WSURL  string `json:"ws_url"`
	JoinID uint64 `json:"join_id,string"`
	Area   uint32 `json:"area"`
}

// Join asks to join area.
func (c *Client) Join(ctx context.Context, area uint32) (Join, error) {
	var j Join
	err := c.Do(ctx, "POST", fmt.Sprintf("/v1/areas/%d/join", area), nil, &j)
	return j, err
}

// SetRealm changes the realm settings (admins).
func (c *Client) SetRealm(ctx context.Context, r Realm) error {
	return c.Do(ctx, "PUT", "/v1/realm", r, nil)
}

// Info is the public GET /director/info.
type Info struct {
	Open              bool           `json:"open"`
	Cap               int            `json:"cap"`
	Players           int            `json:"players"`
	NewPlayersWelcome bool           `json:"new_players_welcome"`
	Message           string         `json:"message"`
	LiveAreas         int            `json:"live_areas"`
	Hosts             int            `json:"hosts"`
	Knobs             map[string]any `json:"knobs"`
}

// Info reads the public realm information.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var i Info
	err := c.Do(ctx, "GET", "/director/info", nil, &i)
	return i, err
}

// Provision is the admins' bulk path: accounts, Areas and memberships in
// one call (idempotent by email and Area name).
func (c *Client) Provision(ctx context.Context, req ProvisionRequest) ([]Provisioned, []uint32, error) {
	var out struct {
		Accounts []Provisioned `json:"accounts"`
		Areas    []uint32      `json:"areas"`
	}
	err := c.Do(ctx, "POST", "/v1/admin/provision", req, &out)
	return out.Accounts, out.Areas, err
}

// Hosts lists the registered hosts (admins).
func (c *Client) Hosts(ctx context.Context) ([]HostStats, error) {
	var out struct {
		Hosts []HostStats `json:"hosts"`
	}
	err := c.Do(ctx, "GET", "/v1/admin/hosts", nil, &out)
	return out.Hosts, err
}

// Portal is one portal of an Area: square (X, Y) leads to (ToX, ToY) of ToArea.
type Portal struct {
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	ToArea uint32 `json:"to_area"`
	ToX    int32  `json:"to_x"`
	ToY    int32  `json:"to_y"`
}

// SetPortals replaces an Area's portals (its owner); they take effect when
// the Area next goes live.
func (c *Client) SetPortals(ctx context.Context, area uint32, portals []Portal) error {
	return c.Do(ctx, "PUT", fmt.Sprintf("/v1/areas/%d/portals", area), map[string]any{"portals": portals}, nil)
}

// Me returns the session's account and its character (nil before the
// first join).
func (c *Client) Me(ctx context.Context) (Account, *Character, error) {
	var out struct {
		Account
		Character *Character `json:"character"`
	}
	err := c.Do(ctx, "GET", "/v1/me", nil, &out)
	return out.Account, out.Character, err
}

// LiveAreas lists the live Areas with the accounts bound in each (admins).
func (c *Client) LiveAreas(ctx context.Context) ([]LiveArea, error) {
	var out struct {
		Areas []LiveArea `json:"areas"`
	}
	err := c.Do(ctx, "GET", "/v1/admin/areas", nil, &out)
	return out.Areas, err
}

// Inspect asks every host for its Areas' ground truth (admins): bodies
// counted in each world beside the hosts' session bookkeeping.
func (c *Client) Inspect(ctx context.Context) ([]HostInspection, error) {
	var out struct {
		Hosts []HostInspection `json:"hosts"`
	}
	err := c.Do(ctx, "GET", "/v1/admin/inspect", nil, &out)
	return out.Hosts, err
}

// Change is one entry of the audit log.
type Change = apijson.Change

// Audit reads a page of the audit log (admins), newest first: at most
// limit changes with ids below before (0: from the newest); more reports
// older ones past them.
func (c *Client) Audit(ctx context.Context, before int64, limit int) (changes []Change, more bool, err error) {
	var out struct {
		Changes []Change `json:"changes"`
		More    bool     `json:"more"`
	}
	path := fmt.Sprintf("/v1/admin/audit?limit=%d", limit)
	if before > 0 {
		path += fmt.Sprintf("&before=%d", before)
	}
	err = c.Do(ctx, "GET", path, nil, &out)
	return out.Changes, out.More, err
}

// FoundAccount is an account as an admin finds it.
type FoundAccount = apijson.FoundAccount

// FindAccounts finds the accounts whose email or name holds q (admins),
// newest first, at most limit; more reports others past them.
func (c *Client) FindAccounts(ctx context.Context, q string, limit int) (accounts []FoundAccount, more bool, err error) {
	var out struct {
		Accounts []FoundAccount `json:"accounts"`
		More     bool           `json:"more"`
	}
	err = c.Do(ctx, "GET", fmt.Sprintf("/v1/admin/accounts?q=%s&limit=%d", url.QueryEscape(q), limit), nil, &out)
	return out.Accounts, out.More, err
}

// EndSessions ends every session of an account and its play (admins),
// and reports how many sessions ended.
func (c *Client) EndSessions(ctx context.Context, account uint64) (int, error) {
	var out struct {
		Sessions int `json:"sessions"`
	}
	err := c.Do(ctx, "POST", fmt.Sprintf("/v1/admin/accounts/%d/logout", account), nil, &out)
	return out.Sessions, err
}

// GiveMembership makes an account a member or builder of an Area (admins).
func (c *Client) GiveMembership(ctx context.Context, area uint32, account uint64, role string) error {
	return c.Do(ctx, "PUT", fmt.Sprintf("/v1/admin/areas/%d/members/%d", area, account), apijson.Membership{Role: role}, nil)
}

// TakeMembership ends an account's membership of an Area (admins).
func (c *Client) TakeMembership(ctx context.Context, area uint32, account uint64) error {
	return c.Do(ctx, "DELETE", fmt.Sprintf("/v1/admin/areas/%d/members/%d", area, account), nil, nil)
}

// AreaDetail is an Area as an admin sees it: its record, owner, members,
// invites and live incarnation.
type AreaDetail = apijson.AreaDetail

// AreaDetail returns an Area's detail (admins).
func (c *Client) AreaDetail(ctx context.Context, area uint32) (AreaDetail, error) {
	var d AreaDetail
	err := c.Do(ctx, "GET", fmt.Sprintf("/v1/admin/areas/%d", area), nil, &d)
	return d, err
}

// Spectate returns a spectator grant for an Area (admins): its hello
// watches the Area read-only, with no body (docs/protocol.md,
// "Spectators").
func (c *Client) Spectate(ctx context.Context, area uint32) (Join, error) {
	var j Join
	err := c.Do(ctx, "POST", fmt.Sprintf("/v1/admin/areas/%d/spectate", area), nil, &j)
	return j, err
}

// Member is one member of an Area.
type Member = apijson.Member

// ItemCensus is the count of every item the store holds, or in play.
type ItemCensus = apijson.ItemCensus

// Items counts every item the realm's store holds and checks none is
// there twice and none is missing (admins).
func (c *Client) Items(ctx context.Context) (ItemCensus, error) {
	var out ItemCensus
	err := c.Do(ctx, "GET", "/v1/admin/items", nil, &out)
	return out, err
}

// LiveItems counts every item in play: the live Areas as their hosts
// hold them now, the store for the rest (admins).
func (c *Client) LiveItems(ctx context.Context) (ItemCensus, error) {
	var out ItemCensus
	err := c.Do(ctx, "GET", "/v1/admin/items?live=true", nil, &out)
	return out, err
}

// SetRole names a member of an Area the caller owns a builder ("builder")
// or a plain member ("member"); it takes effect at the member's next
// arrival.
func (c *Client) SetRole(ctx context.Context, area uint32, account uint64, role string) (Member, error) {
	var out Member
	err := c.Do(ctx, "PUT", fmt.Sprintf("/v1/areas/%d/members/%d", area, account), apijson.Membership{Role: role}, &out)
	return out, err
}

// Members lists an Area's members: all of them for its owner and the
// realm's admins, the caller alone for any other member.
func (c *Client) Members(ctx context.Context, area uint32) ([]Member, error) {
	var out struct {
		Members []Member `json:"members"`
	}
	err := c.Do(ctx, "GET", fmt.Sprintf("/v1/areas/%d/members", area), nil, &out)
	return out.Members, err
}
