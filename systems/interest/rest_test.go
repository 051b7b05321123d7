package interest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/statics"
)

// step posts a step of c's body in direction d, ticks, and reports
// whether the body moved one square that way.
func step(f *fanout, c *client, d ecs.Dir) bool {
	p := *f.s.pos.Get(c.e)
	f.seq++
	f.a.Post(c.e, ecs.Intent{Seq: f.seq, Kind: ecs.IntentStep, Dir: d})
	f.a.Step()
	dx, dy := d.Delta()
	q := *f.s.pos.Get(c.e)
	return q.X == p.X+dx && q.Y == p.Y+dy
}

// stepAway steps c's body one square in the first straight direction
// (no corner rule) with two squares ahead on the grid that lets it move,
// and reports the direction.
func stepAway(t *testing.T, f *fanout, c *client) ecs.Dir {
	t.Helper()
	p := *f.s.pos.Get(c.e)
	g := f.a.Grid
	for d := ecs.Dir(0); d < 8; d += 2 {
		dx, dy := d.Delta()
		if x2, y2 := p.X+2*dx, p.Y+2*dy; x2 < 0 || y2 < 0 || x2 >= g.W() || y2 >= g.H() {
			continue
		}
		if step(f, c, d) {
			return d
		}
	}
	t.Fatal("no free square to step to")
	return 0
}

// TestRestKeepsDeltas: rounds found quiet without a walk of the cells
// keep the client in sync with every cell in view, so the first change
// after a rest goes as a relative record (a step: a couple of bytes), not
// as the cell whole again.
func TestRestKeepsDeltas(t *testing.T) {
	f := newFanout(t, 2, 0) // both see everything
	mover, watcher := f.clients[0], f.clients[1]
	d := stepAway(t, f, mover) // faces d from now on
	for range 3 {
		f.round()
	}
	frames := f.frames
	for range 5 { // at rest: quiet, found so without a walk
		f.a.Step()
		f.a.Step()
		f.round()
	}
	if f.frames != frames {
		t.Fatalf("%d frames while nothing changed", f.frames-frames)
	}
	if !step(f, mover, d) { // the same way: a step, not a turn
		t.Fatal("the second step, the same way as the first, was refused")
	}
	f.arena = f.s.Round(f.arena[:0])
	f.arena = f.s.Build(&watcher.v, watcher.e, 0, f.arena, &f.frame)
	want := wire.AppendStep(nil, mover.e.ID(), wire.Dir(d))
	if _, got := recordsOf(t, message(&f.frame)); !bytes.Equal(got, want) {
		t.Fatalf("after a rest, one step is sent as %d bytes of records %x; want the step alone, %x", len(got), got, want)
	}
}

// TestNewSessionIsNeverQuiet: a view reset for a new session gets a frame
// that resets the client's view at its next round, even in an Area at
// rest whose last frame to the old session was never written (its ack_seq
// and written round then match the new session's zeroes).
func TestNewSessionIsNeverQuiet(t *testing.T) {
	f := newFanout(t, 3, 0)
	f.s.SetKeepAlive(10)
	c := f.clients[0]
	f.arena = f.s.Round(f.arena[:0])
	f.arena = f.s.Build(&c.v, c.e, 0, f.arena, &f.frame) // never written
	if len(f.frame.Parts) == 0 {
		t.Fatal("no first frame")
	}
	f.a.Step()
	c.v.Reset()
	if f.s.Rests(&c.v) {
		t.Fatal("a new session's view rests: its next round would be skipped")
	}
	f.arena = f.s.Round(f.arena[:0])
	f.arena = f.s.Build(&c.v, c.e, 0, f.arena, &f.frame)
	if len(f.frame.Parts) == 0 {
		t.Fatal("a new session's first round found quiet: its client holds nothing")
	}
	if flags, recs := recordsOf(t, message(&f.frame)); flags&wire.SnapshotReset == 0 || len(recs) == 0 {
		t.Fatalf("a new session's first frame: flags %v, %d bytes of records; want the reset flag and every cell", flags, len(recs))
	}
}

