package interest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/action"
	"github.com/leyworks/ley/systems/statics"
)

// quietClient is what a client holds, as the test follows it: its view
// and ack_seq as the frames delivered left them, the ack_seq the server
// has for it, and whether its last frame was lost.
type quietClient struct {
	*client
	v         *view.View
	ack       uint32      // the session's ack_seq on the server
	heard     uint32      // the ack_seq of the last frame delivered
	lastFrame int         // the round of its last frame
	lost      bool        // its last frame was replaced before it was written
	st        wire.Stream // its connection, as of the frames delivered
}

// TestQuietRoundsTellTheTruth: a round with nothing new for a client sends
// it no frame, and then what it holds is still the truth: every entity in
// its view as it stands, and its ack_seq. A frame that never arrived, a
// changed ack_seq (an applied intent that moved nothing), a map that
// changed in view (its static goes before the frame) or a keep-alive that
// is due always sends one, and so does a new session. Players mostly
// stand still, so most of their rounds are quiet; half the time all of
// them do, and the rounds are found quiet without walking the cells
// (System.unchanged), which must change none of this: nor a body that
// comes and goes while the others stand.
func TestQuietRoundsTellTheTruth(t *testing.T) {
	const keepAlive = 10
	f := newFanout(t, 30, 12)
	f.s.SetKeepAlive(2 * keepAlive) // in ticks: two a round
	f.a.Rules.MaxPlayers++          // room for a visitor
	rng := rand.New(rand.NewPCG(7, 8))
	info := &wire.AreaInfo{Area: 1, W: uint32(f.a.Grid.W()), H: uint32(f.a.Grid.H()), CellSize: uint16(f.hash.Size())}
	var cs []*quietClient
	for _, c := range f.clients {
		v := view.New()
		if err := v.Apply(info); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, &quietClient{client: c, v: v})
	}
	var quiet, frames, keepAlives, ackOnly, placed, resets, visits int
	var visitor ecs.Entity
	var err error
	seq := uint32(0)
	for round := 1; round <= 600; round++ {
		// Half of every 100 rounds nobody moves: a round then has nothing
		// new for anyone, unless its map changed, its session is new or
		// its ack_seq moved.
		still := round%100 >= 50
		for range 2 { // two ticks a round; a player steps now and then
			seq++
			for _, c := range cs {
				if !still && rng.IntN(25) == 0 {
					f.a.Post(c.e, ecs.Intent{Seq: seq, Kind: ecs.IntentStep, Dir: ecs.Dir(rng.IntN(8))})
				}
			}
			f.a.Step()
		}
		for _, c := range cs {
			if rng.IntN(30) == 0 {
				c.ack++ // an intent applied that changed nothing in view
			}
		}
		placedAt := int32(-1)
		if round%40 == 0 || round%100 == 70 { // a floor tile laid under the first player: its cell's map changes
			pos := f.s.pos.Get(cs[0].e)
			if f.m.Free(f.a.Grid.Cell(pos.X, pos.Y), true) {
				f.m.Place(statics.Object{Kind: wire.ObjectItem, X: pos.X, Y: pos.Y, Item: 1, Floor: true})
				placedAt = f.hash.CellAt(pos.X, pos.Y)
				placed++
			}
		}
		switch round % 100 {
		case 60: // a body comes to stand next to the first player, and goes
			pos := f.s.pos.Get(cs[0].e)
			x, y, ok := action.NearestFree(f.a.Grid, pos.X+1, pos.Y)
			if !ok {
				t.Fatal("no free square for a visitor")
			}
			if visitor, err = f.a.SpawnPlayer(uint64(1000+round), x, y); err != nil {
				t.Fatal(err)
			}
			visits++
		case 65:
			f.a.Despawn(visitor)
		}
		if round%100 == 80 { // a new session for the second player: its client holds nothing
			c := cs[1]
			c.client.v.Reset()
			c.v = view.New()
			if err := c.v.Apply(info); err != nil {
				t.Fatal(err)
			}
			c.heard, c.lost, c.st = 0, false, wire.Stream{} // a new connection
			resets++
		}
		f.arena = f.s.Round(f.arena[:0])
		for i, c := range cs {
			f.arena = f.s.Build(&c.client.v, c.e, c.ack, f.arena, &f.frame)
			if len(f.frame.Parts) == 0 {
				if !f.frame.Quiet {
					t.Fatalf("round %d: no frame for a body in the world, and not quiet", round)
				}
				if i == 0 && placedAt >= 0 {
					t.Fatalf("round %d: quiet, while the map of a cell in view changed", round)
				}
				if c.lost {
					t.Fatalf("round %d: quiet after a frame that never arrived", round)
				}
				if c.heard != c.ack {
					t.Fatalf("round %d: quiet, but the client holds ack_seq %d, not %d", round, c.heard, c.ack)
				}
				quiet++
				continue
			}
			if f.frame.Quiet {
				t.Fatalf("round %d: a frame marked quiet", round)
			}
			if i == 0 && placedAt >= 0 && !slices.Contains(f.frame.Statics, placedAt) {
				t.Fatalf("round %d: the map of cell %d changed, and the frame does not send it", round, placedAt)
			}
			frames++
			if gap := round - c.lastFrame; c.lastFrame > 0 && gap > keepAlive {
				t.Fatalf("round %d: %d rounds without a frame; the keep-alive is %d", round, gap, keepAlive)
			}
			c.lastFrame = round
			st := c.st // read as the client would; kept only if the frame arrives
			m, err := st.Decode(message(&f.frame))
			if err != nil {
				t.Fatalf("round %d: frame does not decode: %v", round, err)
			}
			snap := m.(*wire.Snapshot)
			if snap.Tick != f.a.Tick {
				t.Fatalf("round %d: the frame carries tick %d, not %d", round, snap.Tick, f.a.Tick)
			}
			if snap.AckSeq != c.ack {
				t.Fatalf("round %d: the frame carries ack_seq %d, not %d", round, snap.AckSeq, c.ack)
			}
			if len(snap.Records) == 0 && snap.Flags == 0 {
				if c.heard != c.ack {
					ackOnly++
				} else {
					keepAlives++
				}
			}
			if c.lost = round > 1 && rng.IntN(5) == 0; c.lost {
				continue // replaced before it was written
			}
			if err := c.v.Apply(m); err != nil {
				t.Fatalf("round %d: the frame breaks the protocol: %v", round, err)
			}
			c.heard, c.st = snap.AckSeq, st
			c.client.v.Written.Store(f.frame.Round)
		}
		for _, c := range cs {
			if c.lost {
				continue // the next round repairs it
			}
			want := f.inView(c.e)
			if len(c.v.Entities) != len(want) {
				t.Fatalf("round %d: the client sees %d entities; %d are in its view", round, len(c.v.Entities), len(want))
			}
			for id, w := range want {
				if got := c.v.Entities[id]; got != w {
					t.Fatalf("round %d: entity %d seen as %+v; want %+v", round, id, got, w)
				}
			}
		}
	}
	t.Logf("%d frames (%d keep-alives, %d carrying only an ack_seq), %d quiet rounds", frames, keepAlives, ackOnly, quiet)
	if quiet < frames {
		t.Fatalf("%d quiet rounds for %d frames: players who mostly stand still should mostly get none", quiet, frames)
	}
	if keepAlives == 0 || ackOnly == 0 || placed == 0 || resets == 0 || visits == 0 {
		t.Fatalf("%d keep-alives, %d ack-only frames, %d maps changed, %d new sessions, %d visits: the test missed a case it is for", keepAlives, ackOnly, placed, resets, visits)
	}
}
