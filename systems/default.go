package systems

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/movement"
	"github.com/leyworks/ley/systems/wander"
)

// Default returns fresh instances of the standard systems in their fixed
// order: intake, movement, wander. Each Area needs its own instances.
func Default() []ecs.System {
	return []ecs.System{&movement.Intake{}, &movement.Movement{}, &wander.System{}}
}
