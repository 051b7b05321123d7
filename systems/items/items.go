package items

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/persist"
	"github.com/leyworks/ley/systems/persist/blob"
	"github.com/leyworks/ley/systems/statics"
)

// BuildRule says who may change an Area's items: place, take back,
// gather, and use its containers.
type BuildRule uint8

// The build rules.
const (
	// BuildAnyone lets every player build.
	BuildAnyone BuildRule = iota
	// BuildBuilders lets only the players the director marks builders
	// (ecs.Player.Builder: a home's owner and the members it names).
	BuildBuilders
	// BuildNobody lets no one build (an arena).
	BuildNobody
	// BuildPlots lets every player build, but place and take back only on
	// the squares of Config.Plots (a village).
	BuildPlots
)

// Defaults of a Config's bounds.
const (
	// DefaultMaxItems is the placed items an Area holds at most.
	DefaultMaxItems = 20000
	// DefaultChangesPerMinute is what one player may change per minute:
	// places, takes and gatherings.
	DefaultChangesPerMinute = 120
)

// Config is an Area's item content and rules.
type Config struct {
	// Catalog is the content's item kinds, sources and recipes, compiled
	// (CatalogOf shares one among the Areas of a library).
	*Catalog
	// Starter is what a new character is given when it first binds
	// (GiveStarter): the content's starter kit.
	Starter []content.Yield
	// Build says who may build.
	Build BuildRule
	// Plots are where BuildPlots lets players place and take back. An
	// Area without a map to mark them (the empty and generated templates)
	// has none and is one plot: content refuses a map under a "plots"
	// rule set that marks none.
	Plots []content.Plot
	// Carry, when not nil, names the only item kinds a character may
	// carry into the Area: LoadCharacter stashes the rest and gives back
	// what the stash holds of these. Nil lets every kind in.
	Carry []string
	// MaxItems bounds the placed items (0: DefaultMaxItems);
	// ChangesPerMinute one player's places, takes and gatherings per
	// minute (0: DefaultChangesPerMinute).
	MaxItems, ChangesPerMinute int
}

// System is the Area's item rule (see the package documentation). It
// belongs to its Area and runs on the goroutine ticking it.
type System struct {
	// Map is the Area's static map, where placed items stand.
	Map *statics.Map
	// FloorChanged, when set, is told of every square whose floor an item
	// changed (placed or taken back in the occupant slot): the creature
	// system's flow fields cross it.
	FloorChanged func(ecs.Cell)
	Config

	plot       []bool                 // per square, under BuildPlots: on a plot
	carry      map[uint16]bool        // the kinds Carry names, or nil
	containers map[uint32][]ecs.Stack // by placed object ID
	ready      map[uint32]uint64      // by source object ID: the first tick it gives again
	budgets    map[uint32]budget      // by entity ID
	next       uint32
	created    map[uint16]uint64
	destroyed  map[uint16]uint64
	stalls     map[uint32]*stall // by placed object ID

	// The clocks of things that live (live.go): now counts the Area's
	// live ticks, at rate a second.
	timers  []timer
	now     uint64
	nextDue uint64
	rate    int

	// The trades (trade.go): open ones and those ended since the host
	// was told, by ID; each trading body's trade ID, by entity ID.
	trades    map[uint32]*Trade
	tradeIDs  map[uint32]uint32
	lastTrade uint32

	inventories ecs.Map[ecs.Inventory]
	positions   ecs.Map[ecs.Position]
	players     ecs.Map[ecs.Player]
}

// budget is one player's changes in the current minute.
type budget struct {
	start uint64 // the tick its minute began
	used  int
}

// Name implements ecs.System.
func (*System) Name() string { return "items" }

