package content

import "slices"

// Bounds on a rule set.
const (
	// MaxPlayersLimit bounds a rule set's MaxPlayers.
	MaxPlayersLimit = 10000
	// TickRate is the simulation's ticks per second that every tick count
	// in the content (creature step and attack periods) assumes, and the
	// bound on a rule set's StepsPerSecond (one step per tick at most).
	TickRate = 20
	// DefaultPlayerHP and DefaultPlayerDamage are a rule set's player_hp
	// and player_damage when it leaves them out; MaxHP bounds any health.
	DefaultPlayerHP     = 100
	DefaultPlayerDamage = 5
	MaxHP               = 60000
	// DefaultMaxItems and DefaultChangesPerMinute are a rule set's
	// max_items and changes_per_minute when it leaves them out;
	// MaxItemsLimit and MaxChangesPerMinute bound them.
	DefaultMaxItems         = 20000
	DefaultChangesPerMinute = 120
	MaxItemsLimit           = 1 << 20
	MaxChangesPerMinute     = 6000
)

// Build says who may change an Area's items (place, take back, gather,
// use containers): rules.json's "build".
type Build uint8

// The build rules.
const (
	// BuildAnyone ("anyone", the default): every player.
	BuildAnyone Build = iota
	// BuildBuilders ("builders"): the Area's owner and the members it
	// named builders (a home).
	BuildBuilders
	// BuildNobody ("nobody"): no one (an arena).
	BuildNobody
	// BuildPlots ("plots"): every player, but placing and taking back only
	// on the plots the Area's map marks ([Map.Plots]: a village).
	BuildPlots
)

// RuleSet is what an Area allows. Systems consult it instead of branching
// on the Area's kind, so a new kind of Area is a new rule set, not new code.
// The rule sets are listed in rules.json:
//
//	{"rules": [
//	  {"name": "arena", "max_players": 64, "steps_per_second": 6, "diagonal": true,
//	   "creatures_hunt_players": true, "pvp": true, "line_of_sight": true, "sense_los": true}
//	]}
//
// name, max_players and steps_per_second are required; every flag left out
// is false; player_hp and player_damage default to [DefaultPlayerHP] and
// [DefaultPlayerDamage]. build ("anyone", "builders", "plots" or "nobody";
// default "anyone") says who may change the Area's items, max_items how
// many placed items it holds at most (default [DefaultMaxItems]),
// changes_per_minute how much one player may change a minute (default
// [DefaultChangesPerMinute]), carry which item kinds a character may
// carry in (left out: every kind; an empty list: none).
type RuleSet struct {
	// Name names the rule set; a rule set with a template of the same name
	// is an area kind ([Library.Kind]).
	Name string
	// MaxPlayers caps the players in the Area at once (1..[MaxPlayersLimit]).
	MaxPlayers int
	// StepsPerSecond is a player's movement budget (1..[TickRate]).
	StepsPerSecond int
	// Diagonal allows the four diagonal steps.
	Diagonal bool
	// CreaturesHuntPlayers lets creatures target players; where it is false
	// a creature that would hunt a player stands instead.
	CreaturesHuntPlayers bool
	// PvP lets players harm each other.
	PvP bool
	// LineOfSight limits a player's snapshots to what the player can see
	// (walls, trees and closed doors hide what is behind them).
	LineOfSight bool
	// SenseLOS makes creatures need line of sight to sense.
	SenseLOS bool
	// PlayerHP is a player's full health (1..[MaxHP]); a player at 0
	// comes back at a spawn point with it.
	PlayerHP int
	// PlayerDamage is the health a player's attack (an action on a
	// creature, or under PvP on a player) takes (0..[MaxHP]).
	PlayerDamage int
	// Build says who may change the Area's items.
	Build Build
	// MaxItems is how many placed items the Area holds at most
	// (1..[MaxItemsLimit]);
	// ChangesPerMinute how many places, takes and gatherings one player
	// makes a minute at most (1..[MaxChangesPerMinute]).
	MaxItems, ChangesPerMinute int
	// Carry, when not nil, names the only item kinds a character may carry
	// into the Area: the rest of its inventory waits in its stash while it
	// is here (an arena: nothing). Nil lets everything in.
	Carry []string
}

