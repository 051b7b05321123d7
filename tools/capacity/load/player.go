package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/net/client"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// window bounds the intents a player keeps unanswered (net/client's
// window): an intent that would be one more is not sent and counted lost
// (at 10 intents a second that is 25 s without an answer).
const window = 256

// player is one simulated client: its account, its net/client session
// client, and what it measures. The client's reader goroutines call its
// handler; its pattern's goroutine sends.
// codeBuckets is how many refusal codes a player counts apart: every code
// the protocol has (38) and room to grow; a code past them is counted in
// the last, which names no code.
const codeBuckets = 64

type player struct {
	acct  Account
	token string
	sh    *shard
	st    *stats
	local net.Addr // the source address of its WebSocket connections (nil: any)

	cl *client.Client // set before any goroutine uses the player

	mu       sync.Mutex
	up       bool               // counted in st.connected
	closing  bool               // the run is closing the connection
	lost     int64              // intents not sent: a window of them was unanswered
	rejected [codeBuckets]int64 // answered by intent_result, by code (codes past the last bucket in it)
	movedAt  time.Time          // the last portal_moved (pattern portal)
	hops     chan bool          // pattern portal: a crossing followed (true) or failed (false)
	hopped   func(time.Duration)
	trade    wire.Trade // the last trade message (pattern build)
	// closed wakes the sending pattern when the player's Area closed
	// under it (rehello AREA_CLOSING): it joins again.
	closed chan struct{}

	// The snapshot round of its Areas, from the first area_info: its
	// ticks and its length (ns).
	roundTicks atomic.Uint64
	roundLen   atomic.Int64
}

// newClient gives the player its session client for pattern.
func (p *player) newClient(pattern Pattern) error {
	cfg := client.DefaultConfig()
	cfg.LocalAddr, cfg.Window = p.local, window
	cfg.FollowPortals = pattern == PatternPortal
	cfg.Handler = client.Handler{Frame: p.onFrame, Answer: p.onAnswer, Event: p.onEvent}
	cl, err := client.New(cfg)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	p.cl = cl
	return nil
}

// connect binds the player over WebSocket with a join's grant: hello,
// then hello_ack.
func (p *player) connect(ctx context.Context, wsURL, grant string, joinID uint64) error {
	_, err := p.cl.Hello(ctx, wsURL, grant, joinID)
	var re *client.RefusedError
	if errors.As(err, &re) {
		return fmt.Errorf("hello refused: %s", re.Code)
	}
	return err
}

// onFrame counts a frame, and a snapshot's gap (the first snapshot of a
// connection has none: a crossing's pause is no gap).
func (p *player) onFrame(f client.Frame) {
	measuring := p.st.measuring.Load()
	if f.Type == wire.TypeTrade {
		p.onTrade(f.Bytes)
	}
	p.sh.mu.Lock()
	defer p.sh.mu.Unlock()
	p.sh.frames++
	p.sh.bytes += int64(len(f.Bytes))
	if f.Type == wire.TypeAreaInfo && p.roundTicks.Load() == 0 {
		if m, err := wire.Decode(f.Bytes); err == nil {
			if ai, ok := m.(*wire.AreaInfo); ok {
				p.noteRound(ai)
			}
		}
	}
	if f.Type != wire.TypeSnapshot || f.First {
		return
	}
	p.recordGap(f, measuring)
}

// noteRound keeps the snapshot round of the player's Area (its ticks and
// its length) from its area_info, once: every Area of a realm has the
// same rates.
func (p *player) noteRound(ai *wire.AreaInfo) {
	if ai.TickHz == 0 || ai.SnapshotHz == 0 {
		return
	}
	p.roundLen.Store(int64(time.Second / time.Duration(ai.SnapshotHz)))
	p.roundTicks.Store(uint64(max(ai.TickHz/ai.SnapshotHz, 1)))
}