// Init implements ecs.System: it makes the System the Area's item rule.
func (s *System) Init(a *ecs.Area) error {
	if s.Map == nil {
		return fmt.Errorf("items: area %d: no static map", a.ID)
	}
	if s.Catalog == nil {
		return fmt.Errorf("items: area %d: no catalog", a.ID)
	}
	if s.MaxItems == 0 {
		s.MaxItems = DefaultMaxItems
	}
	if s.ChangesPerMinute == 0 {
		s.ChangesPerMinute = DefaultChangesPerMinute
	}
	if s.Build == BuildPlots && len(s.Plots) > 0 {
		g := a.Grid
		s.plot = make([]bool, g.Len())
		for _, p := range s.Plots {
			for y := max(p.Y, 0); y < min(p.Y+p.H, g.H()); y++ {
				for x := max(p.X, 0); x < min(p.X+p.W, g.W()); x++ {
					s.plot[g.Cell(x, y)] = true
				}
			}
		}
	}
	if s.Carry != nil {
		s.carry = make(map[uint16]bool, len(s.Carry))
		for _, name := range s.Carry {
			code, ok := s.codes[name]
			if !ok {
				return fmt.Errorf("items: area %d: carry %q: no such item kind", a.ID, name)
			}
			s.carry[code] = true
		}
	}
	s.containers = make(map[uint32][]ecs.Stack)
	s.ready = make(map[uint32]uint64)
	s.budgets = make(map[uint32]budget)
	s.created = make(map[uint16]uint64)
	s.destroyed = make(map[uint16]uint64)
	s.stalls = make(map[uint32]*stall)
	// s.trades stays nil while no trade is open or untold (Told): every
	// tick and every rest decision asks its length, and that of a nil map
	// reads no header of its own (bench/hostcost.sh).
	s.tradeIDs = make(map[uint32]uint32)
	s.rate = max(1, a.TickRate)
	s.nextDue = math.MaxUint64
	w := &a.World
	s.inventories = ecs.NewMap[ecs.Inventory](w)
	s.positions = ecs.NewMap[ecs.Position](w)
	s.players = ecs.NewMap[ecs.Player](w)
	a.OnItem = s.item
	return nil
}

// Update implements ecs.System: item intents come in through the movement
// system's queues; each tick the clocks of things that live advance, and
// trades whose players can no longer trade are void.
func (s *System) Update(a *ecs.Area) {
	s.live(a)
	if len(s.trades) > 0 {
		s.watchTrades(a)
	}
}

// Idle implements ecs.Idler: nothing lives or makes a recipe (no clock
// counts down) and no trade is open. Its clocks count the ticks it runs,
// so it never rests while one counts.
func (s *System) Idle(*ecs.Area) bool { return len(s.timers) == 0 && len(s.trades) == 0 }

// settling reports whether body e's items are held while a crossing of
// it is decided (ecs.Player.Settling).
func (s *System) settling(e ecs.Entity) bool {
	pl := s.players.Get(e)
	return pl != nil && pl.Settling
}

// item carries out one item intent of body e.
func (s *System) item(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	if s.settling(e) {
		return ecs.OutcomePortalInProgress
	}
	switch it.Kind {
	case ecs.IntentTrade:
		return s.openTrade(a, e, it)
	case ecs.IntentOffer:
		return s.offer(a, e, it)
	case ecs.IntentConfirm:
		return s.confirm(a, e, it)
	case ecs.IntentCancel:
		return s.cancel(a, e)
	}
	if tradeHold() && s.held(e) {
		return ecs.OutcomeTrading // what a trader offers stays as offered
	}
	switch it.Kind {
	case ecs.IntentPrice:
		return s.price(a, e, it)
	case ecs.IntentBuy:
		return s.buy(a, e, it)
	case ecs.IntentPlace:
		return s.place(a, e, it)
	case ecs.IntentTake:
		return s.take(a, e, it)
	case ecs.IntentMoveItem:
		return s.move(a, e, it)
	case ecs.IntentCraft:
		return s.craft(a, e, it)
	case ecs.IntentUse:
		return s.use(a, e, it)
	}
	return ecs.OutcomeInvalid
}

