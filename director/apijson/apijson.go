package apijson

import (
	"time"

	"github.com/leyworks/ley/net/control"
)

// Account is an account. Account (and Area) ids stay JSON numbers: they
// are database sequences, one per row created, far below the 2^53 past
// which JavaScript's numbers round (join_id, which is not, is a string).
type Account struct {
	ID    uint64 `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Admin bool   `json:"admin"`
}

// Character is where a player's character is: its Area, its home, and
// its square as the store holds it (Placed false: it lands where
// newcomers do).
type Character struct {
	Area   uint32 `json:"area"`
	Home   uint32 `json:"home"`
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	Placed bool   `json:"placed"`
}

// Me is GET /v1/me: the session's account and its character (nil before
// its first join).
type Me struct {
	Account
	Character *Character `json:"character,omitempty"`
}

// Area is an Area.
type Area struct {
	ID       uint32 `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Template string `json:"template"`
	Owner    uint64 `json:"owner"`
	W        int    `json:"w"`
	H        int    `json:"h"`
}

// NewArea is POST /v1/areas's body: a name, and a kind or a template or
// both (a template's map sets the size; W and H only for the "empty"
// template, or equal to the map's).
type NewArea struct {
	Name     string `json:"name"`
	Kind     string `json:"kind,omitempty"`
	Template string `json:"template,omitempty"`
	W        int    `json:"w,omitempty"`
	H        int    `json:"h,omitempty"`
}

// Invite is an invite as its maker sees it listed: one that can still be
// redeemed.
type Invite struct {
	Code     string    `json:"code"`
	Area     uint32    `json:"area"`
	Expires  time.Time `json:"expires"`
	UsesLeft int       `json:"uses_left"`
}

// Realm is the realm door's settings.
type Realm struct {
	Open              bool   `json:"open"`
	Cap               int    `json:"cap"`
	NewPlayersWelcome bool   `json:"new_players_welcome"`
	Message           string `json:"message"`
}

// ProvisionRequest is POST /v1/admin/provision's body: Count accounts
// <Prefix>-<i>@load.ley, all with Password, spread over Areas Areas of
// Kind and Template owned by the caller (W x H for the "empty" template;
// a template's map sets the size); account i joins Area i % Areas.
type ProvisionRequest struct {
	Prefix   string `json:"prefix"`
	Count    int    `json:"count"`
	Areas    int    `json:"areas"`
	Kind     string `json:"kind,omitempty"`
	Template string `json:"template,omitempty"`
	W        int    `json:"w,omitempty"`
	H        int    `json:"h,omitempty"`
	Password string `json:"password"`
	// Pairs also makes account i a member of Area (i % Areas) ^ 1, the
	// other Area of its pair (for portal hopping); Areas must be even.
	Pairs bool `json:"pairs,omitempty"`
}

// Provisioned is one account a provisioning made (or found by email).
type Provisioned struct {
	Email   string `json:"email"`
	Account uint64 `json:"account"`
	Area    uint32 `json:"area"`
}

// HostStats is one registered host with its last heartbeat, as GET
// /v1/admin/hosts shows it.
type HostStats struct {
	ID        uint32 `json:"id"`
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	WSURL     string `json:"ws_url"`
	Spawned   bool   `json:"spawned"`
	Areas     int    `json:"areas"`
	Active    int    `json:"active"`
	Peers     int    `json:"peers"`
	RSSKiB    int64  `json:"rss_kib"`
	TickP99us int64  `json:"tick_p99_us"`
	BeatAgeMS int64  `json:"beat_age_ms"`
}

// LiveArea is a live Area as GET /v1/admin/areas shows it: its host,
// incarnation, and the accounts its host reports bound there.
type LiveArea struct {
	Area     uint32   `json:"area"`
	Template string   `json:"template"`
	Host     uint32   `json:"host"`
	Epoch    uint64   `json:"epoch"`
	Peers    int      `json:"peers"`
	Accounts []uint64 `json:"accounts"`
	Closing  bool     `json:"closing"`
}

