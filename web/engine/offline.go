package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fxamacker/cbor/v2"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/interest"
	"github.com/leyworks/ley/systems/tell"
)

// Offline play: the defaults of the Area a browser runs alone.
const (
	// OfflineTemplate is the content template an offline Area is built
	// from: the offline rules on the home map.
	OfflineTemplate = "offline"
	// OfflineAccount is the account of an offline Area's one player.
	OfflineAccount = 1
	// snapshotEvery and interestRadius are the area host's defaults.
	snapshotEvery  = 2
	interestRadius = 24
	// saveVersion is the version of an offline save's layout.
	saveVersion = 1
	// resumeToken is the offline Area's one resume token: nothing on the
	// page's other side could steal a session.
	resumeToken = "offline"
)

// ErrSave: an offline save that cannot be read (another version, or not
// a save at all).
var ErrSave = errors.New("engine: not an offline save")

// Offline is a whole Area a browser runs alone, as an area host would run
// it for one player: the frames a client sends (hello, intent, leave) go
// in through [Offline.Receive], and the frames a host sends (hello_ack,
// area_info, inventory, recipes, static, snapshot, intent_result,
// container, left, error) come out of [Offline.Take], in the order a host
// sends them, encoded by the same code. The client cannot tell it from a
// host, which is the point: the web client plays offline with the same
// session, view, renderer and controls.
//
// What it saves ([Offline.Save]) is an offline save: its own Area and
// character, never the realm's (docs/offline.md says why).
type Offline struct {
	sim    *Sim
	is     *interest.System
	view   interest.View
	frame  interest.Frame
	arena  []byte
	static wire.Static
	out    [][]byte

	player  uint32 // the body's entity id
	bound   bool
	session uint32 // the session's mark (0 before the first hello)
	version uint16 // the protocol version of the session
	lastSeq uint32 // the last seq of this session posted (0: none yet)
	last    uint64 // the tick of the last snapshot
}

// save is an offline save's layout.
type save struct {
	_         struct{} `cbor:",toarray"`
	Version   int
	Area      []byte // the Area's blob (systems/build)
	Character []byte // the player's items (systems/items)
	X, Y      int32
}

// NewOffline builds the offline Area of lib's OfflineTemplate, or the one
// a save (what [Offline.Save] returned) holds.
func NewOffline(lib *content.Library, saved []byte) (*Offline, error) {
	var sv save
	if saved != nil {
		if err := cbor.Unmarshal(saved, &sv); err != nil || sv.Version != saveVersion {
			return nil, fmt.Errorf("%w (%d bytes)", ErrSave, len(saved))
		}
	}
	sim, err := NewSim(lib, OfflineTemplate, 1, sv.Area)
	if err != nil {
		return nil, err
	}
	b := sim.Built()
	o := &Offline{sim: sim}
	if o.is, err = interest.New(sim.Area(), b.Hash, b.Map, interestRadius); err != nil {
		return nil, err
	}
	var state []byte
	if saved != nil {
		state = sv.Character
		if state == nil {
			state = []byte{}
		}
	}
	if o.player, err = sim.Join(OfflineAccount, true, state, sv.X, sv.Y, saved != nil); err != nil {
		return nil, err
	}
	return o, nil
}

// Sim is the offline Area's simulation.
func (o *Offline) Sim() *Sim { return o.sim }

// Receive takes one frame a client sent. A frame the host would refuse
// is answered as the host answers it (an error, or an intent_result).
func (o *Offline) Receive(frame []byte) {
	t, err := wire.Peek(frame)
	if err != nil {
		if seq, ok := wire.IntentSeq(frame); ok {
			o.result(seq, wire.CodeOf(err))
			return
		}
		o.send(&wire.Error{Code: wire.CodeOf(err), Detail: wire.Detail(err)})
		return
	}
	switch t {
	case wire.TypeHello, wire.TypeResume:
		m, err := wire.DecodeClient(frame)
		if err != nil {
			o.send(&wire.Error{Code: wire.CodeOf(err), Detail: wire.Detail(err)})
			return
		}
		switch m := m.(type) {
		case *wire.Hello:
			o.hello(m)
		case *wire.Resume:
			o.resume(m)
		}
	case wire.TypeIntent:
		o.intent(frame)
	case wire.TypeLeave:
		o.bound = false
		o.send(&wire.Left{})
	default:
		o.send(&wire.Error{Code: wire.CodeUnknownType, Detail: "message type " + t.String() + " is not accepted offline"})
	}
}