// facing returns the square next to body e in direction d.
func (s *System) facing(a *ecs.Area, e ecs.Entity, d ecs.Dir) (ecs.Cell, ecs.Outcome) {
	pos := s.positions.Get(e)
	if pos == nil {
		return ecs.NoCell, ecs.OutcomeEntityGone
	}
	if d >= ecs.NumDirs {
		return ecs.NoCell, ecs.OutcomeInvalid
	}
	dx, dy := d.Delta()
	x, y := pos.X+dx, pos.Y+dy
	if !a.Grid.In(x, y) {
		return ecs.NoCell, ecs.OutcomeOutOfBounds
	}
	return a.Grid.Cell(x, y), ecs.OutcomeApplied
}

// mayBuild says whether body e may change the Area's items.
func (s *System) mayBuild(e ecs.Entity) ecs.Outcome {
	pl := s.players.Get(e)
	switch {
	case pl == nil:
		return ecs.OutcomeNotBuilder
	case s.Build == BuildNobody:
		return ecs.OutcomeNotBuilder
	case s.Build == BuildBuilders && !pl.Builder:
		return ecs.OutcomeNotBuilder
	}
	return ecs.OutcomeApplied
}

// mayBuildOn says whether body e may place on, or take back from, square
// c: mayBuild, and under BuildPlots only on a plot.
func (s *System) mayBuildOn(e ecs.Entity, c ecs.Cell) ecs.Outcome {
	if o := s.mayBuild(e); o != ecs.OutcomeApplied {
		return o
	}
	if s.plot != nil && !s.plot[c] {
		return ecs.OutcomeOffPlot
	}
	return ecs.OutcomeApplied
}

// MayBuild reports whether body e may change the Area's items under its
// rules (for the client to know; every item intent is judged anyway):
// under BuildPlots, somewhere (on the plots).
func (s *System) MayBuild(e ecs.Entity) bool { return s.mayBuild(e) == ecs.OutcomeApplied }

// spend takes one change of body e's budget for this minute, or answers
// OutcomeBudget when it is spent.
func (s *System) spend(a *ecs.Area, e ecs.Entity) ecs.Outcome {
	b := s.budgets[e.ID()]
	if minute := uint64(60 * a.TickRate); b.used == 0 || a.Tick-b.start >= minute {
		b = budget{start: a.Tick}
	}
	if b.used >= s.ChangesPerMinute {
		return ecs.OutcomeBudget
	}
	b.used++
	s.budgets[e.ID()] = b
	return ecs.OutcomeApplied
}

// stackMax is how many items of kind one slot holds.
func (s *System) stackMax(kind uint16, now uint16) uint16 {
	if k := s.kinds[kind]; k != nil {
		return uint16(k.Stack)
	}
	return now // a kind the content no longer has: it stays as it is
}

// minter mints item ids on a scratch counter, kept only when the move it
// serves is committed (a refused move mints nothing).
type minter struct {
	area ecs.AreaID
	next uint32
	out  bool // the counter ran out
}

func (m *minter) mint() ecs.ItemID {
	if m.next == math.MaxUint32 {
		m.out = true
		return 0
	}
	m.next++
	return ecs.ItemID(uint64(m.area)<<32 | uint64(m.next))
}

// add puts count items of kind into slots: onto stacks of the kind as far
// as they go, then into empty slots, the first new stack named id (0:
// minted), any further one minted. It reports false if they do not all
// fit; slots are then partly changed, so callers add into a copy.
func (s *System) add(slots []ecs.Stack, kind, count uint16, id ecs.ItemID, m *minter) bool {
	max := s.stackMax(kind, 1)
	for i := range slots {
		if count == 0 {
			return true
		}
		if st := &slots[i]; st.Count > 0 && st.Kind == kind && st.Count < max {
			n := min(count, max-st.Count)
			st.Count += n
			count -= n
		}
	}
	for i := range slots {
		if count == 0 {
			return true
		}
		if st := &slots[i]; st.Empty() {
			if id == 0 {
				id = m.mint()
			}
			n := min(count, max)
			*st = ecs.Stack{ID: id, Kind: kind, Count: n}
			count -= n
			id = 0
		}
	}
	return count == 0 && !m.out
}

