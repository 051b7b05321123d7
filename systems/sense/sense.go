package sense

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/fov"
	"github.com/leyworks/ley/systems/spatial"
)

// Sensed is one emitter perceived from a square.
type Sensed struct {
	Entity ecs.Entity
	// Square is where the hash last saw the emitter.
	Square ecs.Cell
	// Dist is the Chebyshev distance in squares.
	Dist int32
	// Strength is the perceived strength (see Perceived), > 0.
	Strength int32
}

// Perceived is an emitter's strength as perceived d squares away (Chebyshev
// distance): strength*(radius-d)/radius, 0 from radius on.
func Perceived(em ecs.Emitter, d int32) int32 {
	r := int32(em.Radius)
	if d < 0 || d >= r {
		return 0
	}
	return int32(em.Strength) * (r - d) / r
}

// Sensor answers sensing queries over one Area's spatial hash. It belongs
// to the goroutine ticking the Area; its scratch makes queries
// allocation-free.
type Sensor struct {
	hash   *spatial.Hash
	world  *ecs.World
	grid   *ecs.Grid
	emit   ecs.Map[ecs.Emitter]
	caster *fov.Caster
	cells  []int32
	found  []Sensed
	// Reach bounds the queries: the largest Radius of any emitter (the
	// System keeps it up to date). Emitters farther than Reach are never
	// visited.
	Reach int32
}

// NewSensor returns a Sensor over Area a's hash h.
func NewSensor(a *ecs.Area, h *spatial.Hash) (*Sensor, error) {
	c, err := fov.New(a.Grid.Layer(ecs.LayerFloor), int(a.Grid.W()), int(a.Grid.H()))
	if err != nil {
		return nil, err
	}
	return &Sensor{
		hash: h, world: &a.World, grid: a.Grid,
		emit:   ecs.NewMap[ecs.Emitter](&a.World),
		caster: c,
		cells:  make([]int32, 0, 64),
		found:  make([]Sensed, 0, 16),
	}, nil
}

// Caster returns the Sensor's line-of-sight caster (over the floor layer).
func (s *Sensor) Caster() *fov.Caster { return s.caster }

// Sense appends to dst every emitter perceived from (x, y), in no
// particular order, and returns it; los keeps only those in line of sight.
// Cost: the hash cells within Reach plus the emitters in them; it
// allocates only when dst is too small.
func (s *Sensor) Sense(x, y int32, los bool, dst []Sensed) []Sensed {
	if s.Reach <= 0 {
		return dst
	}
	s.cells = s.hash.CellsWithin(x, y, s.Reach-1, s.cells[:0])
	h := s.hash
	for _, hc := range s.cells {
		for id := h.First(hc); id >= 0 && h.Marked(id); id = h.Next(id) {
			e := h.Entity(id)
			if !s.world.Alive(e) {
				continue
			}
			em := s.emit.GetUnchecked(e)
			if em == nil {
				continue
			}
			sq := h.Square(id)
			ex, ey := s.grid.XY(sq)
			d := max(abs(ex-x), abs(ey-y))
			p := Perceived(*em, d)
			if p <= 0 {
				continue
			}
			if los && !s.caster.LineOfSight(x, y, ex, ey) {
				continue
			}
			dst = append(dst, Sensed{Entity: e, Square: sq, Dist: d, Strength: p})
		}
	}
	return dst
}

// Strongest returns the emitter perceived strongest from (x, y) (the
// nearest among equals, then the lowest entity ID), and false if none is
// perceived. It uses the Sensor's own scratch and allocates nothing once
// that has grown to the most emitters perceived at once.
func (s *Sensor) Strongest(x, y int32, los bool) (Sensed, bool) {
	s.found = s.Sense(x, y, los, s.found[:0])
	best, ok := Sensed{}, false
	for _, c := range s.found {
		if !ok || c.Strength > best.Strength || (c.Strength == best.Strength &&
			(c.Dist < best.Dist || (c.Dist == best.Dist && c.Entity.ID() < best.Entity.ID()))) {
			best, ok = c, true
		}
	}
	return best, ok
}

// Nearest returns the perceived emitter nearest to (x, y) (the strongest
// among equals, then the lowest entity ID), and false if none is
// perceived. It uses the Sensor's own scratch and allocates nothing once
// that has grown to the most emitters perceived at once.
func (s *Sensor) Nearest(x, y int32, los bool) (Sensed, bool) {
	s.found = s.Sense(x, y, los, s.found[:0])
	best, ok := Sensed{}, false
	for _, c := range s.found {
		if !ok || c.Dist < best.Dist || (c.Dist == best.Dist &&
			(c.Strength > best.Strength || (c.Strength == best.Strength && c.Entity.ID() < best.Entity.ID()))) {
			best, ok = c, true
		}
	}
	return best, ok
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
