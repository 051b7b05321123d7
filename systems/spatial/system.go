package spatial

import "github.com/leyworks/ley/ecs"

// DefaultCellSize is the side of a hash cell, in squares, when a System's
// CellSize is zero.
const DefaultCellSize = 16

// System is the ECS system "spatial": it keeps a Hash of an Area's bodies
// in step with the Area's move log. It must run after every system that
// moves, spawns or despawns bodies (movement, wander, creatures). One
// System belongs to one Area.
type System struct {
	// CellSize is the side of a hash cell in squares (0: DefaultCellSize).
	CellSize int

	hash *Hash
}

// Name implements ecs.System.
func (*System) Name() string { return "spatial" }

// HashFor returns the system's Hash for Area a, making it (with every
// body already in a) on first use. Systems that query the hash (sensing,
// interest) call it from their Init, which may come before this system's.
func (s *System) HashFor(a *ecs.Area) (*Hash, error) {
	if s.hash != nil {
		return s.hash, nil
	}
	size := s.CellSize
	if size == 0 {
		size = DefaultCellSize
	}
	h, err := New(int(a.Grid.W()), int(a.Grid.H()), size)
	if err != nil {
		return nil, err
	}
	q := ecs.NewFilter2[ecs.Position, ecs.Body]().Query(&a.World)
	for q.Next() {
		p, _ := q.Get()
		h.Insert(q.Entity(), a.Grid.Cell(p.X, p.Y))
	}
	s.hash = h
	return h, nil
}

// Hash returns the system's Hash (nil before Init or HashFor).
func (s *System) Hash() *Hash { return s.hash }

// Init implements ecs.System.
func (s *System) Init(a *ecs.Area) error {
	_, err := s.HashFor(a)
	return err
}

// Update implements ecs.System: it applies this tick's move log.
func (s *System) Update(a *ecs.Area) { s.hash.Apply(a.Moves) }
