package build

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/creature"
	"github.com/leyworks/ley/systems/items"
	"github.com/leyworks/ley/systems/persist"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

// Templates an Area is built from without a map.
const (
	// TemplateEmpty is an open floor of the asked W x H with players only:
	// no walls, objects or creatures (benchmarks and players-only loads).
	TemplateEmpty = "empty"
	// TemplateNone is an Area whose director named no template: an open
	// floor of W x H with a few wanderers (from Seed), as before
	// templates existed. A director always names one; tests that drive a
	// host directly use this.
	TemplateNone = ""
)

// Spec says which Area to build.
type Spec struct {
	ID ecs.AreaID
	// Kind names the Area's rule set; Template its content template (or
	// TemplateEmpty, TemplateNone). A template's map gives the size; W and
	// H are used only without one.
	Kind, Template string
	W, H           int
	// Seed picks the wanderers of a TemplateNone Area, so that a rebuilt
	// Area is the same Area.
	Seed     uint64
	TickRate int
	// CellSize is the spatial hash's cell side, in squares.
	CellSize int
	// Portals are the squares that lead to other Areas: shown as objects
	// (a map portal keeps its map id), and never crossed by a planned walk
	// on its way.
	Portals []Square
	// Into, when set, is a parked Area (ecs.Area.Park) to build in, in
	// place of a new one: the Area a parked Area's restore builds again.
	Into *ecs.Area
}

// Square is one square of the grid.
type Square struct{ X, Y int32 }

// Built is an Area made from content, with the engine parts the host and
// the browser engine reach: its systems are in place (intake, movement,
// wander, the creature system where the map has spawners, the action
// system), its grid laid, its map's objects standing.
type Built struct {
	Area *ecs.Area
	Hash *spatial.Hash
	Map  *statics.Map
	// Creatures is the creature system, nil where the map has no spawner.
	Creatures *creature.System
	Action    *action.System
	// Items is the item system: inventories, placed items, containers.
	Items *items.System
	// Kinds are the Area's creature kinds: a creature's look k > 0 is
	// Kinds[k-1].
	Kinds []content.Creature
	// RuleSet is the content rule set the Area runs by.
	RuleSet content.RuleSet
	// Template is the Area's template, nil for TemplateEmpty and
	// TemplateNone.
	Template *content.Template

	none bool // TemplateNone: Populate spawns wanderers
	seed uint64
}

