package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
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