// hello binds the client to the one player: a fresh session (its seqs
// start again), told the Area, its things, and the map of what it sees
// with its first snapshot.
func (o *Offline) hello(m *wire.Hello) {
	v, ok := wire.Negotiate(m.Versions)
	if !ok {
		o.send(&wire.Error{Code: wire.CodeVersionUnsupported, JoinID: m.JoinID, Detail: wire.VersionsDetail()})
		return
	}
	e, _ := o.sim.Entity(o.player)
	o.session++
	o.lastSeq = 0
	if pl := o.sim.players.Get(e); pl != nil {
		pl.AckSeq, pl.Session = 0, o.session
	}
	o.version = v
	o.bind(m.JoinID)
}

// resume binds the client again to the session it had (its seqs go on),
// as a host does for a resume token it gave.
func (o *Offline) resume(m *wire.Resume) {
	if m.Token != resumeToken || o.session == 0 {
		o.send(&wire.Error{Code: wire.CodeBadToken, JoinID: m.JoinID, Detail: "unknown or expired resume token"})
		return
	}
	o.bind(m.JoinID)
}

// bind tells the client it is bound, the Area and its things.
func (o *Offline) bind(joinID uint64) {
	e, _ := o.sim.Entity(o.player)
	a := o.sim.Area()
	o.bound = true
	o.view.Reset()
	b := o.sim.Built()
	o.send(&wire.HelloAck{JoinID: joinID, Entity: o.player, Tick: a.Tick, Area: 1, ResumeToken: resumeToken, Version: o.version})
	info := tell.AreaInfo(b, 1, tell.Pacing{SnapshotEvery: snapshotEvery, InterestRadius: interestRadius})
	if b.Items.MayBuild(e) {
		info.Rules |= wire.RuleMayBuild
	}
	o.send(info)
	o.send(&wire.Presence{Area: 1, Players: []wire.Player{{Entity: o.player, Name: "you"}}})
	o.tellInventory(e)
}

// intent posts one intent of the bound session.
func (o *Offline) intent(frame []byte) {
	var in wire.Intent
	if err := wire.DecodeIntent(frame, &in); err != nil {
		seq, ok := wire.IntentSeq(frame)
		if !ok {
			o.send(&wire.Error{Code: wire.CodeOf(err), Detail: wire.Detail(err)})
			return
		}
		o.result(seq, wire.CodeOf(err))
		return
	}
	switch {
	case !o.bound:
		o.send(&wire.Error{Code: wire.CodeNotHello, RefSeq: in.Seq, Detail: "send hello first"})
	case o.lastSeq != 0 && !wire.SeqAfter(in.Seq, o.lastSeq): // seqs only grow in a session
		o.result(in.Seq, wire.CodeStaleSeq)
	default:
		o.lastSeq = in.Seq
		if ok, _ := o.sim.Post(o.player, tell.Intent(&in, o.session)); !ok {
			o.result(in.Seq, wire.CodeTooFast)
		}
	}
}

