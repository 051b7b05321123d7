package tell

import (
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/items"
)

// Code is the wire code of an engine outcome (CodeOK for OutcomeApplied;
// CodeMalformed for an outcome this table does not know, which a test
// rules out).
func Code(o ecs.Outcome) wire.Code {
	if int(o) >= len(outcomeCodes) {
		return wire.CodeMalformed
	}
	return outcomeCodes[o]
}

// outcomeCodes maps the engine's outcomes to wire codes.
var outcomeCodes = [...]wire.Code{
	ecs.OutcomeApplied:          wire.CodeOK,
	ecs.OutcomeSuperseded:       wire.CodeSuperseded,
	ecs.OutcomeTooFast:          wire.CodeTooFast,
	ecs.OutcomeEntityGone:       wire.CodeEntityGone,
	ecs.OutcomePortalInProgress: wire.CodePortalInProgress,
	ecs.OutcomeBlocked:          wire.CodeBlocked,
	ecs.OutcomeOutOfBounds:      wire.CodeOutOfBounds,
	ecs.OutcomeNoPath:           wire.CodeNoPath,
	ecs.OutcomeInvalid:          wire.CodeMalformed,
	ecs.OutcomeNotAllowed:       wire.CodeNotAllowed,
	ecs.OutcomeClosing:          wire.CodeAreaClosing,
	ecs.OutcomeNothingThere:     wire.CodeNothingThere,
	ecs.OutcomeInventoryFull:    wire.CodeInventoryFull,
	ecs.OutcomeNotBuilder:       wire.CodeNotBuilder,
	ecs.OutcomeBudget:           wire.CodeBudget,
	ecs.OutcomeCooldown:         wire.CodeCooldown,
	ecs.OutcomeItemCap:          wire.CodeItemCap,
	ecs.OutcomeOccupied:         wire.CodeOccupied,
	ecs.OutcomeNotEmpty:         wire.CodeNotEmpty,
	ecs.OutcomeOffPlot:          wire.CodeOffPlot,
	ecs.OutcomeNoRecipe:         wire.CodeNoRecipe,
	ecs.OutcomeKnown:            wire.CodeKnown,
	ecs.OutcomeTrading:          wire.CodeTrading,
	ecs.OutcomeNotTrading:       wire.CodeNotTrading,
	ecs.OutcomeBusy:             wire.CodeBusy,
	ecs.OutcomeStale:            wire.CodeStale,
	ecs.OutcomeWorking:          wire.CodeWorking,
	ecs.OutcomeNotOwner:         wire.CodeNotOwner,
	ecs.OutcomeNotForSale:       wire.CodeNotForSale,
	ecs.OutcomeCantPay:          wire.CodeCantPay,
}

// ItemKinds is the realm's item kinds as area_info tells them.
func ItemKinds(kinds []content.Item) []wire.ItemKind {
	out := make([]wire.ItemKind, len(kinds))
	for i, k := range kinds {
		out[i] = wire.ItemKind{Code: k.Code, Name: k.Name, Label: k.Label, Stack: uint16(k.Stack),
			Slot: uint8(k.Placed.Slot), Look: k.Placed.Look, Container: uint8(k.Placed.Container), Station: k.Placed.Station,
			Grows: uint32(k.Placed.Grows)}
		for _, into := range kinds {
			if k.Placed.Becomes != "" && into.Name == k.Placed.Becomes {
				out[i].Becomes = into.Code
			}
		}
		if k.Placed.Stall {
			out[i].Flags |= wire.ItemStall
		}
		switch {
		case k.Placed.Door:
			out[i].Flags = wire.ItemDoor | wire.ItemBlocks | wire.ItemBlocksSight
		default:
			if k.Placed.Blocks {
				out[i].Flags |= wire.ItemBlocks
			}
			if k.Placed.BlocksSight {
				out[i].Flags |= wire.ItemBlocksSight
			}
		}
		if k.Teaches != "" {
			out[i].Flags |= wire.ItemTeaches
		}
	}
	return out
}

// Amounts is a recipe's inputs or outputs as the wire carries them.
func Amounts(as []items.Amount) []wire.Amount {
	out := make([]wire.Amount, len(as))
	for i, a := range as {
		out[i] = wire.Amount{Kind: a.Kind, Count: a.Count}
	}
	return out
}

// Inventory is a player's inventory and stash as the inventory message
// carries them, whole.
func Inventory(inv *ecs.Inventory) *wire.Inventory {
	m := &wire.Inventory{Slots: make([]wire.Stack, len(inv.Slots)), Stash: make([]wire.Stack, len(inv.Stash))}
	for i, st := range inv.Slots {
		m.Slots[i] = wire.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count}
	}
	for i, st := range inv.Stash {
		m.Stash[i] = wire.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count}
	}
	return m
}

