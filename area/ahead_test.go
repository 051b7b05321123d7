//go:build leytest

package area

import (
	"testing"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
)

// TestARestDecidedAheadCountsOnTheFrame holds hostArea.rest asked ahead,
// as the clock asks at the end of the tick whose round handed the client
// its frame (ecs.Area.AskRestAhead): with the frame not yet written whole,
// the rest counts on it being written by the next slot (ecs.Area.Expect)
// and lasts until the keep-alive; the clock visits the Area in that slot
// if it is not, and the rule asked there runs a round
// (TestWhatKeepsAnAreaFromResting; ecs's
// TestARestDecidedAheadHoldsOnlyWhatItCountedOn). What else keeps an
// Area from resting still does.
func TestARestDecidedAheadCountsOnTheFrame(t *testing.T) {
	h, _, c, _ := aloneAtHome(t)
	expectMsg[*wire.Snapshot](c, 5*time.Second) // a keep-alive: the view is at rest
	ha := h.area(1)
	ask := func(unrounded bool) (tick, until, keepAlive, round uint64, expects int) {
		done := make(chan struct{})
		ha.a.PostNow(func(a *ecs.Area) {
			defer close(done)
			tick = ha.atRest(a)
			ha.unrounded = unrounded
			view := &ha.order[0].peer.view
			written := view.Written.Swap(0) // its last frame not written whole
			until, expects = a.AskRestAhead(tick)
			view.Written.Store(written)
			keepAlive = ha.interest.KeepAliveAt(view)
			round = ha.snapTick + uint64(h.cfg.SnapshotEvery)
		})
		<-done
		return
	}
	tick, until, keepAlive, _, expects := ask(false)
	if until != keepAlive-1 || expects != 1 {
		t.Errorf("a frame not written whole: rests through tick %d from %d, counting on %d values; want through %d, the tick before the keep-alive, counting on its frame", until, tick, expects, keepAlive-1)
	}
	tick, until, _, round, _ := ask(true)
	if until > round-1 {
		t.Errorf("a frame not written whole and a tick since the last round: rests through tick %d from %d; want through %d at most", until, tick, round-1)
	}
}
