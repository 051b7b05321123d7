package items

import (
	"cmp"
	"slices"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
)

// Recipe is a recipe as the System matches it: its code, name and
// station, and its inputs and outputs by item code, each sorted by kind.
type Recipe struct {
	Code            uint16
	Name, Station   string
	Inputs, Outputs []Amount
	// Seconds is how long the station works on it (0: at once).
	Seconds int
}

// Amount is Count items of the kind Kind.
type Amount struct{ Kind, Count uint16 }

// match returns the recipe of station whose inputs are exactly what
// slots hold, as a multiset, or nil. Content lets no two recipes of one
// station have the same inputs, so at most one matches.
func (s *System) match(station string, slots []ecs.Stack) *Recipe {
	var held [content.MaxContainer]Amount
	n := 0
	for _, st := range slots {
		if st.Empty() {
			continue
		}
		i := 0
		for i < n && held[i].Kind != st.Kind {
			i++
		}
		if i == n {
			held[n] = Amount{Kind: st.Kind}
			n++
		}
		held[i].Count += st.Count
	}
	have := held[:n]
	slices.SortFunc(have, func(a, b Amount) int { return cmp.Compare(a.Kind, b.Kind) })
	for _, r := range s.stations[station] {
		if slices.Equal(r.Inputs, have) {
			return r
		}
	}
	return nil
}

// craft makes what the station body e faces holds into the recipe it
// matches: every input destroyed and every output minted into the
// station's container, in this one step, and recorded in the ledger; the
// character learns the recipe. Contents that match no recipe are refused
// (OutcomeNoRecipe) and stay as they are. A recipe that takes time starts
// instead: the station works, its contents held, and makes it when its
// time is up (see live.go).
func (s *System) craft(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	c, o := s.facing(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	obj := s.Map.At(c)
	if obj == nil || obj.Item == 0 || s.containers[obj.ID] == nil {
		return ecs.OutcomeNothingThere
	}
	k := s.kinds[obj.Item]
	if k == nil || k.Placed.Station == "" {
		return ecs.OutcomeNothingThere // a chest: no station
	}
	if o := s.mayBuild(e); o != ecs.OutcomeApplied {
		return o
	}
	if s.working(obj.ID) {
		return ecs.OutcomeWorking
	}
	cont := s.containers[obj.ID]
	r := s.match(k.Placed.Station, cont)
	if r == nil {
		return ecs.OutcomeNoRecipe
	}
	if _, o := s.made(a.ID, cont, r); o != ecs.OutcomeApplied {
		return o // the outputs would not fit: nothing starts
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	if r.Seconds > 0 {
		s.start(timer{obj: obj.ID, stack: obj.Stack, due: s.now + s.ticks(r.Seconds), recipe: r.Code})
		a.Emit(ecs.Event{Kind: ecs.EventContainer, By: e, Cell: c})
	} else {
		s.transform(a, c, cont, r)
	}
	s.learn(a, e, inv, r.Code)
	return ecs.OutcomeApplied
}

// made returns what station contents cont become by recipe r, with the
// id counter it leaves, or refuses as craft would when they do not fit.
func (s *System) made(area ecs.AreaID, cont []ecs.Stack, r *Recipe) (minter, ecs.Outcome) {
	out := make([]ecs.Stack, len(cont))
	m := minter{area: area, next: s.next}
	for _, y := range r.Outputs {
		if !s.add(out, y.Kind, y.Count, 0, &m) {
			if m.out {
				return m, ecs.OutcomeItemCap
			}
			return m, ecs.OutcomeInventoryFull // content fits every recipe in its stations
		}
	}
	return m, ecs.OutcomeApplied
}

// transform makes the contents cont of the station on square c into
// recipe r's outputs, in one step: the inputs destroyed and the outputs
// minted, both in the ledger. The caller has matched cont to r.
func (s *System) transform(a *ecs.Area, c ecs.Cell, cont []ecs.Stack, r *Recipe) {
	out := make([]ecs.Stack, len(cont))
	m := minter{area: a.ID, next: s.next}
	for _, y := range r.Outputs {
		s.add(out, y.Kind, y.Count, 0, &m)
	}
	copy(cont, out)
	s.next = m.next
	for _, y := range r.Inputs {
		s.destroyed[y.Kind] += uint64(y.Count)
	}
	for _, y := range r.Outputs {
		s.created[y.Kind] += uint64(y.Count)
	}
	a.Emit(ecs.Event{Kind: ecs.EventContainer, Cell: c})
}

// use uses the item of inventory slot it.From: a blueprint teaches its
// recipe and, unless its kind keeps it, is destroyed (one of the stack).
// A recipe known already is refused (OutcomeKnown) and nothing changes.
func (s *System) use(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	if int(it.From) >= len(inv.Slots) {
		return ecs.OutcomeInvalid
	}
	st := &inv.Slots[it.From]
	if st.Empty() {
		return ecs.OutcomeNothingThere
	}
	code, ok := s.teaches[st.Kind]
	if !ok {
		return ecs.OutcomeNotAllowed // not a blueprint
	}
	if _, known := slices.BinarySearch(inv.Recipes, code); known {
		return ecs.OutcomeKnown
	}
	if len(inv.Recipes) >= ecs.MaxRecipes {
		return ecs.OutcomeNotAllowed
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	if !s.kinds[st.Kind].Keep {
		s.destroyed[st.Kind]++
		if st.Count--; st.Count == 0 {
			*st = ecs.Stack{}
		}
		changed(a, e, ecs.NoCell)
	}
	s.learn(a, e, inv, code)
	return ecs.OutcomeApplied
}

// learn adds recipe code to what body e's character knows, and tells its
// player, unless it knew it already (or knows as many as it may).
func (s *System) learn(a *ecs.Area, e ecs.Entity, inv *ecs.Inventory, code uint16) {
	i, known := slices.BinarySearch(inv.Recipes, code)
	if known || len(inv.Recipes) >= ecs.MaxRecipes {
		return
	}
	inv.Recipes = slices.Insert(inv.Recipes, i, code)
	a.Emit(ecs.Event{Kind: ecs.EventRecipes, Entity: e})
}

// Known returns the recipes body e's character knows, by code; a code the
// content no longer has is kept in its state but left out here.
func (s *System) Known(e ecs.Entity) []*Recipe {
	inv := s.inventories.Get(e)
	if inv == nil {
		return nil
	}
	out := make([]*Recipe, 0, len(inv.Recipes))
	for _, code := range inv.Recipes {
		if r := s.recipes[code]; r != nil {
			out = append(out, r)
		}
	}
	return out
}