// HostInspection is one host's answer to an inspection (GET
// /v1/admin/inspect): the ground truth of every Area it runs.
type HostInspection struct {
	Host  uint32           `json:"host"`
	Name  string           `json:"name"`
	PID   int              `json:"pid"`
	Areas []AreaInspection `json:"areas"`
	Error string           `json:"error,omitempty"`
}

// AreaInspection is one Area of a host's inspection: the host's ground
// truth (bodies counted in its world beside its session bookkeeping) and
// the template the director made the Area from.
type AreaInspection struct {
	control.AreaState
	Template string `json:"template"`
}

// Sample is one of the director's minute samples (GET /v1/admin/samples):
// the capacity charts' data.
type Sample struct {
	At             time.Time `json:"at"`
	Players        int       `json:"players"`
	LiveAreas      int       `json:"live_areas"`
	FrozenAreas    int       `json:"frozen_areas"`
	Hosts          int       `json:"hosts"`
	RSSBytes       int64     `json:"rss_bytes"`
	CPU            float64   `json:"cpu"`
	WorstTickP99us int64     `json:"worst_tick_p99_us"`
}

// Change is one entry of the audit log (GET /v1/admin/audit): a change an
// admin made, who made it and when.
type Change struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Actor     uint64    `json:"actor"`
	ActorName string    `json:"actor_name"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Detail    string    `json:"detail"`
}

// FoundAccount is an account as an admin finds it (GET
// /v1/admin/accounts): where its character is (nil before its first
// join) and the Area its host reports it bound in now (0: none).
type FoundAccount struct {
	Account
	Character *Character `json:"character,omitempty"`
	BoundIn   uint32     `json:"bound_in"`
}

// Membership is PUT /v1/admin/areas/{id}/members/{account}'s body: the
// role an admin gives ("member" or "builder").
type Membership struct {
	Role string `json:"role"`
}

// Member is one member of an Area (GET /v1/areas/{id}/members): its
// account, display name and role ("owner", "member" or "builder").
type Member struct {
	Account uint64 `json:"account"`
	Name    string `json:"name"`
	Role    string `json:"role"`
}

// ItemCensus is GET /v1/admin/items: every item the store holds, counted
// at one instant, or with Live what is in play (the live Areas as their
// hosts hold them now; Unanswered lists those whose stored state was
// counted instead). OK is true when no stack id is there twice and every
// kind's count is what the ledgers made less what they unmade.
type ItemCensus struct {
	OK         bool        `json:"ok"`
	Live       bool        `json:"live"`
	Unanswered []string    `json:"unanswered"`
	Stacks     int         `json:"stacks"`
	Areas      int         `json:"areas"`
	Characters int         `json:"characters"`
	Kinds      []ItemCount `json:"kinds"`
	Violations int         `json:"violations"`
	Problems   []string    `json:"problems"`
}

// ItemCount is one item kind's count in an [ItemCensus].
type ItemCount struct {
	Kind      uint16 `json:"kind"`
	Present   int64  `json:"present"`
	Created   int64  `json:"created"`
	Destroyed int64  `json:"destroyed"`
}

// AreaMember is one member of an Area as an admin sees it (GET
// /v1/admin/areas/{id}): its account, role and when it joined.
type AreaMember struct {
	Account
	Role  string    `json:"role"`
	Added time.Time `json:"added"`
}

// AreaDetail is an Area as the console shows it to an admin (GET
// /v1/admin/areas/{id}): its record, its owner's account (nil if that
// account is gone), its members (the first ones, by account id; more
// says others follow), the invites to it that can still be redeemed, and
// its live incarnation (nil while it is not live).
type AreaDetail struct {
	Area
	Created      time.Time    `json:"created"`
	LastPlayed   *time.Time   `json:"last_played,omitempty"`
	OwnerAccount *Account     `json:"owner_account,omitempty"`
	Members      []AreaMember `json:"members"`
	MembersTotal int          `json:"members_total"`
	MembersMore  bool         `json:"members_more"`
	Invites      []Invite     `json:"invites"`
	Live         *LiveArea    `json:"live,omitempty"`
}