// Area builds the Area s names from lib. The result is frozen: a Clock
// (or its caller's Step) runs it.
func Area(lib *content.Library, s Spec) (*Built, error) {
	b := &Built{}
	w, h := s.W, s.H
	switch s.Template {
	case TemplateEmpty, TemplateNone:
		rs, err := lib.Kind(s.Kind)
		if err != nil {
			return nil, err
		}
		b.RuleSet = rs
	default:
		tpl, err := lib.Template(s.Template)
		if err != nil {
			return nil, err
		}
		if s.Kind != "" && s.Kind != tpl.Rules.Name {
			return nil, fmt.Errorf("build: area %d: template %q has rules %q, not the kind %q", s.ID, tpl.Name, tpl.Rules.Name, s.Kind)
		}
		b.Template, b.RuleSet = &tpl, tpl.Rules
		w, h = tpl.Map.W, tpl.Map.H
	}
	cfg := ecs.Config{ID: s.ID, Rules: Rules(b.RuleSet), W: w, H: h, TickRate: s.TickRate}
	a := s.Into
	var err error
	if a != nil {
		err = a.Renew(cfg)
	} else {
		a, err = ecs.NewArea(cfg)
	}
	if err != nil {
		return nil, err
	}
	b.Area = a
	if b.Hash, err = spatial.Attach(a, s.CellSize); err != nil {
		return nil, err
	}
	b.Map = statics.New(a.Grid, b.Hash)
	if b.Template != nil {
		if err := b.Map.LayMap(b.Template.Map); err != nil {
			return nil, err
		}
		for _, sp := range b.Template.Map.Spawners {
			if b.look(sp.Creature) > 0 {
				continue
			}
			c, err := lib.Creature(sp.Creature)
			if err != nil {
				return nil, err
			}
			b.Kinds = append(b.Kinds, c)
		}
	}
	g := a.Grid
	for _, p := range s.Portals {
		if !g.In(p.X, p.Y) {
			continue
		}
		var id uint32
		if b.Template != nil {
			if mp, ok := b.Template.Map.PortalAt(int(p.X), int(p.Y)); ok {
				id = uint32(mp.ID)
			}
		}
		b.Map.AddPortal(p.X, p.Y, id)
		g.SetStop(g.Cell(p.X, p.Y)) // a planned walk crosses a portal only as its target
	}
	sys := systems.Default()
	if cfg, ok := b.creatureConfig(a.TickRate); ok {
		b.Creatures = &creature.System{Config: cfg, Hash: b.Hash}
		sys = append(sys, b.Creatures)
	}
	icfg, err := itemConfig(lib, b.RuleSet)
	if err != nil {
		return nil, err
	}
	b.Items = &items.System{Map: b.Map, Config: icfg}
	if b.Template != nil {
		b.Items.Plots = b.Template.Map.Plots
	}
	b.Action = &action.System{Map: b.Map, Items: b.Items}
	if b.Creatures != nil {
		b.Action.FloorChanged = b.Creatures.FloorChanged
		b.Items.FloorChanged = b.Creatures.FloorChanged
	}
	sys = append(sys, b.Action, b.Items)
	if err := a.Use(sys...); err != nil {
		return nil, err
	}
	b.none, b.seed = s.Template == TemplateNone, s.Seed
	return b, nil
}

// Populate gives a fresh Area (one with no stored state to Load) its first
// bodies: a TemplateNone Area's wanderers, from its Seed, so that a
// rebuilt Area is the same Area. Other templates need none: their
// spawners make their creatures.
func (b *Built) Populate() {
	if b.none {
		populate(b.Area, b.seed)
	}
}

// Rules is a content rule set as the engine takes it. A rule set of a
// name the engine has no kind for (an operator's own) runs as a village.
func Rules(rs content.RuleSet) ecs.Rules {
	k, err := ecs.ParseKind(rs.Name)
	if err != nil {
		k = ecs.KindVillage
	}
	return ecs.Rules{
		Kind: k, MaxPlayers: rs.MaxPlayers, StepsPerSecond: rs.StepsPerSecond, Diagonal: rs.Diagonal,
		CreaturesHuntPlayers: rs.CreaturesHuntPlayers, PvP: rs.PvP, LineOfSight: rs.LineOfSight, SenseLOS: rs.SenseLOS,
		PlayerHP: uint16(rs.PlayerHP), PlayerDamage: uint16(rs.PlayerDamage),
	}
}

// itemConfig is the item system's configuration for an Area of rule set
// rs: the content's item catalogue (one for all its Areas) and starter
// kit, and the rule set's build rule, bounds and carry rule (the plots
// come from the Area's map).
func itemConfig(lib *content.Library, rs content.RuleSet) (items.Config, error) {
	cat, err := items.CatalogOf(lib)
	if err != nil {
		return items.Config{}, err
	}
	cfg := items.Config{Catalog: cat, Starter: lib.Starter(), MaxItems: rs.MaxItems, ChangesPerMinute: rs.ChangesPerMinute, Carry: rs.Carry}
	switch rs.Build {
	case content.BuildBuilders:
		cfg.Build = items.BuildBuilders
	case content.BuildNobody:
		cfg.Build = items.BuildNobody
	case content.BuildPlots:
		cfg.Build = items.BuildPlots
	}
	return cfg, nil
}