// changed tells the host that body e's inventory (and the container on
// c, if any) changed.
func changed(a *ecs.Area, e ecs.Entity, c ecs.Cell) {
	a.Emit(ecs.Event{Kind: ecs.EventInventory, Entity: e, Cell: c})
	if c != ecs.NoCell {
		a.Emit(ecs.Event{Kind: ecs.EventContainer, By: e, Cell: c})
	}
}

// place puts one item of inventory slot it.From on the square next to e.
func (s *System) place(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	if it.From >= ecs.InventorySlots {
		return ecs.OutcomeInvalid
	}
	st := &inv.Slots[it.From]
	if st.Empty() {
		return ecs.OutcomeNothingThere
	}
	k := s.kinds[st.Kind]
	if k == nil || !k.Placeable() {
		return ecs.OutcomeNotAllowed
	}
	c, o := s.facing(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	if o := s.mayBuildOn(e, c); o != ecs.OutcomeApplied {
		return o
	}
	if s.Map.Items() >= s.MaxItems {
		return ecs.OutcomeItemCap
	}
	floor := k.Placed.Slot == content.SlotFloor
	if !s.Map.Free(c, floor) {
		return ecs.OutcomeOccupied
	}
	m := minter{area: a.ID, next: s.next}
	id := st.ID
	if st.Count > 1 {
		if id = m.mint(); m.out {
			return ecs.OutcomeItemCap
		}
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	s.next = m.next
	if st.Count--; st.Count == 0 {
		*st = ecs.Stack{}
	}
	kind := wire.ObjectItem
	if k.Placed.Door {
		kind = wire.ObjectDoor
	}
	x, y := a.Grid.XY(c)
	oid := s.Map.Place(statics.Object{Kind: kind, X: x, Y: y, Item: k.Code, Stack: id, Floor: floor,
		Solid: k.Placed.Blocks, Opaque: k.Placed.BlocksSight})
	if k.Placed.Container > 0 {
		s.containers[oid] = make([]ecs.Stack, k.Placed.Container)
	}
	if k.Placed.Stall {
		s.stalls[oid] = &stall{owner: s.account(e), prices: make([]Price, k.Placed.Container)}
	}
	if k.Placed.Becomes != "" {
		s.start(timer{obj: oid, stack: id, due: s.now + s.ticks(k.Placed.Grows)})
	}
	if !floor && s.FloorChanged != nil {
		s.FloorChanged(c)
	}
	a.Face(e, it.Dir)
	changed(a, e, ecs.NoCell)
	return ecs.OutcomeApplied
}

// yields returns what taking a placed item of kind back gives.
func (s *System) yields(kind uint16) []content.Yield {
	if k := s.kinds[kind]; k != nil && len(k.Yields) > 0 {
		return k.Yields
	}
	return nil
}

// take takes the item placed next to e back into e's inventory.
func (s *System) take(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	c, o := s.facing(a, e, it.Dir)
	if o != ecs.OutcomeApplied {
		return o
	}
	obj := s.Map.PlacedAt(c)
	if obj == nil {
		return ecs.OutcomeNothingThere
	}
	if o := s.mayBuildOn(e, c); o != ecs.OutcomeApplied {
		return o
	}
	if st := s.stalls[obj.ID]; st != nil && st.owner != s.account(e) {
		return ecs.OutcomeNotOwner
	}
	if s.working(obj.ID) {
		return ecs.OutcomeWorking
	}
	for _, st := range s.containers[obj.ID] {
		if !st.Empty() {
			return ecs.OutcomeNotEmpty
		}
	}
	// Into a copy first: every yield fits, or nothing changes.
	slots := inv.Slots
	m := minter{area: a.ID, next: s.next}
	ys := s.yields(obj.Item)
	self := len(ys) == 0 || (len(ys) == 1 && ys[0].Count == 1 && s.kinds[obj.Item] != nil && ys[0].Item == s.kinds[obj.Item].Name)
	if self {
		if !s.add(slots[:], obj.Item, 1, obj.Stack, &m) {
			return ecs.OutcomeInventoryFull
		}
	} else {
		for _, y := range ys {
			yk, ok := s.kindNamed(y.Item)
			if !ok || !s.add(slots[:], yk, uint16(y.Count), 0, &m) {
				return ecs.OutcomeInventoryFull
			}
		}
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o
	}
	inv.Slots, s.next = slots, m.next
	if !self {
		s.destroyed[obj.Item]++
		for _, y := range ys {
			yk, _ := s.kindNamed(y.Item)
			s.created[yk] += uint64(y.Count)
		}
	}
	delete(s.containers, obj.ID)
	delete(s.stalls, obj.ID)
	s.stop(obj.ID)
	floor := obj.Floor
	s.Map.Remove(obj)
	if !floor && s.FloorChanged != nil {
		s.FloorChanged(c)
	}
	a.Face(e, it.Dir)
	changed(a, e, ecs.NoCell)
	return ecs.OutcomeApplied
}

// kindNamed returns the code of the item kind named name.
func (s *System) kindNamed(name string) (uint16, bool) {
	code, ok := s.codes[name]
	return code, ok
}

// Gather gives body e what the source object on square c yields (a
// tree's wood, a rock's stone), if one stands there: the action system
// calls it for an action on a square with no body. ok is false when no
// source stands on c (the action goes on to what else is there).
func (s *System) Gather(a *ecs.Area, e ecs.Entity, c ecs.Cell) (o ecs.Outcome, ok bool) {
	obj := s.Map.At(c)
	if obj == nil || obj.Item != 0 {
		return ecs.OutcomeNothingThere, false
	}
	src := s.sources[obj.Kind]
	if src == nil {
		return ecs.OutcomeNothingThere, false
	}
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeNotAllowed, true // a creature acts; only players carry
	}
	if s.settling(e) {
		return ecs.OutcomePortalInProgress, true
	}
	if tradeHold() && s.held(e) {
		return ecs.OutcomeTrading, true
	}
	if o := s.mayBuild(e); o != ecs.OutcomeApplied {
		return o, true
	}
	if a.Tick < s.ready[obj.ID] {
		return ecs.OutcomeCooldown, true
	}
	slots := inv.Slots
	m := minter{area: a.ID, next: s.next}
	for _, y := range src.Yields {
		yk, ok := s.kindNamed(y.Item)
		if !ok || !s.add(slots[:], yk, uint16(y.Count), 0, &m) {
			return ecs.OutcomeInventoryFull, true
		}
	}
	if o := s.spend(a, e); o != ecs.OutcomeApplied {
		return o, true
	}
	inv.Slots, s.next = slots, m.next
	for _, y := range src.Yields {
		yk, _ := s.kindNamed(y.Item)
		s.created[yk] += uint64(y.Count)
	}
	cool := max(1, int(math.Round(float64(src.CooldownTicks)*float64(a.TickRate)/content.TickRate)))
	s.ready[obj.ID] = a.Tick + uint64(cool)
	changed(a, e, ecs.NoCell)
	return ecs.OutcomeApplied, true
}

// Open opens the container placed on square c for body e: nothing changes,
// and the host tells e's player what it holds (an ecs.EventContainer with
// Amount 1). ok is false when no container stands on c.
func (s *System) Open(a *ecs.Area, e ecs.Entity, c ecs.Cell) (o ecs.Outcome, ok bool) {
	obj := s.Map.At(c)
	if obj == nil || obj.Item == 0 || s.containers[obj.ID] == nil {
		return ecs.OutcomeNothingThere, false
	}
	if s.inventories.Get(e) == nil {
		return ecs.OutcomeNotAllowed, true // a creature acts; only players open things
	}
	a.Emit(ecs.Event{Kind: ecs.EventContainer, By: e, Cell: c, Amount: 1})
	return ecs.OutcomeApplied, true
}

// slot resolves an item intent's slot number: one of e's inventory, or
// of the container cont.
func slot(inv *ecs.Inventory, cont []ecs.Stack, n uint8) *ecs.Stack {
	switch {
	case int(n) < len(inv.Slots):
		return &inv.Slots[n]
	case n >= ecs.ContainerSlot && int(n-ecs.ContainerSlot) < len(cont):
		return &cont[n-ecs.ContainerSlot]
	}
	return nil
}

// move moves items between slots of e's inventory and of the container
// it faces.
func (s *System) move(a *ecs.Area, e ecs.Entity, it *ecs.Intent) ecs.Outcome {
	inv := s.inventories.Get(e)
	if inv == nil {
		return ecs.OutcomeEntityGone
	}
	var cont []ecs.Stack
	at := ecs.NoCell
	var stallObj uint32
	if it.From >= ecs.ContainerSlot || it.To >= ecs.ContainerSlot {
		c, o := s.facing(a, e, it.Dir)
		if o != ecs.OutcomeApplied {
			return o
		}
		obj := s.Map.At(c)
		if obj == nil || obj.Item == 0 || s.containers[obj.ID] == nil {
			return ecs.OutcomeNothingThere
		}
		if o := s.mayStock(e, obj.ID); o != ecs.OutcomeApplied {
			return o
		}
		if s.working(obj.ID) {
			return ecs.OutcomeWorking
		}
		cont, at, stallObj = s.containers[obj.ID], c, obj.ID
	}
	src, dst := slot(inv, cont, it.From), slot(inv, cont, it.To)
	if src == nil || dst == nil || src == dst {
		return ecs.OutcomeInvalid
	}
	if src.Empty() {
		return ecs.OutcomeNothingThere
	}
	n := it.Count
	if n == 0 {
		n = src.Count
	}
	if n > src.Count {
		return ecs.OutcomeInvalid
	}
	switch {
	case dst.Empty() && n == src.Count:
		*dst, *src = *src, ecs.Stack{}
	case dst.Empty():
		m := minter{area: a.ID, next: s.next}
		id := m.mint()
		if m.out {
			return ecs.OutcomeItemCap
		}
		s.next = m.next
		*dst = ecs.Stack{ID: id, Kind: src.Kind, Count: n}
		src.Count -= n
	case dst.Kind == src.Kind:
		room := s.stackMax(dst.Kind, dst.Count) - min(dst.Count, s.stackMax(dst.Kind, dst.Count))
		if room == 0 {
			return ecs.OutcomeInventoryFull
		}
		n = min(n, room)
		dst.Count += n
		if src.Count -= n; src.Count == 0 {
			*src = ecs.Stack{}
		}
	case n == src.Count:
		*dst, *src = *src, *dst
	default:
		return ecs.OutcomeOccupied // part of a stack onto another kind
	}
	s.offSale(stallObj, it.From, it.To)
	changed(a, e, at)
	return ecs.OutcomeApplied
}

// Container returns the slots of the container on square c (nil when
// none stands there). The slice aliases the System.
func (s *System) Container(c ecs.Cell) []ecs.Stack {
	if obj := s.Map.At(c); obj != nil && obj.Item != 0 {
		return s.containers[obj.ID]
	}
	return nil
}

// GiveStarter gives body e the starter kit (Config.Starter): see Give.
// Without a kit it gives nothing and reports true.
func (s *System) GiveStarter(a *ecs.Area, e ecs.Entity) bool {
	return len(s.Starter) == 0 || s.Give(a, e, s.Starter)
}

// Give mints the items of ys into body e's inventory, counted as created
// in the Area's ledger: all of them, or, when they do not all fit or name
// a kind the content lacks, none.
func (s *System) Give(a *ecs.Area, e ecs.Entity, ys []content.Yield) bool {
	inv := s.inventories.Get(e)
	if inv == nil {
		return false
	}
	slots := inv.Slots
	m := minter{area: a.ID, next: s.next}
	for _, y := range ys {
		k, ok := s.kindNamed(y.Item)
		if !ok || !s.add(slots[:], k, uint16(y.Count), 0, &m) {
			return false
		}
	}
	inv.Slots, s.next = slots, m.next
	for _, y := range ys {
		k, _ := s.kindNamed(y.Item)
		s.created[k] += uint64(y.Count)
	}
	changed(a, e, ecs.NoCell)
	return true
}

// Save returns the Area's items as its blob keeps them.
func (s *System) Save() *persist.Items {
	it := &persist.Items{Next: s.next}
	var clocks map[uint32]*timer // by placed object
	if len(s.timers) > 0 {
		clocks = make(map[uint32]*timer, len(s.timers))
		for i := range s.timers {
			clocks[s.timers[i].obj] = &s.timers[i]
		}
	}
	for _, o := range s.Map.Objects() {
		if o.Item == 0 {
			continue
		}
		p := persist.Placed{X: o.X, Y: o.Y, Stack: blob.Stack{ID: uint64(o.Stack), Kind: o.Item, Count: 1}, Floor: o.Floor, Open: o.Open}
		if cont := s.containers[o.ID]; cont != nil {
			p.Contents = make([]blob.Stack, len(cont))
			for i, st := range cont {
				p.Contents[i] = blob.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count}
			}
		}
		if st := s.stalls[o.ID]; st != nil {
			p.Owner = st.owner
			if slices.ContainsFunc(st.prices, func(pr Price) bool { return pr.Count > 0 }) {
				p.Prices = make([]blob.Price, len(st.prices))
				for i, pr := range st.prices {
					p.Prices[i] = blob.Price{Kind: pr.Kind, Count: pr.Count}
				}
			}
		}
		if t := clocks[o.ID]; t != nil {
			p.LeftMS, p.Recipe = s.leftMS(t), t.recipe
		}
		it.Placed = append(it.Placed, p)
	}
	it.Created, it.Destroyed = tallies(s.created), tallies(s.destroyed)
	return it
}

