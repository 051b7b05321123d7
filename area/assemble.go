package area

import (
	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/interest"
)

// assemble builds the Area's engine from its spec, in the parked Area into
// (nil: a new one), with its state from blob (none: its first content),
// and the host's views of it: the component maps it reads and the
// interest system. It returns how many creatures of blob have no place in
// the map now.
func (ha *hostArea) assemble(into *ecs.Area, blob []byte) (leftOut int, err error) {
	lib := ha.h.cfg.Content
	if lib == nil {
		lib = content.Default()
	}
	spec := ha.spec
	spec.Into = into
	eng, err := build.Area(lib, spec)
	if err != nil {
		return 0, err
	}
	if len(blob) > 0 {
		if leftOut, err = eng.Load(blob); err != nil {
			return 0, err
		}
	} else {
		eng.Populate()
	}
	a := eng.Area
	is, err := interest.New(a, eng.Hash, eng.Map, ha.h.cfg.InterestRadius)
	if err != nil {
		return 0, err
	}
	is.SetKeepAlive(ha.h.cfg.KeepAliveTicks())
	if into == nil {
		ha.a = a // a parked Area keeps its ecs.Area, which event loops read
	}
	ha.eng, ha.interest = eng, is
	ha.intents = ecs.NewMap[ecs.Intents](&a.World)
	ha.players = ecs.NewMap[ecs.Player](&a.World)
	ha.positions = ecs.NewMap[ecs.Position](&a.World)
	ha.paths = ecs.NewMap[ecs.Path](&a.World)
	return leftOut, nil
}
