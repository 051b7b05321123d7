package area

import (
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/systems/interest"
)

// build builds the frame of the session viewing through v, whose body is
// e, into the Area's scratch frame (ha.snaps.frame, whose Statics, Round
// and Len the caller reads after), and returns it as a pooled gate frame,
// or nil when the round has none for it: a quiet round, the most common,
// takes nothing from the pool. The scratch frame and the gate frame trade
// their arrays, so neither allocates once both have grown.
func (ha *hostArea) build(v *interest.View, e ecs.Entity, ack uint32, arena []byte) (*gate.Frame, []byte) {
	out := &ha.snaps.frame
	arena = ha.interest.Build(v, e, ack, arena, out)
	if len(out.Parts) == 0 {
		return nil, arena
	}
	f := gate.NewFrame()
	f.Parts, out.Parts = out.Parts, f.Parts[:0]
	f.Buf, out.Buf = out.Buf, f.Buf[:0]
	return f, arena
}
