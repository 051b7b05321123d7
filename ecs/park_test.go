package ecs

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// parkable is an Area with a system and two wanderers, in a census, and a
// restore that rebuilds it the same way from the squares it kept.
type parkable struct {
	a        *Area
	census   Census
	sys      *countingSystem
	restores int
	squares  [][2]int32
}

func newParkable(t *testing.T) *parkable {
	t.Helper()
	p := &parkable{a: newTestArea(t, 8, 8), sys: &countingSystem{}}
	if err := p.a.Use(p.sys); err != nil {
		t.Fatal(err)
	}
	p.a.JoinCensus(&p.census)
	for _, sq := range [][2]int32{{1, 1}, {5, 6}} {
		if _, err := p.a.SpawnWanderer(sq[0], sq[1], 7, 4, 3); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// park parks the Area, keeping its bodies' squares as its state.
func (p *parkable) park() {
	p.squares = p.squares[:0]
	p.a.EachBody(func(_ Entity, pos Position) bool {
		p.squares = append(p.squares, [2]int32{pos.X, pos.Y})
		return true
	})
	p.a.Park(p.restore)
}

func (p *parkable) restore(a *Area) {
	p.restores++
	if err := a.Renew(Config{ID: a.ID, Rules: a.Rules, W: 8, H: 8}); err != nil {
		panic(err)
	}
	if err := a.Use(p.sys); err != nil {
		panic(err)
	}
	for _, sq := range p.squares {
		if _, err := a.SpawnWanderer(sq[0], sq[1], 7, 4, 3); err != nil {
			panic(err)
		}
	}
}

// TestAParkedAreaLetsGoAndComesBackWhole: a parked Area holds no world,
// grid, system or body (its census counts none), and whatever runs it
// next (control work, a poll, a tick, Step) finds it restored first, the
// same bodies on the same squares and its tick going on from where it
// was.
func TestAParkedAreaLetsGoAndComesBackWhole(t *testing.T) {
	for _, how := range []string{"PostNow", "poll", "tick", "Step"} {
		t.Run(how, func(t *testing.T) {
			p := newParkable(t)
			a := p.a
			a.Step()
			a.Step()
			tick := a.Tick
			p.park()
			if !a.Parked() || a.Grid != nil || len(a.systems) != 0 || a.Wanderers() != 0 || p.census.Entities() != 0 {
				t.Fatalf("parked: parked %v, grid %v, %d systems, %d wanderers, census %d; want nothing held",
					a.Parked(), a.Grid != nil, len(a.systems), a.Wanderers(), p.census.Entities())
			}
			var saw *Grid
			work := func(a *Area) { saw = a.Grid }
			c := newTestClock(t, 1)
			c.Add(a)
			now := time.Unix(1000, 0)
			switch how {
			case "PostNow":
				a.PostNow(work)
			case "poll":
				a.PostControl(work)
				for i := 0; i < 5; i++ { // a poll period
					c.Step(now)
					now = now.Add(c.Period())
				}
			case "tick":
				a.PostControl(work)
				a.Wake()
				c.Step(now)
			case "Step":
				a.PostControl(work)
				a.Step()
			}
			if p.restores != 1 || saw == nil || a.Parked() {
				t.Fatalf("after %s: %d restores, work saw a grid: %v, parked %v; want the restore first, once", how, p.restores, saw != nil, a.Parked())
			}
			if a.Wanderers() != 2 || p.census.Entities() != 2 {
				t.Fatalf("restored: %d wanderers, census %d; want 2 and 2", a.Wanderers(), p.census.Entities())
			}
			for _, sq := range [][2]int32{{1, 1}, {5, 6}} {
				if _, ok := a.EntityAt(a.Grid.Cell(sq[0], sq[1])); !ok {
					t.Errorf("no body on %v after the restore", sq)
				}
			}
			if err := a.CheckGrid(); err != nil {
				t.Fatal(err)
			}
			if how == "tick" || how == "Step" {
				if a.Tick != tick+1 || p.sys.n.Load() != 3 {
					t.Fatalf("after the restore's tick: tick %d, system ran %d times; want %d and 3", a.Tick, p.sys.n.Load(), tick+1)
				}
			} else if a.Tick != tick {
				t.Fatalf("tick %d after %s; want %d (a frozen Area's time stands still)", a.Tick, how, tick)
			}
		})
	}
}

// TestARestoreThatFailsFailsTheArea: a restore that panics, or leaves the
// Area without a world, fails the Area as a panic in a tick does, and
// the work that woke it never runs on a half-built world.
func TestARestoreThatFailsFailsTheArea(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restore func(a *Area)
		want    string
	}{
		{"panics", func(*Area) { panic("no such template") }, "no such template"},
		{"does not renew", func(*Area) {}, "did not renew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestArea(t, 8, 8)
			var failed atomic.Value
			a.OnPanic = func(_ *Area, p Panic) { failed.Store(p.Value) }
			a.Park(tc.restore)
			ran := false
			a.PostNow(func(*Area) { ran = true })
			v := failed.Load()
			if !a.Failed() || ran || v == nil || !strings.Contains(strings.ToLower(toString(v)), tc.want) {
				t.Fatalf("failed %v, work ran %v, panic %v; want failed with %q, the work not run", a.Failed(), ran, v, tc.want)
			}
		})
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	}
	return ""
}

