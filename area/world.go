package area

import (
	"fmt"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

// Templates a host builds without a map.
const (
	// templateEmpty is an open floor of the Area's W x H with players only:
	// no walls, objects or creatures (benchmarks and players-only loads).
	templateEmpty = "empty"
	// templateNone is an Area whose director named no template: an open
	// floor of W x H with a few wanderers, as before templates existed.
	// A director always names one (its store defaults it to the kind's);
	// tests that drive a host directly use this.
	templateNone = ""
)

// world is what an Area's template built that the ECS does not hold: the
// ground clients draw, the static objects, where players appear and the
// creature kinds.
type world struct {
	tpl      *content.Template // nil: no map
	ground   []uint8           // per square: its wire floor kind
	objects  []worldObject
	objAt    []int32   // per square: index into objects + 1, or 0
	cellObjs [][]int32 // per hash cell: its objects' indexes, in map order
	spawns   []ecs.Cell
	kinds    []content.Creature // the Area's creature kinds; a creature's look is its index + 1
}

// worldObject is one static object of the Area: a door, a tree, a sign, a
// rock, a chest, or a portal square.
type worldObject struct {
	id   uint32
	kind uint16 // a wire.Object* kind
	x, y int32
	open bool   // a door's state
	text string // a sign's words
}

// blocks reports whether o stops bodies now.
func (o *worldObject) blocks() bool {
	switch o.kind {
	case wire.ObjectDoor:
		return !o.open
	case wire.ObjectPortal:
		return false
	}
	return true
}

// blocksSight reports whether o stops line of sight now.
func (o *worldObject) blocksSight() bool {
	switch o.kind {
	case wire.ObjectDoor:
		return !o.open
	case wire.ObjectTree:
		return true
	}
	return false
}

// state is o's state on the wire.
func (o *worldObject) state() uint8 {
	if o.open {
		return 1
	}
	return 0
}

// areaPlan is what an Area will be, decided before its ECS world exists:
// its rules, size and template.
type areaPlan struct {
	tpl   *content.Template
	rules ecs.Rules
	w, h  int
	kind  string
	none  bool // templateNone: wanderers on an open floor
}

// planArea resolves a spawn's template in lib: a named template's map
// gives the size (a different W x H from the director is the map's now:
// an Area stored before templates had one), "empty" and "" give an open
// floor of the asked size with the kind's rules.
func planArea(lib *content.Library, m *control.SpawnArea) (areaPlan, error) {
	switch m.Template {
	case templateEmpty, templateNone:
		rs, err := lib.Kind(m.Kind)
		if err != nil {
			return areaPlan{}, err
		}
		return areaPlan{rules: ecsRules(rs), w: m.W, h: m.H, kind: rs.Name, none: m.Template == templateNone}, nil
	}
	tpl, err := lib.Template(m.Template)
	if err != nil {
		return areaPlan{}, err
	}
	if m.Kind != "" && m.Kind != tpl.Rules.Name {
		return areaPlan{}, fmt.Errorf("area %d: template %q has rules %q, not the kind %q", m.Area, tpl.Name, tpl.Rules.Name, m.Kind)
	}
	return areaPlan{tpl: &tpl, rules: ecsRules(tpl.Rules), w: tpl.Map.W, h: tpl.Map.H, kind: tpl.Rules.Name}, nil
}

// ecsRules is a content rule set as the engine takes it. A rule set of a
// name the engine has no kind for (an operator's own) runs as a village.
func ecsRules(rs content.RuleSet) ecs.Rules {
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

// buildWorld lays the plan's map onto a's fresh grid: floors that bodies
// cannot cross, walls, objects (blocking and hiding as their state says)
// and spawn points; and lists the creature kinds its spawners use. Without
// a map the ground is grass and nothing else is placed.
func buildWorld(a *ecs.Area, lib *content.Library, p areaPlan) (*world, error) {
	g := a.Grid
	w := &world{tpl: p.tpl, ground: make([]uint8, g.Len()), objAt: make([]int32, g.Len())}
	if p.tpl == nil {
		for i := range w.ground {
			w.ground[i] = wire.FloorGrass
		}
		return w, nil
	}
	m := p.tpl.Map
	if m.W != int(g.W()) || m.H != int(g.H()) {
		return nil, fmt.Errorf("map %s is %dx%d, the grid %dx%d", m.Path, m.W, m.H, g.W(), g.H())
	}
	floor := g.Layer(ecs.LayerFloor)
	for i, fk := range m.Floor {
		w.ground[i] = uint8(fk)
		if !fk.Walkable() {
			floor[i] = ecs.FloorWall // void and water: nothing stands there; light crosses
		}
		if m.Wall[i] {
			g.SetWall(ecs.Cell(i))
			w.ground[i] = wire.FloorWall
		}
	}
	for _, o := range m.Objects {
		w.add(worldObject{id: uint32(o.ID), kind: uint16(o.Class), x: o.X, y: o.Y, open: o.Open, text: o.Text})
	}
	for _, sp := range m.Spawns {
		w.spawns = append(w.spawns, g.Cell(sp.X, sp.Y))
	}
	for _, sp := range m.Spawners {
		if w.look(sp.Creature) > 0 {
			continue
		}
		c, err := lib.Creature(sp.Creature)
		if err != nil {
			return nil, err
		}
		w.kinds = append(w.kinds, c)
	}
	for i := range w.objects {
		w.mark(g, i)
	}
	return w, nil
}

// look is the creature kind's look code in this Area (0: not one of its
// kinds).
func (w *world) look(name string) uint16 {
	for i := range w.kinds {
		if w.kinds[i].Name == name {
			return uint16(i + 1)
		}
	}
	return 0
}

// add appends an object to the table; the caller marks the grid.
func (w *world) add(o worldObject) {
	w.objects = append(w.objects, o)
}

// mark writes object i's state into the grid: a blocking object's square
// cannot be crossed, a hiding one's cannot be seen through.
func (w *world) mark(g *ecs.Grid, i int) {
	o := &w.objects[i]
	c := g.Cell(o.x, o.y)
	w.objAt[c] = int32(i) + 1
	if w.ground[c] == wire.FloorWall {
		return // the loader keeps objects off walls
	}
	floor, sight := ecs.FloorOpen, int32(1)
	if o.blocks() || !content.FloorKind(w.ground[c]).Walkable() {
		floor = ecs.FloorWall
	}
	if o.blocksSight() {
		sight = 0
	}
	g.Set(ecs.LayerFloor, c, floor)
	g.Set(ecs.LayerSight, c, sight)
}

// indexCells lists each object under its hash cell, for the static
// messages: after buildWorld and addPortals.
func (w *world) indexCells(cellOf func(x, y int32) int32, cells int) {
	w.cellObjs = make([][]int32, cells)
	for i := range w.objects {
		o := &w.objects[i]
		hc := cellOf(o.x, o.y)
		w.cellObjs[hc] = append(w.cellObjs[hc], int32(i))
	}
}

// addPortals shows the Area's live portals as objects (a client sees where
// they are). A map portal keeps its map id; one set by an admin on a square
// of no map object gets an id past every map id.
func (w *world) addPortals(g *ecs.Grid, ps []control.Portal) {
	next := uint32(1 << 24)
	for _, p := range ps {
		if !g.In(p.X, p.Y) {
			continue
		}
		c := g.Cell(p.X, p.Y)
		if w.objAt[c] != 0 {
			continue // a map object already stands there (the loader keeps portals off objects)
		}
		id := next
		if w.tpl != nil {
			if mp, ok := w.tpl.Map.PortalAt(int(p.X), int(p.Y)); ok {
				id = uint32(mp.ID)
			}
		}
		if id == next {
			next++
		}
		w.objects = append(w.objects, worldObject{id: id, kind: wire.ObjectPortal, x: p.X, y: p.Y})
		w.objAt[c] = int32(len(w.objects))
	}
}

// spawnPoint returns the i-th spawn point (wrapping), or false if the map
// has none.
func (w *world) spawnPoint(g *ecs.Grid, i int) (int32, int32, bool) {
	if len(w.spawns) == 0 {
		return 0, 0, false
	}
	x, y := g.XY(w.spawns[i%len(w.spawns)])
	return x, y, true
}