// tallies returns m as a list sorted by kind.
func tallies(m map[uint16]uint64) []persist.Tally {
	out := make([]persist.Tally, 0, len(m))
	for k, v := range m {
		out = append(out, persist.Tally{Kind: k, Count: v})
	}
	slices.SortFunc(out, func(a, b persist.Tally) int { return cmp.Compare(a.Kind, b.Kind) })
	return out
}

// Load puts back the items of a stored Area (persist.Load hands them
// before any body stands). An item whose slot the map now fills (the
// content changed since) fails the load: an item is never dropped
// silently.
func (s *System) Load(it *persist.Items) error {
	g := s.Map.Grid()
	for _, p := range it.Placed {
		c := g.Cell(p.X, p.Y)
		if taken := s.Map.PlacedAt(c); (taken != nil && taken.Floor == p.Floor) || (!p.Floor && s.Map.At(c) != nil) {
			return fmt.Errorf("items: item %d at (%d,%d): its slot is taken by the map", p.Stack.ID, p.X, p.Y)
		}
		kind, solid, opaque, cont := wire.ObjectItem, false, false, 0
		if k := s.kinds[p.Stack.Kind]; k != nil {
			solid, opaque, cont = k.Placed.Blocks, k.Placed.BlocksSight, k.Placed.Container
			if k.Placed.Door {
				kind = wire.ObjectDoor
			}
		}
		oid := s.Map.Place(statics.Object{Kind: kind, X: p.X, Y: p.Y, Open: p.Open, Item: p.Stack.Kind,
			Stack: ecs.ItemID(p.Stack.ID), Floor: p.Floor, Solid: solid, Opaque: opaque})
		if n := max(cont, len(p.Contents)); n > 0 {
			slots := make([]ecs.Stack, n)
			for i, st := range p.Contents {
				slots[i] = ecs.Stack{ID: ecs.ItemID(st.ID), Kind: st.Kind, Count: st.Count}
			}
			s.containers[oid] = slots
			if k := s.kinds[p.Stack.Kind]; p.Owner != 0 || (k != nil && k.Placed.Stall) {
				st := &stall{owner: p.Owner, prices: make([]Price, n)}
				for i, pr := range p.Prices {
					st.prices[i] = Price{Kind: pr.Kind, Count: pr.Count}
				}
				s.stalls[oid] = st
			}
		}
		switch k := s.kinds[p.Stack.Kind]; {
		case p.LeftMS > 0:
			s.start(timer{obj: oid, stack: ecs.ItemID(p.Stack.ID), due: s.fromMS(p.LeftMS), recipe: p.Recipe})
		case k != nil && k.Placed.Becomes != "": // stored before it lived: its clock starts now
			s.start(timer{obj: oid, stack: ecs.ItemID(p.Stack.ID), due: s.now + s.ticks(k.Placed.Grows)})
		}
	}
	s.next = it.Next
	for _, t := range it.Created {
		s.created[t.Kind] = t.Count
	}
	for _, t := range it.Destroyed {
		s.destroyed[t.Kind] = t.Count
	}
	return nil
}

