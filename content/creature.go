package content

import (
	"slices"
)

// Bounds on a creature kind.
const (
	maxHP          = 1_000_000
	maxSenseRadius = 64
	maxAttackTicks = 65535
)

// Creature is a kind of creature. The kinds are listed in creatures.json:
//
//	{"creatures": [
//	  {"name": "wolf", "hp": 30, "step_ticks": 4, "sense_radius": 10,
//	   "attack_damage": 6, "attack_ticks": 20, "hunts_players": true,
//	   "hunts": ["deer"], "wanders": true}
//	]}
//
// name, hp, step_ticks and sense_radius are required; attack_ticks is
// required when attack_damage is above 0; the rest default to zero, false
// and none.
type Creature struct {
	// Name names the kind; spawners refer to it.
	Name string
	// HP is a fresh creature's hit points (1..1,000,000).
	HP int
	// StepTicks is the ticks between two of its steps at [TickRate]
	// (1..255): 4 is five steps a second.
	StepTicks uint8
	// SenseRadius is how far it senses, in squares (0..64).
	SenseRadius int32
	// AttackDamage is the hit points one attack takes (0: it never attacks).
	AttackDamage int
	// AttackTicks is the ticks between two of its attacks at [TickRate]
	// (1..65535); 0 when AttackDamage is 0.
	AttackTicks uint16
	// HuntsPlayers: it chases and attacks players (where the rule set's
	// CreaturesHuntPlayers allows).
	HuntsPlayers bool
	// Hunts lists the creature kinds it chases and attacks, sorted.
	Hunts []string
	// Wanders: it strolls about when it has nothing to do.
	Wanders bool
}

type rawCreature struct {
	Name         string   `json:"name"`
	HP           *int     `json:"hp"`
	StepTicks    *int     `json:"step_ticks"`
	SenseRadius  *int     `json:"sense_radius"`
	AttackDamage int      `json:"attack_damage"`
	AttackTicks  int      `json:"attack_ticks"`
	HuntsPlayers bool     `json:"hunts_players"`
	Hunts        []string `json:"hunts"`
	Wanders      bool     `json:"wanders"`
}

// creature checks a creatures.json entry on its own (the kinds it hunts
// are checked by Load, against all kinds).
func (r rawCreature) creature() (Creature, error) {
	if err := checkName("creature", r.Name); err != nil {
		return Creature{}, err
	}
	switch {
	case r.HP == nil:
		return Creature{}, invalidf("missing \"hp\"")
	case r.StepTicks == nil:
		return Creature{}, invalidf("missing \"step_ticks\"")
	case r.SenseRadius == nil:
		return Creature{}, invalidf("missing \"sense_radius\"")
	case *r.HP < 1 || *r.HP > maxHP:
		return Creature{}, invalidf("\"hp\" is %d (1..%d)", *r.HP, maxHP)
	case *r.StepTicks < 1 || *r.StepTicks > 255:
		return Creature{}, invalidf("\"step_ticks\" is %d (1..255)", *r.StepTicks)
	case *r.SenseRadius < 0 || *r.SenseRadius > maxSenseRadius:
		return Creature{}, invalidf("\"sense_radius\" is %d (0..%d)", *r.SenseRadius, maxSenseRadius)
	case r.AttackDamage < 0 || r.AttackDamage > maxHP:
		return Creature{}, invalidf("\"attack_damage\" is %d (0..%d)", r.AttackDamage, maxHP)
	case r.AttackDamage > 0 && (r.AttackTicks < 1 || r.AttackTicks > maxAttackTicks):
		return Creature{}, invalidf("\"attack_ticks\" is %d (1..%d, required when attack_damage is above 0)", r.AttackTicks, maxAttackTicks)
	case r.AttackDamage == 0 && r.AttackTicks != 0:
		return Creature{}, invalidf("\"attack_ticks\" is %d but \"attack_damage\" is 0", r.AttackTicks)
	}
	hunts := slices.Clone(r.Hunts)
	slices.Sort(hunts)
	for i, h := range hunts {
		if err := checkName("hunts", h); err != nil {
			return Creature{}, err
		}
		if i > 0 && hunts[i-1] == h {
			return Creature{}, invalidf("\"hunts\" lists %q twice", h)
		}
	}
	return Creature{
		Name: r.Name, HP: *r.HP, StepTicks: uint8(*r.StepTicks), SenseRadius: int32(*r.SenseRadius),
		AttackDamage: r.AttackDamage, AttackTicks: uint16(r.AttackTicks),
		HuntsPlayers: r.HuntsPlayers, Hunts: hunts, Wanders: r.Wanders,
	}, nil
}
