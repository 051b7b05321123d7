package interest

import (
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/spatial"
	"github.com/leyworks/ley/systems/statics"
)

// client is one player's body with its view, as a host keeps a session.
type client struct {
	e ecs.Entity
	v View
}

// fanout is one Area of moving players whose frames go to a sink instead
// of sockets: deliver gets each, in order, and reports whether it was
// written (a frame it drops was replaced before it was written).
type fanout struct {
	a       *ecs.Area
	hash    *spatial.Hash
	m       *statics.Map
	s       *System
	clients []*client
	rng     *rand.Rand
	seq     uint32
	bytes   int64
	frames  int64
	arena   []byte
	frame   Frame
	deliver func(c *client, f *Frame) bool
}

func newFanout(tb testing.TB, players, radius int) *fanout {
	tb.Helper()
	rules := ecs.RulesFor(ecs.KindArena)
	rules.StepsPerSecond = 20 // everyone moves every tick
	return newFanoutWith(tb, rules, players, radius)
}

// newFanoutWith is newFanout by rules (MaxPlayers set to players).
func newFanoutWith(tb testing.TB, rules ecs.Rules, players, radius int) *fanout {
	tb.Helper()
	return newFanoutSized(tb, rules, players, radius, 128)
}

// newFanoutSized is newFanoutWith on a side x side floor.
func newFanoutSized(tb testing.TB, rules ecs.Rules, players, radius, side int) *fanout {
	tb.Helper()
	rules.MaxPlayers = players
	a, err := ecs.NewArea(ecs.Config{ID: 1, Rules: rules, W: side, H: side})
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.Use(systems.Default()...); err != nil {
		tb.Fatal(err)
	}
	h, err := spatial.Attach(a, 8)
	if err != nil {
		tb.Fatal(err)
	}
	m := statics.New(a.Grid, h)
	s, err := New(a, h, m, radius)
	if err != nil {
		tb.Fatal(err)
	}
	f := &fanout{a: a, hash: h, m: m, s: s, rng: rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < players; i++ {
		f.spawn(uint64(i + 1))
	}
	f.deliver = func(_ *client, fr *Frame) bool { return true }
	return f
}

// spawn puts a new player's body on a free square and gives it a client.
func (f *fanout) spawn(account uint64) *client {
	x, y, _ := action.NearestFree(f.a.Grid, f.rng.Int32N(f.a.Grid.W()), f.rng.Int32N(f.a.Grid.H()))
	e, err := f.a.SpawnPlayer(account, x, y)
	if err != nil {
		panic(err)
	}
	c := &client{e: e}
	f.clients = append(f.clients, c)
	return c
}

// tick moves every player one random step (posted as intents, as clients would).
func (f *fanout) tick() {
	f.seq++
	for _, c := range f.clients {
		f.a.Post(c.e, ecs.Intent{Seq: f.seq, Kind: ecs.IntentStep, Dir: ecs.Dir(f.rng.IntN(8))})
	}
	f.a.Step()
}

// round runs one snapshot round to every client, as a host does: a frame
// each from the shared arena, marked written when deliver says so.
func (f *fanout) round() {
	f.arena = f.s.Round(f.arena[:0])
	for _, c := range f.clients {
		f.arena = f.s.Build(&c.v, c.e, 0, f.arena, &f.frame)
		if len(f.frame.Parts) == 0 {
			continue
		}
		f.frames++
		f.bytes += int64(f.frame.Len)
		if f.deliver(c, &f.frame) {
			c.v.Written.Store(f.frame.Round)
		}
	}
}

// inView is what the client whose body is e must hold: every entity
// standing in the cells within its interest, as the world has it.
func (f *fanout) inView(e ecs.Entity) map[uint32]wire.EntityState {
	pos := f.s.pos.Get(e)
	want := map[uint32]wire.EntityState{}
	for _, hc := range f.hash.CellsWithin(pos.X, pos.Y, f.s.radius, nil) {
		for id := f.hash.First(hc); id >= 0; id = f.hash.Next(id) {
			o := f.hash.Entity(id)
			want[o.ID()] = f.s.State(o, f.hash.Square(id))
		}
	}
	return want
}

// message is a frame's bytes, as its writev puts them on the wire.
func message(fr *Frame) []byte {
	var msg []byte
	for _, part := range fr.Parts {
		msg = append(msg, part...)
	}
	return msg
}

// recordsOf decodes a frame of either form for its flags and records
// alone: a short snapshot's tick and ack_seq count from the client's
// snapshot before it, which a caller of this does not follow.
func recordsOf(t testing.TB, b []byte) (wire.SnapshotFlags, []byte) {
	t.Helper()
	m, err := wire.Decode(b)
	if err != nil {
		t.Fatalf("frame does not decode: %v", err)
	}
	switch m := m.(type) {
	case *wire.Snapshot:
		return m.Flags, m.Records
	case *wire.ShortSnapshot:
		return 0, m.Records
	}
	t.Fatalf("a %T frame, not a snapshot", m)
	return 0, nil
}
