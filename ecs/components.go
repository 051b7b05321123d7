package ecs

// Components are plain structs: no pointers, no maps, no slices, so a world
// is flat memory that arche stores column by column.

// Position is the square an entity stands on.
type Position struct {
	X, Y int32
}

// Body marks an entity that occupies its Position's square on the occupant
// layer. Exactly one body stands on a square; the Area keeps grid and ECS
// in step (see Area.MoveBody, Area.Despawn, Area.CheckGrid).
type Body struct {
	Facing Dir
}

// Player marks a body driven by a connected (or resuming) player.
type Player struct {
	// Account is the director's account ID of the player.
	Account uint64
	// AckSeq is the latest intent seq applied for this player, in
	// serial-number order (RFC 1982): snapshots carry it so an applied
	// intent needs no message of its own.
	AckSeq uint32
	// Session is the mark (Intent.Tag) of the session that drives the
	// body now: intents of an earlier session (one taken over) still in
	// flight are refused OutcomeSuperseded, never applied.
	Session uint32
	// Away is set while no connection drives the body (its player's
	// connection dropped, within the resume grace): clients show it, and
	// nothing may harm it. The host sets it, and Touches the body.
	Away bool
	// Builder is set for a player the Area's owner lets build (the
	// director says so in the player's grant): where the rules build by
	// builders, only they place and take items.
	Builder bool
	// Settling is set while a portal crossing of this body timed out and
	// the host still asks the director how it ended: the body walks again,
	// but its items may not change (systems/items answers
	// OutcomePortalInProgress), since the store may have moved the
	// character, and what it carried, to the other Area already.
	Settling bool
}

// Health is a body's hit points: HP of Max. Hurt takes them; a body at 0
// HP is dead, and its Area's OnDeath hook says what follows (a player
// comes back at a spawn point, a creature is gone).
type Health struct {
	HP, Max uint16
}

// Creature marks a body driven by the server's AI (systems/creature).
type Creature struct {
	// Kind is its kind in its creature system's table, counted from 1 (0:
	// none); clients see it as the entity's look.
	Kind uint16
	// State is the AI's state (the creature system names the values).
	State uint8
	// Blocked counts the ticks in a row its chosen step was blocked.
	Blocked uint8
	// Spawner is the index of the spawner that made it in its creature
	// system's configuration.
	Spawner uint16
	// Goal is the index of its target's entry in its creature system's
	// target table (a shared flow field), or -1.
	Goal int16
	// Target is the body it hunts, or the zero Entity.
	Target Entity
	// NextAttack is the first tick it may attack again.
	NextAttack uint64
	// Seed is its private xorshift state for wandering.
	Seed uint32
}

// Mover is a body's movement budget: one step every Period ticks (Period
// 1 is a step a tick). ReadyAt is the first tick (Area.Tick) at which the
// body may step again; a budget kept as a tick number needs no per-tick
// countdown, so a body that stands still costs no work.
type Mover struct {
	ReadyAt  uint64
	Period   uint8
	Diagonal bool
}

// Ready reports whether the mover may step in tick now.
func (m *Mover) Ready(now uint64) bool { return now >= m.ReadyAt }

// Stepped spends the budget of one step (or other turn) taken in tick
// now: the next one waits a whole Period from now. Bodies the server paces
// (creatures, a player's planned walk) and a player's actions, places,
// takes, crafts and buys spend theirs this way.
func (m *Mover) Stepped(now uint64) { m.ReadyAt = now + uint64(m.Period) }

// Paced spends the budget of one step a client asked for (a step
// intent), taken in tick now: the next is due a Period after this one's
// due tick (ReadyAt), not after now, with at most one Period of credit. A
// step that came late (its intent delayed on the network, or read a tick
// late) then does not push every later step back: a client that sends at
// the budget's rate is kept at it, where with Stepped each late arrival
// would add to a wait that never drains (the queue fills while the host
// has time to spare). With the credit capped at one step, two steps may
// come a tick apart after a pause, and over any span a body takes at most
// one step more than the span's Periods allow.
func (m *Mover) Paced(now uint64) {
	p := uint64(m.Period)
	due := m.ReadyAt
	if now > p && due < now-p {
		due = now - p // at most one Period of credit
	}
	m.ReadyAt = due + p
}

// Wander makes a body stroll at random: every Every ticks on average it
// tries a step in a random direction. Seed is its private xorshift state, so
// a wandering crowd is deterministic for a given start.
type Wander struct {
	Seed  uint32
	Every uint8
}

// Next advances the wanderer's random state and returns the new value.
func (w *Wander) Next() uint32 {
	x := w.Seed
	if x == 0 {
		x = 0x9e3779b9
	}
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	w.Seed = x
	return x
}

// PathLen is the number of steps a Path holds at a time; longer routes are
// planned again when the held steps run out.
const PathLen = 24

// Path is a body's move-to-cell target and the next steps towards it.
type Path struct {
	// Target is the destination square, or NoCell when there is none.
	Target Cell
	// Steps[Next:N] are the squares still to step onto, in order.
	Steps [PathLen]Cell
	N     uint8
	Next  uint8
	// Blocked counts the ticks the next step has been blocked by a body.
	Blocked uint8
}

// Active reports whether the body is walking towards a target.
func (p *Path) Active() bool { return p.Target != NoCell }

// Clear drops the target and its planned steps.
func (p *Path) Clear() { p.Target, p.N, p.Next, p.Blocked = NoCell, 0, 0, 0 }

// Transit marks a body that is crossing a portal: its intents are refused
// with OutcomePortalInProgress until the crossing settles.
type Transit struct {
	Transfer uint64
}