// SaveCharacter returns body e's items, carried and stashed, as its
// character's state (nil when it owns none, or has no inventory).
func (s *System) SaveCharacter(e ecs.Entity) ([]byte, error) {
	inv := s.inventories.Get(e)
	if inv == nil {
		return nil, nil
	}
	var c blob.Character
	last := -1
	for i, st := range inv.Slots {
		if !st.Empty() {
			last = i
		}
	}
	if last < 0 && len(inv.Stash) == 0 && len(inv.Recipes) == 0 {
		return nil, nil
	}
	c.Version = blob.CharacterVersion
	if last >= 0 {
		c.Inventory = make([]blob.Stack, last+1)
		for i := 0; i <= last; i++ {
			st := inv.Slots[i]
			c.Inventory[i] = blob.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count}
		}
	}
	for _, st := range inv.Stash {
		c.Stash = append(c.Stash, blob.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count})
	}
	c.Recipes = inv.Recipes
	return blob.EncodeCharacter(&c)
}

// LoadCharacter fills body e's inventory and stash from its character's
// state, then keeps the Area's Carry rule: what the inventory holds of a
// kind the Area does not let in goes to the stash, and what the stash
// holds of a kind it does comes back into free room of the inventory
// (whole stacks; what finds no room waits on). Nothing is created or
// destroyed, so the ledger does not change; the state the next snapshot
// writes is the moved one, and a crash before it replays the same moves
// from the same stored state.
func (s *System) LoadCharacter(e ecs.Entity, state []byte) error {
	inv := s.inventories.Get(e)
	if inv == nil {
		return fmt.Errorf("items: entity %v carries nothing", e)
	}
	c, err := blob.DecodeCharacter(state)
	if err != nil {
		return err
	}
	*inv = ecs.Inventory{}
	for i, st := range c.Inventory {
		inv.Slots[i] = ecs.Stack{ID: ecs.ItemID(st.ID), Kind: st.Kind, Count: st.Count}
	}
	for _, st := range c.Stash {
		inv.Stash = append(inv.Stash, ecs.Stack{ID: ecs.ItemID(st.ID), Kind: st.Kind, Count: st.Count})
	}
	inv.Recipes = slices.Clone(c.Recipes)
	s.keepCarry(inv)
	return nil
}