// gapOf is a snapshot's gap as the SLO counts it (client.GapLessQuiet),
// at the rates of the player's Areas.
func (p *player) gapOf(f client.Frame) time.Duration {
	return client.GapLessQuiet(f.Gap, f.Ticks, p.roundTicks.Load(), time.Duration(p.roundLen.Load()))
}

// recordGap counts a snapshot's gap (gapOf) in the player's shard, whose
// lock the caller holds: in the current second's histogram, and in the
// steady phase's while measuring.
func (p *player) recordGap(f client.Frame, measuring bool) {
	gap := p.gapOf(f)
	us := max(gap.Microseconds(), histMin)
	_ = p.sh.gapSec.RecordValue(us)
	stutter := gap > StutterGap
	if stutter {
		p.sh.stutters++
	}
	if measuring {
		_ = p.sh.gap.RecordValue(us)
		if stutter {
			p.sh.steadyStutters++
		}
	}
}

// onTrade keeps the state of the trade the player is in, as the server
// last told it (the build pattern bargains on it), and counts trades done.
func (p *player) onTrade(b []byte) {
	m, err := wire.Decode(b)
	if err != nil {
		p.st.fail("trade: " + short(err))
		return
	}
	t := m.(*wire.Trade)
	if t.Status == wire.TradeDone {
		p.st.tradesDone.Add(1)
	}
	p.mu.Lock()
	p.trade = *t
	p.mu.Unlock()
}

// openTrade returns the trade the player is in, if one is open.
func (p *player) openTrade() (wire.Trade, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trade, p.trade.ID != 0 && p.trade.Status == wire.TradeOpen
}

// onAnswer records an intent's answer: its round trip, and a refusal's
// code.
func (p *player) onAnswer(a client.Answer) {
	if a.Outcome == client.Refused {
		p.refused(a.Code)
	}
	if (a.Outcome == client.Applied || a.Outcome == client.Refused) && p.st.measuring.Load() {
		p.sh.mu.Lock()
		_ = p.sh.rtt.RecordValue(max(a.RTT.Microseconds(), histMin))
		p.sh.mu.Unlock()
	}
}

func (p *player) refused(code wire.Code) {
	p.mu.Lock()
	p.rejected[min(int(code), len(p.rejected)-1)]++
	p.mu.Unlock()
}

// onEvent counts what a walking or hopping player must not see, and keeps
// the connected count.
func (p *player) onEvent(e client.Event) {
	switch e.Kind {
	case client.EventBound:
		p.mu.Lock()
		if p.closing {
			p.mu.Unlock()
			return
		}
		moved := p.movedAt
		p.mu.Unlock()
		p.setUp(true)
		if e.Followed {
			if p.hopped != nil {
				p.hopped(e.At.Sub(moved))
			}
			p.signalHop(true)
		}
	case client.EventMoved:
		p.setUp(false) // the crossing ended this connection's session
		if p.hops == nil {
			p.st.fail("portal_moved")
			return
		}
		p.mu.Lock()
		p.movedAt = e.At
		p.mu.Unlock()
	case client.EventRestored:
		if p.hops != nil { // a hop that was meant to go through
			p.st.fail(e.Type.String())
			return
		}
		// A random walker stepped onto a map's portal to where it may not
		// go (a template's map has its own portals): the server kept it
		// where it was and said so, as it should.
		p.st.portalRefused.Add(1)
	case client.EventEnded:
		p.setUp(false) // a rejoin comes after this (p.closed, below)
		switch {
		case e.Err != nil: // a crossing not followed
			if !p.isClosing() {
				p.st.fail("hop: " + short(e.Err))
			}
			p.signalHop(false)
		case e.Type == wire.TypeTakenOver:
			p.st.fail("taken_over")
		case e.Code == wire.CodeAreaClosing && p.hops == nil:
			select { // the sending pattern joins again
			case p.closed <- struct{}{}:
			default:
			}
		default:
			p.st.fail("rehello: " + e.Code.String())
		}
	case client.EventClosing:
		if e.Code == wire.CodeAreaClosing && p.hops == nil {
			p.st.closings.Add(1)
			return
		}
		p.st.fail("area_closing: " + e.Code.String())
	case client.EventError:
		p.st.fail("error: " + e.Code.String())
	case client.EventDropped:
		p.setUp(false)
		if !p.isClosing() {
			var ce *gate.CloseError
			if errors.As(e.Err, &ce) {
				p.st.fail(fmt.Sprintf("closed by server: %d %s", ce.Code, ce.Reason))
			} else {
				p.st.fail("read: connection lost")
			}
		}
	case client.EventDisconnected:
		p.setUp(false)
	case client.EventUnmatched:
		if !e.Duplicate {
			p.st.fail(fmt.Sprintf("intent_result for unknown seq (%s)", e.Code))
		}
	case client.EventProtocol:
		p.st.fail("frame: " + short(e.Err))
	}
}

