package load

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/leyworks/ley/director/dirclient"
)

// Pattern is what simulated players do once bound.
type Pattern string

// The patterns.
const (
	// PatternWalk steps in a random direction 10 times a second: twice
	// the movement budget, so about half the steps answer TOO_FAST.
	PatternWalk Pattern = "walk"
	// PatternWalk5 steps 5 times a second, within the budget.
	PatternWalk5 Pattern = "walk5"
	// PatternIdle sends no intents: a player who only watches.
	PatternIdle Pattern = "idle"
	// PatternBursty sends a burst of 5 steps back to back every second.
	PatternBursty Pattern = "bursty"
	// PatternPortal hops between pairs of Areas through portals: each
	// session walks (move-to) onto its Area's portal, crosses, reconnects
	// in the other Area with the grant it is given, and walks again.
	PatternPortal Pattern = "portal"
	// PatternBuild builds as players of a building game do, 5 intents a
	// second within the budget: steps (40%), places of an item of the
	// starter kit on a side (15%), takes back from a side (15%), actions on
	// a side (10%: gathering a tree or rock, opening a chest, a door),
	// moves of a few things into a container on a side (10%), crafts at a
	// side (2.5%: a cauldron the player placed), trades opened with a
	// player on a side (2.5%; in a trade, a player offers, confirms the
	// revision it was shown or calls it off) and uses of the kit's
	// blueprint (5%). After the run the director's counts of the realm's
	// items, stored and in play, must find none doubled or lost
	// (Summary.Items, Summary.LiveItems). Villages let anyone build on
	// their plots; a home only its owner.
	PatternBuild Pattern = "build"
	// PatternChurn plays like real players come and go: Poisson arrivals,
	// walking sessions of random length, and sessions that end in a clean
	// leave, a resume after a dropped socket, a rejoin past the grace, a
	// takeover by a second login, or a portal hop (see [Churn]).
	PatternChurn Pattern = "churn"
)

// Patterns lists every pattern name, for flag help.
var Patterns = []Pattern{PatternWalk, PatternWalk5, PatternIdle, PatternBursty, PatternBuild, PatternPortal, PatternChurn}

// StutterGap is the gap between snapshots that counts as a stutter.
const StutterGap = 250 * time.Millisecond

// Errors of the load driver.
var (
	// ErrConfig wraps every invalid configuration.
	ErrConfig = errors.New("load: invalid config")
	// ErrNoPlayers is returned when not one player connected.
	ErrNoPlayers = errors.New("load: no player connected")
	// ErrItemsNotConserved is returned when, after a build run, the
	// director's count finds an item doubled or lost.
	ErrItemsNotConserved = errors.New("load: the realm's items are not conserved")
)

// Account is one simulated player's account and the Area it joins.
type Account struct {
	Email string `json:"email"`
	Area  uint32 `json:"area"`
}

// Config configures a [Run]. Start from [DefaultConfig].
type Config struct {
	// Director is the director's base URL (http://host:port).
	Director string
	// AdminEmail and AdminPassword log in the admin that provisions the
	// accounts (and raises the cap when RaiseCap is set, and counts the
	// realm's items after a build run), unless Admin is set: an admin session already logged in (a login ends the account's
	// earlier sessions, so a caller that keeps its own passes it here).
	AdminEmail, AdminPassword string
	Admin                     *dirclient.Client
	// Players accounts are provisioned over Areas Areas (account i in Area
	// i % Areas) under Prefix, all with Password. Ignored when Roster is
	// set. An empty Prefix takes "load-<unix seconds>".
	Players, Areas int
	Prefix         string
	Password       string
	// Roster, if not empty, is the players to run (already provisioned,
	// all with Password); Players and Areas are then ignored.
	Roster []Account
	// Sessions, if not nil, caches session tokens by email across runs:
	// a player with a cached token does not log in again.
	Sessions *Sessions
	// RaiseCap sets the realm's player cap out of the way before joining.
	RaiseCap bool
	// Template, if set, is the content template the provisioned Areas are
	// made from (e.g. "arena": its map, walls, creatures and rules); empty
	// takes open floors of AreaSide squares with players only. Only the
	// patterns that walk at random (walk, walk5, idle, bursty) take one:
	// churn and portal place players and portals on the open floor.
	Template string

	// Pattern is what the players do once bound.
	Pattern Pattern
	// Ramp spreads the players' starts evenly; Duration is the steady
	// phase measured after it; Drain bounds the wait for the last answers
	// after the intents stop (it ends as soon as every intent is answered;
	// a walking player's queue holds up to 8 intents, 1.6 s at 5 steps a
	// second).
	Ramp, Duration, Drain time.Duration
	// LoginConcurrency and JoinConcurrency bound logins and joins in
	// flight.
	LoginConcurrency, JoinConcurrency int

	// Progress, if not nil, receives a progress line every second.
	Progress io.Writer
	// OnSteady, if not nil, is called as the steady phase starts and ends
	// (the ladder samples the server processes there). It must not block
	// for long.
	OnSteady func(start bool)

	// Seed seeds every random draw of the run (directions, the churn
	// pattern's arrivals and choices), so a run can be replayed; 0 takes
	// the clock. The summary records it.
	Seed uint64
	// Churn tunes the churn pattern.
	Churn Churn
	// AtEnd, if not nil, is called by the churn pattern at the end of the
	// steady phase with the players still in, by Area, while they are all
	// bound and quiet (no intent in flight), just before they leave: a soak
	// test compares them with the hosts' ground truth there.
	AtEnd func(in map[uint32]int)
}