// mayCarry reports whether the Area lets a character carry kind in.
func (s *System) mayCarry(kind uint16) bool { return s.carry == nil || s.carry[kind] }

// keepCarry moves the stacks of inv that the Carry rule keeps out into
// its stash (while it has room: ecs.MaxStash stacks), and the stashed
// stacks it lets in back into the inventory's empty slots, whole.
func (s *System) keepCarry(inv *ecs.Inventory) {
	for i := range inv.Slots {
		st := inv.Slots[i]
		if st.Empty() || s.mayCarry(st.Kind) || len(inv.Stash) >= ecs.MaxStash {
			continue
		}
		inv.Stash = append(inv.Stash, st)
		inv.Slots[i] = ecs.Stack{}
	}
	kept := inv.Stash[:0]
	for _, st := range inv.Stash {
		if !s.mayCarry(st.Kind) || !putBack(inv, st) {
			kept = append(kept, st)
		}
	}
	clear(inv.Stash[len(kept):])
	if inv.Stash = kept; len(kept) == 0 {
		inv.Stash = nil
	}
}

// putBack puts stack st, whole and under its own id, into an empty slot
// of inv, and reports whether there was one.
func putBack(inv *ecs.Inventory, st ecs.Stack) bool {
	for i := range inv.Slots {
		if inv.Slots[i].Empty() {
			inv.Slots[i] = st
			return true
		}
	}
	return false
}