// setUp counts the player in (or out of) the connected players.
func (p *player) setUp(up bool) {
	p.mu.Lock()
	was := p.up
	p.up = up
	p.mu.Unlock()
	switch {
	case up && !was:
		p.st.connected.Add(1)
	case !up && was:
		p.st.connected.Add(-1)
	}
}

func (p *player) isClosing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closing
}

func (p *player) signalHop(ok bool) {
	if p.hops == nil {
		return
	}
	select {
	case p.hops <- ok:
	default:
	}
}

// short is an error's last clause: "broken pipe", not the addresses
// before it, so error counts stay few.
func short(err error) string {
	m := err.Error()
	if i := strings.LastIndex(m, ": "); i >= 0 {
		return m[i+2:]
	}
	return m
}

// sendFailed counts a failed send unless the run is closing; it reports
// whether the pattern should stop.
func (p *player) sendFailed(err error) bool {
	if errors.Is(err, client.ErrFull) {
		p.mu.Lock()
		p.lost++ // a window of intents unanswered: this one is not sent
		p.mu.Unlock()
		return false
	}
	if !p.isClosing() && !errors.Is(err, client.ErrClosed) {
		p.st.fail("write: " + short(err))
	}
	return true
}

// send runs the pattern until ctx ends. When the player's Area closes
// under it (its host stops), it joins again with rejoin, which reports
// whether the player is back in.
func (p *player) send(ctx context.Context, pattern Pattern, rng *rand.Rand, rejoin func(context.Context) bool) {
	var every time.Duration
	burst := 1
	switch pattern {
	case PatternWalk:
		every = 100 * time.Millisecond
	case PatternWalk5:
		every = 200 * time.Millisecond
	case PatternBursty:
		every, burst = time.Second, 5
	case PatternBuild:
		every = 200 * time.Millisecond
	case PatternIdle: // sends nothing, and joins again if its Area closes
	default:
		return
	}
	var t *time.Timer
	var tick <-chan time.Time // never ready for the idle
	if every > 0 {
		// A random phase, so players started together do not send together.
		t = time.NewTimer(time.Duration(rng.Int64N(int64(every))))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.closed:
			if !rejoin(ctx) {
				return
			}
			continue
		case <-tick:
		}
		if ctx.Err() != nil { // both were ready, and select took the timer
			return
		}
		t.Reset(every)
		for range burst {
			var err error
			if pattern == PatternBuild {
				it := buildIntent(rng)
				if t, ok := p.openTrade(); ok {
					it = tradeIntent(rng, t)
				}
				_, err = p.cl.Send(it)
			} else {
				_, err = p.cl.Step(wire.Dir(rng.IntN(8)))
			}
			if err != nil && p.areaClosed() {
				break // p.closed comes: its end is being told
			}
			if err != nil && p.sendFailed(err) {
				return
			}
		}
	}
}

// areaClosed reports whether the player's session ended because its Area
// closed (rehello AREA_CLOSING), told or about to be told to onEvent.
func (p *player) areaClosed() bool {
	st := p.cl.State()
	return st.Phase == client.Ended && st.EndCode == wire.CodeAreaClosing
}

