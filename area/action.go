package area

import (
	"math"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/creature"
	"github.com/leyworks/ley/systems/persist"
)

// creatureConfig turns the Area's map spawners and creature kinds into
// the creature system's configuration, with the content's tick counts
// (at content.TickRate) scaled to the Area's tick rate. ok is false for an
// Area without spawners (no creature system: nothing to pay for).
func creatureConfig(w *world, tickRate int) (creature.Config, bool) {
	if w.tpl == nil || len(w.tpl.Map.Spawners) == 0 {
		return creature.Config{}, false
	}
	ticks := func(n int) int { return max(1, int(math.Round(float64(n)*float64(tickRate)/20))) }
	var cfg creature.Config
	for _, k := range w.kinds {
		ck := creature.Kind{
			HP: uint16(k.HP), Period: uint8(min(ticks(int(k.StepTicks)), 255)), Sense: k.SenseRadius,
			Damage: uint16(k.AttackDamage), AttackEvery: uint16(min(ticks(int(k.AttackTicks)), math.MaxUint16)),
			HuntsPlayers: k.HuntsPlayers, Wanders: k.Wanders,
		}
		for _, prey := range k.Hunts {
			if look := w.look(prey); look > 0 {
				ck.Prey = append(ck.Prey, look)
			}
		}
		cfg.Kinds = append(cfg.Kinds, ck)
	}
	for _, sp := range w.tpl.Map.Spawners {
		cfg.Spawners = append(cfg.Spawners, creature.Spawner{
			X: sp.X, Y: sp.Y, W: sp.W, H: sp.H, Kind: w.look(sp.Creature), Count: sp.Count,
			Respawn: uint32(max(1, int(sp.Respawn.Seconds()*float64(tickRate)))), Leash: sp.Leash,
		})
	}
	return cfg, true
}

// restoreState puts back what the Area's last blob kept beside its wanderers:
// its doors' states and its creatures. A door or creature the map no
// longer has a place for (the content changed) is left out.
func (ha *hostArea) restoreState(st persist.State) {
	g := ha.a.Grid
	w := ha.world
	for _, d := range st.Doors {
		for i := range w.objects {
			if o := &w.objects[i]; o.id == d.ID && o.kind == wire.ObjectDoor && o.open != d.Open {
				o.open = d.Open
				w.mark(g, i)
			}
		}
	}
	left := 0
	for _, c := range st.Creatures {
		if ha.creatures == nil || int(c.Spawner) >= len(ha.creatures.Config.Spawners) || ha.creatures.Config.Spawners[c.Spawner].Kind != c.Kind {
			left++
			continue
		}
		e, err := ha.creatures.Spawn(ha.a, int(c.Spawner), int(c.X), int(c.Y))
		if err != nil {
			left++
			continue
		}
		h, _ := ha.a.HealthOf(e)
		ha.a.SetHealth(e, ecs.Health{HP: min(c.HP, h.Max), Max: h.Max})
	}
	if left > 0 {
		ha.h.log.Warn("creatures of the stored area have no place in its map now; their spawners make new ones", "area", ha.id, "left_out", left)
	}
}

// doors returns the Area's doors' states for its blob.
func (ha *hostArea) doors() []persist.Door {
	var out []persist.Door
	for i := range ha.world.objects {
		if o := &ha.world.objects[i]; o.kind == wire.ObjectDoor {
			out = append(out, persist.Door{ID: o.id, Open: o.open})
		}
	}
	return out
}

// act carries out body e's action on the square next to it in direction
// d (the Area's OnAction hook): it attacks the body there (a creature; a
// player where the rules allow PvP), or opens or closes the door there.
func (ha *hostArea) act(a *ecs.Area, e ecs.Entity, d ecs.Dir) ecs.Outcome {
	pos := ha.positions.Get(e)
	if pos == nil {
		return ecs.OutcomeEntityGone
	}
	dx, dy := d.Delta()
	x, y := pos.X+dx, pos.Y+dy
	g := a.Grid
	if !g.In(x, y) {
		return ecs.OutcomeOutOfBounds
	}
	c := g.Cell(x, y)
	if t, ok := a.EntityAt(c); ok {
		return ha.attack(a, t)
	}
	if i := ha.world.objAt[c]; i > 0 {
		if o := &ha.world.objects[i-1]; o.kind == wire.ObjectDoor {
			ha.toggle(int(i-1), c)
			return ecs.OutcomeApplied
		}
	}
	return ecs.OutcomeNothingThere
}

// attack hurts body t with a player's attack, if t can be hurt by one.
func (ha *hostArea) attack(a *ecs.Area, t ecs.Entity) ecs.Outcome {
	if _, ok := a.HealthOf(t); !ok {
		return ecs.OutcomeNothingThere // a wanderer: nothing to hurt
	}
	if ha.players.Has(t) {
		if !a.Rules.PvP {
			return ecs.OutcomeNotAllowed
		}
		if a.InTransit(t) {
			return ecs.OutcomeNotAllowed // crossing a portal: out of reach
		}
	}
	a.Hurt(t, a.Rules.PlayerDamage)
	return ecs.OutcomeApplied
}

// toggle opens or closes door i on square c, for everyone: the grid (bodies
// and sight), the flow fields that cross it and the map version clients
// are sent.
func (ha *hostArea) toggle(i int, c ecs.Cell) {
	w := ha.world
	o := &w.objects[i]
	o.open = !o.open
	w.mark(ha.a.Grid, i)
	if ha.creatures != nil {
		ha.creatures.FloorChanged(c)
	}
	ha.bcast.staticChanged(ha.bcast.hash.CellOf(c))
}

// died handles a body whose health ran out (the Area's OnDeath hook): a
// player comes back at a spawn point with full health (its crossing, walk
// and queued intents as they were); anything else leaves the world.
func (ha *hostArea) died(a *ecs.Area, e ecs.Entity) {
	if !ha.players.Has(e) {
		a.Despawn(e)
		return
	}
	h, _ := a.HealthOf(e)
	pos := ha.positions.Get(e)
	g := a.Grid
	x, y := g.W()/2, g.H()/2
	if sx, sy, ok := ha.world.spawnPoint(g, int(ha.respawns)); ok {
		x, y = sx, sy
	}
	ha.respawns++
	if fx, fy, ok := ha.nearestFree(x, y); ok {
		a.MoveBody(e, pos, fx, fy)
	}
	if p := ha.paths.Get(e); p != nil {
		p.Clear()
	}
	a.SetHealth(e, ecs.Health{HP: h.Max, Max: h.Max})
}