// TestParkAndRenewRefuseWhatTheyCannotDo: Park refuses an active Area, one
// with deferred work and one parked already; Renew refuses an Area
// holding its world and a config naming another Area.
func TestParkAndRenewRefuseWhatTheyCannotDo(t *testing.T) {
	panics := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	a := newTestArea(t, 8, 8)
	a.Wake()
	panics("active", func() { a.Park(func(*Area) {}) })
	a.Freeze()
	a.Defer(func(*Area) {})
	panics("deferred work", func() { a.Park(func(*Area) {}) })
	a.barrier()
	if err := a.Renew(Config{ID: a.ID, W: 8, H: 8}); !errors.Is(err, ErrNotParked) {
		t.Errorf("renew of a whole Area: %v; want ErrNotParked", err)
	}
	a.Park(func(a *Area) {})
	panics("parked", func() { a.Park(func(*Area) {}) })
	if err := a.Renew(Config{ID: a.ID + 1, W: 8, H: 8}); err == nil || a.Grid != nil {
		t.Errorf("renew as another Area: %v, grid %v; want refused", err, a.Grid != nil)
	}
}

// TestAParkInAPollKeepsItsAnswers: a frozen Area's poll answers the stray
// intents it finds before its timer fires; a park in that timer (as a
// host's chores park) leaves those answers for AfterTick, which gets
// them in the same poll.
func TestAParkInAPollKeepsItsAnswers(t *testing.T) {
	c := newTestClock(t, 1)
	a := newTestArea(t, 8, 8)
	e, err := a.SpawnPlayer(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []Answer
	a.AfterTick = func(a *Area) { got = append(got, a.Outbox...) }
	now := time.Unix(1000, 0)
	a.OnTimer = func(a *Area, _ time.Time) {
		a.Park(func(a *Area) {
			if err := a.Renew(Config{ID: a.ID, Rules: a.Rules, W: 8, H: 8}); err != nil {
				panic(err)
			}
		})
	}
	a.SetTimer(now)
	c.Add(a)
	a.Post(e, Intent{Seq: 5, Kind: IntentStep, Dir: East})
	for range 5 { // a poll period
		c.Step(now)
		now = now.Add(c.Period())
	}
	if !a.Parked() || a.Failed() {
		t.Fatalf("parked %v, failed %v; want parked in its timer", a.Parked(), a.Failed())
	}
	if len(got) != 1 || got[0].Seq != 5 || got[0].Outcome != OutcomeEntityGone {
		t.Fatalf("answers %+v; want seq 5 ENTITY_GONE", got)
	}
}