// hop runs the portal pattern until ctx ends: one move-to onto the
// Area's portal per session; the client follows the crossing (portal_moved
// to the other Area, with its grant), and the player walks again.
func (p *player) hop(ctx context.Context, portalX, portalY int32) {
	for ctx.Err() == nil { // a crossing that ended as the sending stopped sends no more
		if _, err := p.cl.MoveTo(portalX, portalY); err != nil && p.sendFailed(err) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case ok := <-p.hops:
			if !ok {
				return
			}
		}
	}
}

// close ends the player's connections on the driver's side.
func (p *player) close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.setUp(false)
	if p.cl != nil {
		_ = p.cl.Close()
	}
}

// tally is a player's intent accounting, read after the drain. Intents
// made void by a crossing are not counted as sent: the protocol answers
// none of them.
type tally struct {
	sent, answered, applied, dups, lost int64
	rejected                            [codeBuckets]int64
}

func (p *player) tally() tally {
	var s client.Stats
	if p.cl != nil {
		s = p.cl.Stats()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return tally{
		sent: s.Sent - s.Void, answered: s.Applied + s.Refused + s.Unseen, applied: s.Applied,
		dups: s.Duplicates + s.Strays, lost: p.lost, rejected: p.rejected,
	}
}

// buildIntent is one intent of the build pattern: a step (40%), a place
// of one of the starter kit's slots on a side (15%: its cauldron too), a
// take from a side (15%), an action on a side (10%), a move of a few
// wood or planks into a container on a side (10%), a craft at a side
// (2.5%), the opening of a trade with a player on a side (2.5%) and a use
// of the kit's blueprint (5%). In an open trade it bargains instead
// (tradeIntent).
func buildIntent(rng *rand.Rand) wire.Intent {
	side := wire.Dir(2 * rng.IntN(4))
	switch r := rng.IntN(20); {
	case r < 8:
		return wire.Intent{Kind: wire.IntentStep, Dir: wire.Dir(rng.IntN(8))}
	case r < 11:
		return wire.Intent{Kind: wire.IntentPlace, Dir: side, Item: wire.ItemSlots{From: uint8(rng.IntN(starterSlots))}}
	case r < 14:
		return wire.Intent{Kind: wire.IntentTake, Dir: side}
	case r < 16:
		return wire.Intent{Kind: wire.IntentAction, Dir: side}
	case r < 18:
		return wire.Intent{Kind: wire.IntentMoveItem, Dir: side,
			Item: wire.ItemSlots{From: uint8(starterSlots + rng.IntN(4)), To: wire.ContainerSlot + uint8(rng.IntN(4)), Count: uint16(1 + rng.IntN(2))}}
	case r < 19:
		if rng.IntN(2) == 0 {
			return wire.Intent{Kind: wire.IntentTrade, Dir: wire.Dir(rng.IntN(8))}
		}
		return wire.Intent{Kind: wire.IntentCraft, Dir: side}
	}
	return wire.Intent{Kind: wire.IntentUse, Item: wire.ItemSlots{From: uint8(rng.IntN(starterSlots))}}
}

// tradeIntent is what a build player in an open trade sends: an offer of
// one or two things of a kit's slot (a third of the time, once its side
// holds something), else a confirmation of the revision it was last
// shown, and now and then it calls the trade off.
func tradeIntent(rng *rand.Rand, t wire.Trade) wire.Intent {
	switch r := rng.IntN(10); {
	case r < 3 || len(t.Mine) == 0:
		return wire.Intent{Kind: wire.IntentOffer, Item: wire.ItemSlots{From: uint8(rng.IntN(starterSlots)), Count: uint16(1 + rng.IntN(2))}}
	case r < 9:
		return wire.Intent{Kind: wire.IntentConfirm, Item: wire.ItemSlots{Count: t.Rev}}
	}
	return wire.Intent{Kind: wire.IntentCancel}
}

// starterSlots is how many inventory slots the shipped starter kit fills
// (its chairs ... its cauldron, wood and blueprint): what the build
// pattern places and uses; the slots after it fill with what gathering,
// taking back and crafting give.
const starterSlots = 11
