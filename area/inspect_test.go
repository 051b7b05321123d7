package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
)

// TestInspectCountsTheWorld: the inspection counts player bodies in the
// world next to the sessions: a bound player, a dropped one within its
// grace, then only the bound one once the grace is over.
func TestInspectCountsTheWorld(t *testing.T) {
	const grace = 400 * time.Millisecond
	h, d := testHost(t, func(c *Config) { c.ResumeGrace = grace })
	d.spawnBusy(1, 32, 32) // 4 wanderers (32*32/256)
	stayer := dial(t, h)
	stayer.hello(d.grant(1, 100, 1, 3, 3, time.Minute), 1)
	leaver := dial(t, h)
	leaver.hello(d.grant(1, 101, 2, 6, 6, time.Minute), 2)
	d.grant(1, 102, 3, 9, 9, time.Minute) // a grant nobody uses yet
	inspect := func(id uint64) control.AreaState {
		t.Helper()
		d.send(&control.Inspect{ID: id})
		in := expect[*control.Inspection](d, 5*time.Second)
		if in.ID != id || len(in.Areas) != 1 {
			t.Fatalf("inspection %+v; want id %d and one area", in, id)
		}
		return in.Areas[0]
	}
	st := inspect(1)
	if st.Area != 1 || !st.Active || st.Players != 2 || st.Bound != 2 || st.Dropped != 0 || st.Grants != 1 || st.Bodies != st.Players+4 {
		t.Fatalf("with two bound players: %+v", st)
	}
	leaver.c.NetConn().Close()
	waitFor(t, "the drop seen", func() bool { s := inspect(2); return s.Dropped == 1 })
	st = inspect(3)
	if st.Players != 2 || st.Bound != 1 || st.Dropped != 1 || st.Overdue != 0 {
		t.Fatalf("within the grace: %+v; want 2 bodies, 1 bound, 1 dropped", st)
	}
	expectMsg[*wire.Snapshot](stayer, time.Second)
	waitFor(t, "the dropped body removed", func() bool { s := inspect(4); return s.Players == 1 })
	st = inspect(5)
	if st.Players != 1 || st.Bound != 1 || st.Dropped != 0 || st.Overdue != 0 {
		t.Fatalf("after the grace: %+v; want 1 body, 1 bound", st)
	}
}

// TestNewerIncarnationReplacesTheOld: a spawn of an Area the host runs,
// with a higher epoch (the director made a new incarnation: the old one's
// area_ready came too late, or the host was not adopted), drops the old
// incarnation, unpersisted, its players told to join again
// (rehello{AREA_CLOSING}), and makes the new one from the spawn: no body
// of the old world comes with it. (Before, the host took the new epoch in
// place, keeping bodies the store had elsewhere by then.) A resent spawn
// of the same incarnation changes nothing.
func TestNewerIncarnationReplacesTheOld(t *testing.T) {
	h, d := testHost(t, nil)
	d.spawn(1, 16, 16)
	p := dial(t, h)
	p.hello(d.grant(1, 100, 1, 3, 3, time.Minute), 1)
	d.send(&control.SpawnArea{Area: 1, Epoch: 1, Kind: "village", W: 16, H: 16, Seed: 1, Template: build.TemplateEmpty})
	if r := expect[*control.AreaReady](d, 5*time.Second); r.Error != "" || r.Epoch != 1 {
		t.Fatalf("a resent spawn answered %+v; want ready", r)
	}
	d.send(&control.SpawnArea{Area: 1, Epoch: 2, Kind: "village", W: 16, H: 16, Seed: 1, Template: build.TemplateEmpty})
	if r := expect[*control.AreaReady](d, 5*time.Second); r.Error != "" || r.Epoch != 2 {
		t.Fatalf("the newer incarnation's spawn answered %+v; want ready at epoch 2", r)
	}
	if rh := expectMsg[*wire.Rehello](p, 5*time.Second); rh.Code != wire.CodeAreaClosing {
		t.Errorf("the old incarnation's player got rehello %v; want AREA_CLOSING", rh.Code)
	}
	d.send(&control.Inspect{ID: 7})
	in := expect[*control.Inspection](d, 5*time.Second)
	if len(in.Areas) != 1 || in.Areas[0].Epoch != 2 || in.Areas[0].Players != 0 {
		t.Fatalf("after the newer spawn the host runs %+v; want area 1 at epoch 2 with no player", in.Areas)
	}
}
