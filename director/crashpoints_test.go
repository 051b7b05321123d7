//go:build leytest

package director

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leyworks/ley/internal/failpoint"
	"github.com/leyworks/ley/net/gate"
)

// crashPoint is a named crash point of a crossing with the outcome it
// must have: the Area the crossing player ends up in ("A" or "B"), or
// "log" when the outcome depends on a race the test cannot fix (then the
// director's log says which it was, and the store must agree).
type crashPoint struct {
	step     string
	director bool   // the point is in the director (else in a host)
	inB      bool   // the point is in the destination's host (else the source's)
	want     string // "A", "B" or "log"
	why      string
}

var crashPoints = []crashPoint{
	{failpoint.HostPortalOut, false, false, "A", "the source host dies before portal_out leaves it: the director never hears of the crossing"},
	{failpoint.HostPortalSent, false, false, "log", "the source host dies just after queueing portal_out: whether it reached the director before the connection broke is a race (the director's log tells)"},
	{failpoint.HostPortalResult, false, false, "B", "the source host dies when the result arrives: the character moved before the director answered"},
	{failpoint.HostPortalGrant, false, true, "A", "the destination host dies on the crossing's grant: the director refuses the crossing and the source restores the player"},
	{failpoint.DirectorPortalIn, true, false, "A", "the director dies on receiving portal_out: nothing was written; resends reach the next director past the window"},
	{failpoint.DirectorPortalGrant, true, false, "A", "the director dies with the transfer pending and the grant registered in B: the window passes and the transfer expires"},
	{failpoint.DirectorPortalMoved, true, false, "B", "the director dies after the move committed: the source's resends learn it from the next director"},
}

// TestCrashPoints arms each step of a crossing, in turn, to SIGKILL its
// process (the source host, the destination host, or the director), with
// three players (the one crossing, one more in A, one in B) and area
// hosts of the test's own that outlive a director. When a host dies the
// director stays up and re-homes its Areas on a spare host; when the
// director dies it is restarted once the source host's crossing timed
// out, and the hosts register again. Each point must end with its own
// outcome for the crossing player; every player then joins, the realm
// must hold exactly one body per player, each bound where the store has
// its character and where it was told, no transfer may stay pending, and
// a crossing must work again.
func TestCrashPoints(t *testing.T) {
	for _, cp := range crashPoints {
		t.Run(cp.step, func(t *testing.T) {
			ctx := context.Background()
			r := newCrashRealm(t)
			r.external = true
			// Armed at the step's second hit in each process: the first is
			// a crossing that puts a player in B (and makes B live) first.
			dirSpec, hostSpec := "", cp.step+"@2"
			if cp.director {
				dirSpec, hostSpec = cp.step+"@2", ""
			}
			r.start(dirSpec)
			owner, a, b := setupCrash(t, r)
			// One Area each on the two armed hosts, placed by the joins below.
			r.startHost("h-one", hostSpec, 1)
			r.startHost("h-two", hostSpec, 1)
			p := newCrashPlayer(t, r, owner, a, b, "crosser")
			q := newCrashPlayer(t, r, owner, a, b, "stayer")
			w := newCrashPlayer(t, r, owner, a, b, "other")
			players := []*crashPlayer{p, q, w}
			conns := map[*crashPlayer]*gate.ClientConn{}
			for _, x := range []*crashPlayer{p, q} {
				c, err := x.enter(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns[x] = c
			}
			// w goes to B by a crossing (the armed step's first hit), so that
			// B is live on the other host before the armed crossing.
			wc, err := w.enter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if done, err := w.cross(wc, 1); err != nil || !done {
				t.Fatalf("crossing before the armed one: completed=%v err=%v (%s)", done, err, w.last)
			}
			conns[w] = wc
			// The spare host: unarmed, room for both Areas.
			r.startHost("h-spare", "", 2)
			before := map[string]bool{}
			for _, h := range r.hosts {
				before[h.name] = h.dead()
			}
			done, err := p.cross(conns[p], 2)
			t.Logf("crossing into the armed step: completed=%v err=%v (%s)", done, err, p.last)
			waitFor(t, "the armed process killed", func() bool {
				if r.died() {
					return true
				}
				for _, h := range r.hosts {
					if h.dead() && !before[h.name] {
						return true
					}
				}
				return false
			})
			if cp.director {
				// The source host's crossing times out (4 s) before the next
				// director can answer it: a resend never completes it late.
				time.Sleep(5 * time.Second)
				r.start("")
			} else if r.died() {
				t.Fatal("the director died at a host's crash point")
			}
			for _, c := range conns {
				c.Close(1000, "")
			}
			// Everyone comes back in; where the crossing player ends up is
			// the point's outcome.
			for _, x := range players {
				deadline := time.Now().Add(30 * time.Second)
				for {
					c, err := x.enter(ctx)
					if isInvariant(err) {
						t.Fatal(err)
					}
					if err == nil {
						conns[x] = c
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("account %d not back in within 30 s: %v", x.acct, err)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
			want := cp.want
			if want == "log" {
				want = "A"
				if strings.Contains(r.logLines(p.acct), "player crossed a portal") {
					want = "B"
				}
			}
			wantArea := map[string]uint32{"A": a, "B": b}[want]
			if p.belief != wantArea {
				t.Errorf("after %s the crossing player is in area %d; want %s (%d): %s", cp.step, p.belief, want, wantArea, cp.why)
			}
			tr := settledTruth(t, owner, r.store, players, 20*time.Second)
			if lost, doubled, err := judge(tr, players); err != nil {
				t.Fatalf("after %s: %d lost, %d doubled: %v", cp.step, lost, doubled, err)
			}
			waitFor(t, "no transfer pending", func() bool {
				pending, err := r.store.PendingTransfers(ctx)
				return err == nil && len(pending) == 0
			})
			// The realm works again: the crossing player crosses back.
			if done, err := p.cross(conns[p], 3); err != nil || !done {
				t.Fatalf("crossing after recovery: completed=%v err=%v (%s); the realm's log:\n%s", done, err, p.last, r.fullLog())
			}
			conns[p].Close(1000, "")
			c, err := p.enter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns[p] = c
			tr = settledTruth(t, owner, r.store, players, 20*time.Second)
			if lost, doubled, err := judge(tr, players); err != nil {
				t.Fatalf("after the recovery crossing: %d lost, %d doubled: %v", lost, doubled, err)
			}
			for _, c := range conns {
				c.Close(1000, "")
			}
		})
	}
}
