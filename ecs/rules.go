package ecs

import "fmt"

// Kind is the kind of an Area; it picks the Area's default rule set.
type Kind uint8

// The Area kinds. Offline play is one more kind, not a second code path.
const (
	KindHome Kind = iota + 1
	KindVillage
	KindArena
	KindOffline
)

var kindNames = [...]string{KindHome: "home", KindVillage: "village", KindArena: "arena", KindOffline: "offline"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind returns the kind named s ("home", "village", "arena", "offline").
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("ecs: unknown area kind %q", s)
}

// Rules is an Area's rule set. Systems consult it instead of branching on
// the Area's kind, so a new kind is a new Rules value, not new code.
type Rules struct {
	Kind Kind
	// MaxPlayers caps the bodies of players in the Area at once.
	MaxPlayers int
	// StepsPerSecond is a player's movement budget.
	StepsPerSecond int
	// Diagonal allows the four diagonal steps.
	Diagonal bool
	// CreaturesHuntPlayers lets creatures target players; where it is false
	// a creature that would hunt a player stands instead.
	CreaturesHuntPlayers bool
	// PvP lets players harm each other.
	PvP bool
	// LineOfSight limits what a player is shown to what it can see.
	LineOfSight bool
	// SenseLOS makes creatures need line of sight to sense.
	SenseLOS bool
	// PlayerHP is a player's full health; PlayerDamage what its attack
	// takes. Zero PlayerHP means the default, 100.
	PlayerHP, PlayerDamage uint16
}

// DefaultPlayerHP is a player's full health where the rules leave it out.
const DefaultPlayerHP = 100

// FullHP returns a player's full health under r.
func (r Rules) FullHP() uint16 {
	if r.PlayerHP == 0 {
		return DefaultPlayerHP
	}
	return r.PlayerHP
}

// RulesFor returns the default rule set of kind k.
func RulesFor(k Kind) Rules {
	switch k {
	case KindHome:
		return Rules{Kind: k, MaxPlayers: 8, StepsPerSecond: 5, Diagonal: true}
	case KindArena:
		return Rules{Kind: k, MaxPlayers: 64, StepsPerSecond: 6, Diagonal: true, CreaturesHuntPlayers: true, PvP: true}
	case KindOffline:
		return Rules{Kind: k, MaxPlayers: 1, StepsPerSecond: 5, Diagonal: true, CreaturesHuntPlayers: true}
	default: // village and anything unnamed
		return Rules{Kind: KindVillage, MaxPlayers: 64, StepsPerSecond: 5, Diagonal: true}
	}
}

// Validate reports a rule set that no Area can run with.
func (r Rules) Validate() error {
	if r.MaxPlayers < 1 {
		return fmt.Errorf("ecs: rules: max players %d < 1", r.MaxPlayers)
	}
	if r.StepsPerSecond < 1 {
		return fmt.Errorf("ecs: rules: steps per second %d < 1", r.StepsPerSecond)
	}
	return nil
}

// StepPeriod converts the rule's steps per second into ticks between steps
// at the given tick rate (at least 1).
func (r Rules) StepPeriod(tickRate int) uint8 {
	p := tickRate / r.StepsPerSecond
	if p < 1 {
		p = 1
	}
	if p > 255 {
		p = 255
	}
	return uint8(p)
}