// TestSkippedRoundsSendWhatRunRoundsWould: an owner that runs no round
// while Rests holds for all its clients and no keep-alive is due
// (KeepAliveAt) sends exactly the frames, byte for byte, of one that runs
// every round: nothing where it ran none, the same records (relative ones
// included) after, each keep-alive at the same tick, the same maps. Two
// identical Areas live the same script of walking, turning, standing
// still, new sessions, lost frames and floor tiles laid; one runs every
// round, the other only those it must.
func TestSkippedRoundsSendWhatRunRoundsWould(t *testing.T) {
	const keepAlive = 7
	run, skip := newFanout(t, 6, 2), newFanout(t, 6, 2)
	var runFrames, skipFrames [][]byte
	for _, f := range []*fanout{run, skip} {
		f.s.SetKeepAlive(2 * keepAlive) // in ticks: two a round
	}
	lost := 0
	collect := func(f *fanout, into *[][]byte, round int) {
		*into = (*into)[:0]
		f.arena = f.s.Round(f.arena[:0])
		for i, c := range f.clients {
			f.arena = f.s.Build(&c.v, c.e, 0, f.arena, &f.frame)
			m := message(&f.frame)
			for _, hc := range f.frame.Statics { // the maps a host sends before the frame
				m = append(m, byte(hc), byte(hc>>8))
			}
			*into = append(*into, m)
			if len(f.frame.Parts) == 0 {
				continue
			}
			if i == 0 && round%13 == 5 { // now and then a frame is never written
				if f == skip {
					lost++
				}
				continue
			}
			c.v.Written.Store(f.frame.Round)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	dirs := make([]ecs.Dir, len(run.clients))
	skipped, relative, placed := 0, 0, 0
	for round := range 400 {
		moving := round%50 < 10 // mostly standing: runs of rounds to skip
		for range 2 {
			for i := range run.clients {
				if moving && rng.IntN(3) == 0 {
					if rng.IntN(4) == 0 {
						dirs[i] = ecs.Dir(rng.IntN(8))
					}
					for _, f := range []*fanout{run, skip} {
						f.a.Post(f.clients[i].e, ecs.Intent{Seq: uint32(round + 1), Kind: ecs.IntentStep, Dir: dirs[i]})
					}
				}
			}
			run.a.Step()
			skip.a.Step()
		}
		if round%50 == 30 { // a new session, while everyone stands
			run.clients[3].v.Reset()
			skip.clients[3].v.Reset()
		}
		if round%50 == 40 { // a floor tile laid where someone stands: its cell's map changes
			for _, f := range []*fanout{run, skip} {
				pos := f.s.pos.Get(f.clients[round%len(f.clients)].e)
				if f.m.Free(f.a.Grid.Cell(pos.X, pos.Y), true) {
					f.m.Place(statics.Object{Kind: wire.ObjectItem, X: pos.X, Y: pos.Y, Item: 1, Floor: true})
					placed++
				}
			}
		}
		rests := true
		for _, c := range skip.clients {
			rests = rests && skip.s.Rests(&c.v) && skip.a.Tick < skip.s.KeepAliveAt(&c.v)
		}
		collect(run, &runFrames, round)
		if rests {
			skipped++
			for i, m := range runFrames {
				if len(m) > 0 {
					t.Fatalf("round %d: skipped, but client %d was sent %d bytes by the Area that ran it", round, i, len(m))
				}
			}
			continue
		}
		collect(skip, &skipFrames, round)
		for i := range runFrames {
			if !bytes.Equal(runFrames[i], skipFrames[i]) {
				t.Fatalf("round %d, client %d: %d bytes after skipped rounds; %d when every round ran", round, i, len(skipFrames[i]), len(runFrames[i]))
			}
			var recs []byte // of a frame alone, with no maps after it
			switch m, _ := wire.Decode(skipFrames[i]); m := m.(type) {
			case *wire.Snapshot:
				recs = m.Records
			case *wire.ShortSnapshot:
				recs = m.Records
			}
			if round > 0 && len(recs) > 0 && len(recs) < 8 {
				relative++
			}
		}
	}
	if skipped < 150 || relative == 0 || lost == 0 || placed == 0 {
		t.Fatalf("%d rounds skipped, %d frames of relative records, %d frames lost, %d tiles laid: the script did not test what it must", skipped, relative, lost, placed)
	}
	t.Logf("%d of 400 rounds skipped; %d small frames of relative records", skipped, relative)
}

// TestLineOfSightNeverRests: the reasoning of Rests does not cover cells
// seen only in part, so an Area with line of sight never skips a round;
// the same Area without it does, once its client is in sync.
func TestLineOfSightNeverRests(t *testing.T) {
	for _, los := range []bool{false, true} {
		rules := ecs.RulesFor(ecs.KindArena)
		rules.LineOfSight = los
		f := newFanoutWith(t, rules, 1, 2)
		for range 3 {
			f.a.Step()
			f.round()
		}
		if got := f.s.Rests(&f.clients[0].v); got == los {
			t.Fatalf("line of sight %v: Rests %v; want %v", los, got, !los)
		}
	}
}