// Recipes is the recipes message of what a character knows: its own
// recipes, and no other (the content's recipes are the server's secret).
func Recipes(known []*items.Recipe) *wire.Recipes {
	m := &wire.Recipes{Known: make([]wire.Recipe, len(known))}
	for i, r := range known {
		m.Known[i] = wire.Recipe{Code: r.Code, Name: r.Name, Station: r.Station, Inputs: Amounts(r.Inputs), Outputs: Amounts(r.Outputs),
			Seconds: uint32(r.Seconds)}
	}
	return m
}

// Container is the container message of the container on c, as the
// player of account is shown it (a stall's owner sees it owned); nil when
// none stands there.
func Container(s *items.System, a *ecs.Area, c ecs.Cell, account uint64) *wire.Container {
	slots := s.Container(c)
	if slots == nil {
		return nil
	}
	x, y := a.Grid.XY(c)
	m := &wire.Container{X: x, Y: y, Slots: make([]wire.Stack, len(slots)), Prices: []wire.Amount{}, Ready: s.Ready(a, c)}
	for i, st := range slots {
		m.Slots[i] = wire.Stack{ID: uint64(st.ID), Kind: st.Kind, Count: st.Count}
	}
	if owner, prices, ok := s.Stall(c); ok {
		m.Prices = make([]wire.Amount, len(prices))
		for i, p := range prices {
			m.Prices[i] = wire.Amount{Kind: p.Kind, Count: p.Count}
		}
		if owner == account {
			m.Flags |= wire.ContainerOwned
		}
	}
	return m
}

// intentKinds maps the wire's intent kinds to the engine's.
var intentKinds = [...]ecs.IntentKind{
	wire.IntentStep: ecs.IntentStep, wire.IntentMoveTo: ecs.IntentMoveTo, wire.IntentStop: ecs.IntentStop,
	wire.IntentAction: ecs.IntentAction, wire.IntentPlace: ecs.IntentPlace, wire.IntentTake: ecs.IntentTake,
	wire.IntentMoveItem: ecs.IntentMoveItem, wire.IntentCraft: ecs.IntentCraft, wire.IntentUse: ecs.IntentUse,
	wire.IntentTrade: ecs.IntentTrade, wire.IntentOffer: ecs.IntentOffer, wire.IntentConfirm: ecs.IntentConfirm,
	wire.IntentCancel: ecs.IntentCancel, wire.IntentPrice: ecs.IntentPrice, wire.IntentBuy: ecs.IntentBuy,
}

// Intent is a decoded intent as the engine takes it, tagged with the
// session that sent it. A kind the engine does not know keeps kind 0,
// which the engine answers MALFORMED, in order.
func Intent(in *wire.Intent, tag uint32) ecs.Intent {
	var kind ecs.IntentKind
	if int(in.Kind) < len(intentKinds) {
		kind = intentKinds[in.Kind]
	}
	return ecs.Intent{Seq: in.Seq, Kind: kind, Dir: ecs.Dir(in.Dir), X: in.Target.X, Y: in.Target.Y, Tag: tag,
		From: in.Item.From, To: in.Item.To, Count: in.Item.Count}
}

// Pacing is how a host paces what it tells a player of an Area.
type Pacing struct {
	// SnapshotEvery is the ticks between two snapshots; InterestRadius how
	// far a player sees, in squares (0: the whole Area); ResumeGrace how
	// long a dropped player's body waits for a resume.
	SnapshotEvery, InterestRadius int
	ResumeGrace                   time.Duration
}

// AreaInfo is what a bound client is told of the Area b (whose id is
// id): its size, cells, pacing, rules, creature and item kinds, plots.
func AreaInfo(b *build.Built, id uint32, p Pacing) *wire.AreaInfo {
	a := b.Area
	r := a.Rules
	info := &wire.AreaInfo{
		Area: id, Kind: b.RuleSet.Name, W: uint32(a.Grid.W()), H: uint32(a.Grid.H()),
		CellSize: uint16(b.Hash.Size()), TickHz: uint16(a.TickRate),
		SnapshotHz: uint16(a.TickRate / p.SnapshotEvery),
		StepMS:     uint32(int(r.StepPeriod(a.TickRate)) * 1000 / a.TickRate),
		QueueLen:   ecs.QueueLen, InterestRadius: uint16(p.InterestRadius),
		ResumeGraceMS: uint32(p.ResumeGrace.Milliseconds()),
	}
	if r.Diagonal {
		info.Rules |= wire.RuleDiagonal
	}
	if r.PvP {
		info.Rules |= wire.RulePvP
	}
	if r.CreaturesHuntPlayers {
		info.Rules |= wire.RuleCreaturesHunt
	}
	if r.LineOfSight {
		info.Rules |= wire.RuleLineOfSight
	}
	info.PlayerHP = r.FullHP()
	for _, k := range b.Kinds {
		info.Creatures = append(info.Creatures, wire.CreatureKind{Name: k.Name, HP: uint16(k.HP)})
	}
	info.Items = ItemKinds(b.Items.Kinds)
	if b.Items.Build == items.BuildPlots {
		for _, p := range b.Items.Plots {
			info.Plots = append(info.Plots, wire.Plot{X: p.X, Y: p.Y, W: uint16(p.W), H: uint16(p.H)})
		}
	}
	return info
}
