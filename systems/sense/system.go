package sense

import (
	"fmt"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/spatial"
)

// System is the ECS system "sense": it keeps every emitter in the Area's
// spatial hash (see spatial.Attach), marked, at its current square, and the
// Sensor's Reach at the largest emitter radius. It must run before the
// systems that sense. Cost per tick: O(emitters).
type System struct {
	// CellSize is the spatial hash's cell side if the Area has no hash yet
	// (0: whatever the Area has, or spatial.DefaultCellSize).
	CellSize int

	sensor *Sensor
	filter *ecs.Filter2[ecs.Position, ecs.Emitter]
}

// Name implements ecs.System.
func (*System) Name() string { return "sense" }

// Init implements ecs.System.
func (s *System) Init(a *ecs.Area) error {
	h, err := spatial.Attach(a, s.CellSize)
	if err != nil {
		return fmt.Errorf("sense: %w", err)
	}
	if s.sensor, err = NewSensor(a, h); err != nil {
		return err
	}
	s.filter = ecs.NewFilter2[ecs.Position, ecs.Emitter]()
	s.Update(a) // emitters placed before the first tick are sensed from it
	return nil
}

// Sensor returns the system's Sensor (nil before Init).
func (s *System) Sensor() *Sensor { return s.sensor }

// Update implements ecs.System.
func (s *System) Update(a *ecs.Area) {
	h := s.sensor.hash
	reach := int32(0)
	q := s.filter.Query(&a.World)
	for q.Next() {
		p, em := q.Get()
		e := q.Entity()
		h.Insert(e, a.Grid.Cell(p.X, p.Y))
		h.Mark(e, true)
		if em.Strength > 0 {
			reach = max(reach, int32(em.Radius))
		}
	}
	s.sensor.Reach = reach
}