// Step runs one tick and what a host does after it: the player is told
// what changed of its things, every refusal, and on the snapshot cadence
// the snapshot (with the map of the cells it sees for the first time or
// anew before it).
func (o *Offline) Step() {
	o.sim.Step()
	a := o.sim.Area()
	e, _ := o.sim.Entity(o.player)
	if o.bound {
		o.tellItems(a, e)
		for _, ans := range o.sim.Answers() {
			if ans.Outcome != ecs.OutcomeApplied && ans.Body == o.player {
				o.result(ans.Seq, tell.Code(ans.Outcome))
			}
		}
	}
	if a.Tick-o.last < snapshotEvery {
		return
	}
	o.last = a.Tick
	if !o.bound {
		o.is.Round(nil)
		return
	}
	o.arena = o.is.Round(o.arena[:0])
	var ack uint32
	if pl := o.sim.players.Get(e); pl != nil {
		ack = pl.AckSeq
	}
	o.arena = o.is.Build(&o.view, e, ack, o.arena, &o.frame)
	if len(o.frame.Parts) == 0 {
		return
	}
	b := o.sim.Built()
	for _, hc := range o.frame.Statics {
		b.Map.Static(hc, &o.static)
		o.send(&o.static)
	}
	snap := make([]byte, 0, o.frame.Len)
	for _, p := range o.frame.Parts {
		snap = append(snap, p...)
	}
	o.out = append(o.out, snap)
	o.view.Written.Store(o.frame.Round)
}

// tellItems tells the player what this tick changed of its things, as a
// host does (the events of one tick, each told once).
func (o *Offline) tellItems(a *ecs.Area, e ecs.Entity) {
	items := o.sim.Built().Items
	var inventory, recipes bool
	var containers []ecs.Cell
	for _, ev := range o.sim.Events() {
		switch ev.Kind {
		case ecs.EventInventory:
			inventory = inventory || ev.Entity == e
		case ecs.EventRecipes:
			recipes = recipes || ev.Entity == e
		case ecs.EventContainer:
			if ev.Amount == 1 && ev.By != e {
				continue
			}
			x, y := a.Grid.XY(ev.Cell)
			if p := o.sim.pos.Get(e); ev.Amount == 1 || p != nil && max(p.X-x, x-p.X, p.Y-y, y-p.Y) <= 1 {
				if !slices.Contains(containers, ev.Cell) {
					containers = append(containers, ev.Cell)
				}
			}
		}
	}
	if inventory {
		if inv := a.InventoryOf(e); inv != nil {
			o.send(tell.Inventory(inv))
		}
	}
	if recipes {
		o.send(tell.Recipes(items.Known(e)))
	}
	for _, c := range containers {
		if m := tell.Container(items, a, c, OfflineAccount); m != nil {
			o.send(m)
		}
	}
	items.Told()
}

// tellInventory sends the player its inventory and the recipes it knows.
func (o *Offline) tellInventory(e ecs.Entity) {
	if inv := o.sim.Area().InventoryOf(e); inv != nil {
		o.send(tell.Inventory(inv))
	}
	o.send(tell.Recipes(o.sim.Built().Items.Known(e)))
}

// result answers one intent with code.
func (o *Offline) result(seq uint32, code wire.Code) {
	o.out = append(o.out, wire.AppendIntentResult(nil, seq, code))
}

// send queues one message for the client.
func (o *Offline) send(m wire.Message) {
	b, err := wire.Encode(m)
	if err != nil {
		panic(fmt.Sprintf("engine: encode %T: %v", m, err)) // every message the host makes encodes
	}
	o.out = append(o.out, b)
}

// Take returns the frames for the client since the last Take, in order.
func (o *Offline) Take() [][]byte {
	out := o.out
	o.out = nil
	return out
}

// Save is the offline Area's state: its Area and the player's things and
// square, for [NewOffline] to build it again.
func (o *Offline) Save() ([]byte, error) {
	blob, err := o.sim.Save()
	if err != nil {
		return nil, err
	}
	e, _ := o.sim.Entity(o.player)
	char, err := o.sim.Built().Items.SaveCharacter(e)
	if err != nil {
		return nil, err
	}
	sv := save{Version: saveVersion, Area: blob, Character: char}
	if p := o.sim.pos.Get(e); p != nil {
		sv.X, sv.Y = p.X, p.Y
	}
	return cbor.Marshal(sv)
}