// look is the creature kind's look code in this Area (0: not one of its
// kinds).
func (b *Built) look(name string) uint16 {
	for i := range b.Kinds {
		if b.Kinds[i].Name == name {
			return uint16(i + 1)
		}
	}
	return 0
}

// creatureConfig turns the map's spawners and creature kinds into the
// creature system's configuration, with the content's tick counts (at
// content.TickRate) scaled to the Area's tick rate. ok is false for an
// Area without spawners (no creature system: nothing to pay for).
func (b *Built) creatureConfig(tickRate int) (creature.Config, bool) {
	if b.Template == nil || len(b.Template.Map.Spawners) == 0 {
		return creature.Config{}, false
	}
	ticks := func(n int) int { return max(1, int(math.Round(float64(n)*float64(tickRate)/content.TickRate))) }
	var cfg creature.Config
	for _, k := range b.Kinds {
		ck := creature.Kind{
			HP: uint16(k.HP), Period: uint8(min(ticks(int(k.StepTicks)), 255)), Sense: k.SenseRadius,
			Damage: uint16(k.AttackDamage), AttackEvery: uint16(min(ticks(int(k.AttackTicks)), math.MaxUint16)),
			HuntsPlayers: k.HuntsPlayers, Wanders: k.Wanders,
		}
		for _, prey := range k.Hunts {
			if look := b.look(prey); look > 0 {
				ck.Prey = append(ck.Prey, look)
			}
		}
		cfg.Kinds = append(cfg.Kinds, ck)
	}
	for _, sp := range b.Template.Map.Spawners {
		cfg.Spawners = append(cfg.Spawners, creature.Spawner{
			X: sp.X, Y: sp.Y, W: sp.W, H: sp.H, Kind: b.look(sp.Creature), Count: sp.Count,
			Respawn: uint32(max(1, int(sp.Respawn.Seconds()*float64(tickRate)))), Leash: sp.Leash,
		})
	}
	return cfg, true
}

// populate gives a fresh Area its first content: a few wanderers, from the
// seed the director chose, so that a rebuilt Area is the same Area.
func populate(a *ecs.Area, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0xa5ea))
	n := a.Grid.Len() / 256
	for i := 0; i < n; i++ {
		x, y := rng.Int32N(a.Grid.W()), rng.Int32N(a.Grid.H())
		_, _ = a.SpawnWanderer(x, y, rng.Uint32(), 4, 3) // a taken square just means one fewer
	}
}

// Save encodes the Area's durable state (its wanderers, creatures, doors
// and items) as a blob.
func (b *Built) Save() ([]byte, error) {
	var doors []persist.Door
	for _, o := range b.Map.Objects() {
		if o.Kind == wire.ObjectDoor && o.Item == 0 { // a placed door keeps its state with the item
			doors = append(doors, persist.Door{ID: o.ID, Open: o.Open})
		}
	}
	return persist.Save(b.Area, doors, b.Items.Save())
}

// Load puts back what blob kept: its wanderers, its doors' states and its
// creatures. It returns how many creatures of the blob the map has no
// place for now (the content changed): their spawners make new ones.
func (b *Built) Load(blob []byte) (leftOut int, err error) {
	st, err := persist.Load(b.Area, blob, b.Items.Load)
	if err != nil {
		return 0, err
	}
	for _, d := range st.Doors {
		b.Map.SetDoor(d.ID, d.Open)
	}
	for _, c := range st.Creatures {
		if b.Creatures == nil || int(c.Spawner) >= len(b.Creatures.Config.Spawners) || b.Creatures.Config.Spawners[c.Spawner].Kind != c.Kind {
			leftOut++
			continue
		}
		e, err := b.Creatures.Spawn(b.Area, int(c.Spawner), int(c.X), int(c.Y))
		if err != nil {
			leftOut++
			continue
		}
		h, _ := b.Area.HealthOf(e)
		b.Area.SetHealth(e, ecs.Health{HP: min(c.HP, h.Max), Max: h.Max})
	}
	return leftOut, nil
}
