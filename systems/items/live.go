package items

import (
	"math"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/statics"
)

// timer is one placed thing's clock: a living thing that grows into
// another kind (recipe 0), or a station working on recipe. Its clock is
// the System's own count of the Area's live ticks (now), so it runs only
// while the Area ticks: a frozen or unloaded Area stands still and
// catches nothing up.
type timer struct {
	obj    uint32     // the placed object
	recipe uint16     // the recipe a station works on; 0 for growing
	stack  ecs.ItemID // its stack when the clock started: the object is still the one it was
	due    uint64     // the live tick it is done at
}

// ticks is seconds of live time, in the Area's ticks (at least 1).
func (s *System) ticks(seconds int) uint64 {
	return max(1, uint64(seconds)*uint64(s.rate))
}

// start adds t to the clocks.
func (s *System) start(t timer) {
	s.timers = append(s.timers, t)
	s.nextDue = min(s.nextDue, t.due)
}

// working reports whether the station obj is working on a recipe: its
// contents are held.
func (s *System) working(obj uint32) bool {
	for i := range s.timers {
		if s.timers[i].obj == obj && s.timers[i].recipe != 0 {
			return true
		}
	}
	return false
}

// stop drops the clocks of obj (it was taken back).
func (s *System) stop(obj uint32) {
	kept := s.timers[:0]
	for _, t := range s.timers {
		if t.obj != obj {
			kept = append(kept, t)
		}
	}
	s.timers = kept
}

// Ready returns the Area tick the station on square c will be done at,
// or 0 when none stands there or it is not working.
func (s *System) Ready(a *ecs.Area, c ecs.Cell) uint64 {
	obj := s.Map.At(c)
	if obj == nil || obj.Item == 0 {
		return 0
	}
	for i := range s.timers {
		if t := &s.timers[i]; t.obj == obj.ID && t.recipe != 0 {
			return a.Tick + (t.due - s.now)
		}
	}
	return 0
}

// Timers reports how many placed things' clocks run in the Area.
func (s *System) Timers() int { return len(s.timers) }

// live advances the clocks by one tick and finishes those whose time is
// up. A tick in which none is due costs one comparison.
func (s *System) live(a *ecs.Area) {
	s.now++
	if s.now < s.nextDue {
		return
	}
	next := uint64(math.MaxUint64)
	for i := 0; i < len(s.timers); {
		t := s.timers[i]
		if t.due > s.now {
			next = min(next, t.due)
			i++
			continue
		}
		if !s.finish(a, t) { // not now: try again in a second
			s.timers[i].due = s.now + s.ticks(1)
			next = min(next, s.timers[i].due)
			i++
			continue
		}
		last := len(s.timers) - 1
		s.timers[i] = s.timers[last]
		s.timers = s.timers[:last]
	}
	s.nextDue = next
}

// finish does what clock t was counting down to: a living thing becomes
// its grown kind, a station makes its recipe. It reports false to be
// asked again later (the id counter has run out); a clock whose object
// is gone or changed is dropped (true).
func (s *System) finish(a *ecs.Area, t timer) bool {
	obj := s.Map.Object(t.obj)
	if obj == nil || obj.Stack != t.stack {
		return true
	}
	if t.recipe != 0 {
		r := s.recipes[t.recipe]
		cont := s.containers[obj.ID]
		if r == nil || cont == nil {
			return true // the content lost the recipe: the contents stay as they are
		}
		if _, o := s.made(a.ID, cont, r); o != ecs.OutcomeApplied {
			return false
		}
		c := a.Grid.Cell(obj.X, obj.Y)
		s.transform(a, c, cont, r)
		return true
	}
	return s.grow(a, obj)
}

// grow makes the living thing obj its grown kind, in its place: a new
// item (a new id) of that kind, the old one destroyed, both in the ledger.
func (s *System) grow(a *ecs.Area, obj *statics.Object) bool {
	k := s.kinds[obj.Item]
	if k == nil || k.Placed.Becomes == "" {
		return true
	}
	code, ok := s.codes[k.Placed.Becomes]
	into := s.kinds[code]
	if !ok || into == nil {
		return true
	}
	m := minter{area: a.ID, next: s.next}
	id := m.mint()
	if m.out {
		return false
	}
	s.next = m.next
	was := s.Map.Remove(obj)
	kind := wire.ObjectItem
	oid := s.Map.Place(statics.Object{Kind: kind, X: was.X, Y: was.Y, Item: code, Stack: id, Floor: was.Floor,
		Solid: into.Placed.Blocks, Opaque: into.Placed.BlocksSight})
	s.destroyed[was.Item]++
	s.created[code]++
	if into.Placed.Becomes != "" {
		s.start(timer{obj: oid, stack: id, due: s.now + s.ticks(into.Placed.Grows)})
	}
	if !was.Floor && was.Solid != into.Placed.Blocks && s.FloorChanged != nil {
		s.FloorChanged(a.Grid.Cell(was.X, was.Y))
	}
	return true
}

// leftMS is how much live time clock t has left, in milliseconds, as the
// blob keeps it.
func (s *System) leftMS(t *timer) uint32 {
	left := (t.due - min(t.due, s.now)) * 1000 / uint64(s.rate)
	return uint32(min(max(left, 1), math.MaxUint32))
}

// fromMS is the due tick of a clock with ms milliseconds of live time left.
func (s *System) fromMS(ms uint32) uint64 {
	return s.now + max(1, (uint64(ms)*uint64(s.rate)+999)/1000)
}
