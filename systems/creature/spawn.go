package creature

import "github.com/leyworks/ley/ecs"

// spawnTries is how many random squares of a spawner's area are tried
// before the area is searched in order.
const spawnTries = 8

// spawn runs at the barrier: it puts each spawner's pending creatures on
// free squares of its area, else on the free squares nearest its centre
// within its leash.
func (s *System) spawn(a *ecs.Area) {
	for i := range s.Config.Spawners {
		for ; s.pending[i] > 0; s.pending[i]-- {
			x, y, ok := s.place(a, &s.Config.Spawners[i])
			if !ok {
				s.pending[i] = 0 // no room now: the next tick tries again
				break
			}
			if _, err := s.Spawn(a, i, x, y); err != nil {
				break
			}
		}
	}
}

// Spawn puts a creature of spawner i on (x, y) with its kind's full health
// and pace. The host uses it to restore a persisted creature (then sets
// its health); the system uses it for every spawn. It fails like
// ecs.Area.SpawnCreature.
func (s *System) Spawn(a *ecs.Area, i, x, y int) (ecs.Entity, error) {
	sp := &s.Config.Spawners[i]
	k := &s.Config.Kinds[sp.Kind-1]
	s.seed = xorshift(s.seed)
	c := ecs.Creature{Kind: sp.Kind, Spawner: uint16(i), Goal: -1, Seed: s.seed | 1}
	e, err := a.SpawnCreature(int32(x), int32(y), c, max(k.Period, 1))
	if err != nil {
		return e, err
	}
	a.SetHealth(e, ecs.Health{HP: k.HP, Max: k.HP})
	s.Spawned++
	return e, nil
}

// place picks a free square for a creature of sp.
func (s *System) place(a *ecs.Area, sp *Spawner) (int, int, bool) {
	g := a.Grid
	for range spawnTries {
		s.seed = xorshift(s.seed)
		x, y := sp.X+int32(s.seed%uint32(sp.W)), sp.Y+int32((s.seed>>16)%uint32(sp.H))
		if g.Free(g.Cell(x, y)) {
			return int(x), int(y), true
		}
	}
	for y := sp.Y; y < sp.Y+sp.H; y++ {
		for x := sp.X; x < sp.X+sp.W; x++ {
			if g.Free(g.Cell(x, y)) {
				return int(x), int(y), true
			}
		}
	}
	hx, hy := sp.centre()
	for r := int32(1); r <= max(sp.Leash, 1); r++ {
		for y := hy - r; y <= hy+r; y++ {
			for x := hx - r; x <= hx+r; x++ {
				if max(abs(x-hx), abs(y-hy)) == r && g.In(x, y) && g.Free(g.Cell(x, y)) {
					return int(x), int(y), true
				}
			}
		}
	}
	return 0, 0, false
}
