package ecs

import (
	"testing"
	"time"
	"unsafe"
)

// stepWall returns t with its wall reading moved by d (whole seconds) and
// its monotonic reading kept: what time.Now returns after the wall clock
// stepped by d. It writes time.Time's fields (wall: hasMonotonic bit, 33
// bits of seconds since 1885, 30 bits of ns; ext: monotonic ns), checked
// below by the readings it must give.
func stepWall(t *testing.T, tm time.Time, d time.Duration) time.Time {
	t.Helper()
	out := tm
	p := (*struct {
		wall uint64
		ext  int64
		loc  *time.Location
	})(unsafe.Pointer(&out))
	if p.wall&(1<<63) == 0 {
		t.Fatal("stepWall: the time has no monotonic reading")
	}
	p.wall = uint64(int64(p.wall) + int64(d/time.Second)<<30)
	if got := out.UnixNano() - tm.UnixNano(); got != int64(d) || out.Sub(tm) != 0 {
		t.Fatalf("stepWall: wall moved %v, monotonic %v; want %v and 0 (time.Time's layout changed?)", time.Duration(got), out.Sub(tm), d)
	}
	return out
}

// TestTimerKeepsMonotonicTime: an Area's timer falls due by the monotonic
// clock: a wall clock stepped back an hour neither holds it back an hour,
// nor does one stepped forward fire it early.
func TestTimerKeepsMonotonicTime(t *testing.T) {
	a, err := NewArea(Config{ID: 1, W: 8, H: 8})
	if err != nil {
		t.Fatal(err)
	}
	a.OnTimer = func(*Area, time.Time) {}
	now := time.Now()
	a.SetTimer(now.Add(250 * time.Millisecond))
	if late := stepWall(t, now.Add(300*time.Millisecond), -time.Hour); !a.timerDue(late) {
		t.Error("timer not due 300 ms after it was set for 250 ms, the wall clock stepped back an hour")
	}
	if early := stepWall(t, now.Add(100*time.Millisecond), time.Hour); a.timerDue(early) {
		t.Error("timer due 100 ms after it was set for 250 ms, the wall clock stepped forward an hour")
	}
	if !a.timerDue(now.Add(250 * time.Millisecond)) {
		t.Error("timer not due at its time")
	}
}