// DefaultConfig returns a fresh Config: the demo admin of `ley run` on
// http://127.0.0.1:8080, 20 players in 2 Areas walking for 30 s after a
// 5 s ramp.
func DefaultConfig() Config {
	return Config{
		Director:         "http://127.0.0.1:8080",
		AdminEmail:       "demo@ley.local",
		AdminPassword:    "demo-password",
		Players:          20,
		Areas:            2,
		Password:         "load-password-1",
		Pattern:          PatternWalk,
		Ramp:             5 * time.Second,
		Duration:         30 * time.Second,
		Drain:            5 * time.Second,
		LoginConcurrency: 4,
		JoinConcurrency:  16,
		Churn:            DefaultChurn(),
	}
}

func (c *Config) validate() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	switch c.Pattern {
	case PatternWalk, PatternWalk5, PatternIdle, PatternBursty, PatternBuild:
	case PatternChurn:
		ch := c.Churn
		if ch.SessionMean <= 0 || ch.AwayMean < 0 || ch.ResumeGrace < 0 {
			bad("churn: session mean %v must be positive, away mean %v and resume grace %v not negative", ch.SessionMean, ch.AwayMean, ch.ResumeGrace)
		}
		if ch.Leave < 0 || ch.Resume < 0 || ch.Rejoin < 0 || ch.Takeover < 0 || ch.Hop < 0 || ch.Leave+ch.Resume+ch.Rejoin+ch.Takeover+ch.Hop == 0 {
			bad("churn: weights must not be negative and not all zero")
		}
		if ch.Hop > 0 && len(c.Roster) == 0 && (c.Areas < 2 || c.Areas%2 != 0) {
			bad("churn with hops links Areas in pairs: areas %d must be even and at least 2 (or set the hop weight to 0)", c.Areas)
		}
		if c.Ramp <= 0 {
			bad("churn: players arrive over the ramp, which must be positive")
		}
	case PatternPortal:
		if len(c.Roster) == 0 && (c.Areas < 2 || c.Areas%2 != 0) {
			bad("pattern portal links Areas in pairs: areas %d must be even and at least 2", c.Areas)
		}
	default:
		bad("unknown pattern %q (one of %v)", c.Pattern, Patterns)
	}
	if c.Template != "" && (c.Pattern == PatternChurn || c.Pattern == PatternPortal) {
		bad("pattern %s walks the open floor: it takes no template (got %q)", c.Pattern, c.Template)
	}
	if c.Director == "" {
		bad("no director URL")
	}
	if len(c.Roster) == 0 && (c.Players < 1 || c.Areas < 1 || c.Areas > c.Players) {
		bad("players %d and areas %d: need 1 <= areas <= players", c.Players, c.Areas)
	}
	if c.Ramp < 0 || c.Duration <= 0 || c.Drain < 0 {
		bad("ramp %v, duration %v, drain %v: duration must be positive, the others not negative", c.Ramp, c.Duration, c.Drain)
	}
	if c.LoginConcurrency < 1 || c.JoinConcurrency < 1 {
		bad("login and join concurrency must be at least 1")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}

// Sessions caches session tokens by email. Safe for concurrent use.
type Sessions struct {
	mu sync.Mutex
	m  map[string]string // guarded by mu
}

// NewSessions returns an empty cache.
func NewSessions() *Sessions { return &Sessions{m: map[string]string{}} }

// Get returns the cached token of email, if any.
func (s *Sessions) Get(email string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[email]
	return t, ok
}

// Put caches token for email.
func (s *Sessions) Put(email, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[email] = token
}

// Forget drops the token of email (after the director refused it).
func (s *Sessions) Forget(email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, email)
}
