package interest

import (
	"bytes"
	"testing"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
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
	m, err := wire.Decode(message(&f.frame))
	if err != nil {
		t.Fatal(err)
	}
	want := wire.AppendStep(nil, mover.e.ID(), wire.Dir(d))
	if got := m.(*wire.Snapshot).Records; !bytes.Equal(got, want) {
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
	f.arena = f.s.Round(f.arena[:0])
	f.arena = f.s.Build(&c.v, c.e, 0, f.arena, &f.frame)
	if len(f.frame.Parts) == 0 {
		t.Fatal("a new session's first round found quiet: its client holds nothing")
	}
	m, err := wire.Decode(message(&f.frame))
	if err != nil {
		t.Fatal(err)
	}
	if s := m.(*wire.Snapshot); s.Flags&wire.SnapshotReset == 0 || len(s.Records) == 0 {
		t.Fatalf("a new session's first frame: flags %v, %d bytes of records; want the reset flag and every cell", s.Flags, len(s.Records))
	}
}