type rawRules struct {
	Name                 string    `json:"name"`
	MaxPlayers           *int      `json:"max_players"`
	StepsPerSecond       *int      `json:"steps_per_second"`
	Diagonal             bool      `json:"diagonal"`
	CreaturesHuntPlayers bool      `json:"creatures_hunt_players"`
	PvP                  bool      `json:"pvp"`
	LineOfSight          bool      `json:"line_of_sight"`
	SenseLOS             bool      `json:"sense_los"`
	PlayerHP             *int      `json:"player_hp"`
	PlayerDamage         *int      `json:"player_damage"`
	Build                string    `json:"build"`
	MaxItems             *int      `json:"max_items"`
	ChangesPerMinute     *int      `json:"changes_per_minute"`
	Carry                *[]string `json:"carry"`
}

// ruleSet checks a rules.json entry on its own.
func (r rawRules) ruleSet() (RuleSet, error) {
	if err := checkName("rule set", r.Name); err != nil {
		return RuleSet{}, err
	}
	switch {
	case r.MaxPlayers == nil:
		return RuleSet{}, invalidf("missing \"max_players\"")
	case r.StepsPerSecond == nil:
		return RuleSet{}, invalidf("missing \"steps_per_second\"")
	case *r.MaxPlayers < 1 || *r.MaxPlayers > MaxPlayersLimit:
		return RuleSet{}, invalidf("\"max_players\" is %d (1..%d)", *r.MaxPlayers, MaxPlayersLimit)
	case *r.StepsPerSecond < 1 || *r.StepsPerSecond > TickRate:
		return RuleSet{}, invalidf("\"steps_per_second\" is %d (1..%d)", *r.StepsPerSecond, TickRate)
	}
	hp, damage := DefaultPlayerHP, DefaultPlayerDamage
	if r.PlayerHP != nil {
		if hp = *r.PlayerHP; hp < 1 || hp > MaxHP {
			return RuleSet{}, invalidf("\"player_hp\" is %d (1..%d)", hp, MaxHP)
		}
	}
	if r.PlayerDamage != nil {
		if damage = *r.PlayerDamage; damage < 0 || damage > MaxHP {
			return RuleSet{}, invalidf("\"player_damage\" is %d (0..%d)", damage, MaxHP)
		}
	}
	var build Build
	switch r.Build {
	case "", "anyone":
	case "builders":
		build = BuildBuilders
	case "nobody":
		build = BuildNobody
	case "plots":
		build = BuildPlots
	default:
		return RuleSet{}, invalidf("\"build\" is %q (anyone, builders, plots or nobody)", r.Build)
	}
	var carry []string
	if r.Carry != nil {
		carry = make([]string, 0, len(*r.Carry))
		for _, name := range *r.Carry {
			if err := checkName("carry", name); err != nil {
				return RuleSet{}, err
			}
			if slices.Contains(carry, name) {
				return RuleSet{}, invalidf("\"carry\" names %q twice", name)
			}
			carry = append(carry, name)
		}
	}
	maxItems, changes := DefaultMaxItems, DefaultChangesPerMinute
	if r.MaxItems != nil {
		if maxItems = *r.MaxItems; maxItems < 1 || maxItems > MaxItemsLimit {
			return RuleSet{}, invalidf("\"max_items\" is %d (1..%d)", maxItems, MaxItemsLimit)
		}
	}
	if r.ChangesPerMinute != nil {
		if changes = *r.ChangesPerMinute; changes < 1 || changes > MaxChangesPerMinute {
			return RuleSet{}, invalidf("\"changes_per_minute\" is %d (1..%d)", changes, MaxChangesPerMinute)
		}
	}
	return RuleSet{
		Name: r.Name, MaxPlayers: *r.MaxPlayers, StepsPerSecond: *r.StepsPerSecond,
		Diagonal: r.Diagonal, CreaturesHuntPlayers: r.CreaturesHuntPlayers, PvP: r.PvP,
		LineOfSight: r.LineOfSight, SenseLOS: r.SenseLOS, PlayerHP: hp, PlayerDamage: damage,
		Build: build, MaxItems: maxItems, ChangesPerMinute: changes, Carry: carry,
	}, nil
}
