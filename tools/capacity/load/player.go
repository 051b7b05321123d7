package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// ringSize bounds the intents a player tracks in flight: a seq still
// unanswered ringSize seqs later is counted lost (at 10 intents a second
// that is 51 s without an answer).
const ringSize = 512

// slot is one intent in flight: its seq and send time (ns since the run's
// epoch); at is 0 once answered.
type slot struct {
	seq uint32
	at  int64
}

// player is one simulated client. The reader goroutine and the sender
// goroutine share the fields under mu; conn's ReadMessage is the reader's
// alone.
type player struct {
	acct  Account
	token string
	sh    *shard
	st    *stats
	epoch time.Time // the run's start; times are ns since it

	conn  *gate.ClientConn
	local net.Addr // the source address of its WebSocket connections (nil: any)

	mu        sync.Mutex
	base      uint32         // seqs of this session start after base
	sent      uint32         // highest seq sent (base before the first)
	pending   [ringSize]slot // seq s at s%ringSize while unanswered
	ackHigh   uint32         // highest ack_seq seen (base before the first)
	answered  int64          // distinct seqs answered
	applied   int64          // answered by ack_seq
	rejected  [32]int64      // answered by intent_result, by code (codes past 31 in [31])
	dups      int64          // answers to seqs already answered
	lost      int64          // seqs evicted from the ring unanswered
	lastSnap  int64          // ns since epoch of the last snapshot, 0 before the first
	closing   bool           // the run is closing the connection
	connected bool
	hopping   bool // portal_moved received: the close that follows is expected
	hops      chan *wire.PortalMoved
}

// connect joins the player's Area and binds it over WebSocket: hello,
// then wait for hello_ack.
func (p *player) connect(ctx context.Context, wsURL, grant string, joinID uint64) error {
	c, err := gate.DialFrom(ctx, wsURL, p.local)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	hello, err := wire.Encode(&wire.Hello{Grant: grant, JoinID: joinID, Versions: []uint16{wire.Version}})
	if err != nil {
		c.Close(1000, "")
		return err
	}
	if err := c.WriteMessage(hello); err != nil {
		c.Close(1000, "")
		return fmt.Errorf("hello: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.NetConn().SetReadDeadline(deadline)
	for {
		b, err := c.ReadMessage()
		if err != nil {
			c.Close(1000, "")
			return fmt.Errorf("hello: %w", err)
		}
		t, err := wire.Peek(b)
		if err != nil {
			continue
		}
		switch t {
		case wire.TypeHelloAck:
			_ = c.NetConn().SetReadDeadline(time.Time{})
			p.mu.Lock()
			p.conn = c
			p.mu.Unlock()
			return nil
		case wire.TypeError:
			m, err := wire.Decode(b)
			c.Close(1000, "")
			if e, ok := m.(*wire.Error); ok && err == nil {
				return fmt.Errorf("hello refused: %s", e.Code)
			}
			return errors.New("hello refused")
		}
	}
}

// read runs until the connection closes, recording every frame. It reads
// the connection current when it starts (a portal hop replaces p.conn and
// starts another read).
func (p *player) read() {
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	for {
		b, err := conn.ReadMessage()
		now := int64(time.Since(p.epoch))
		if err != nil {
			p.mu.Lock()
			if p.conn != conn {
				// A portal hop has replaced this connection (the server
				// closes it after portal_moved, and a fast hop can be done
				// before that close is read): its end is expected, and the
				// hop did its bookkeeping.
				p.mu.Unlock()
				return
			}
			closing, was, hopping := p.closing, p.connected, p.hopping
			p.connected = false
			p.mu.Unlock()
			if was {
				p.st.connected.Add(-1)
			}
			if !closing && !hopping {
				var ce *gate.CloseError
				if errors.As(err, &ce) {
					p.st.fail(fmt.Sprintf("closed by server: %d %s", ce.Code, ce.Reason))
				} else {
					p.st.fail("read: connection lost")
				}
			}
			return
		}
		t, err := wire.Peek(b)
		if err != nil {
			p.st.fail("frame: " + err.Error())
			continue
		}
		switch t {
		case wire.TypeSnapshot:
			ack, ok := snapshotAck(b)
			if !ok {
				p.st.fail("frame: bad snapshot")
				continue
			}
			p.onSnapshot(now, ack, len(b))
		case wire.TypeIntentResult:
			seq, code, ok := intentResult(b)
			if !ok {
				p.st.fail("frame: bad intent_result")
				continue
			}
			p.onResult(now, seq, code, len(b))
		case wire.TypePortalMoved:
			p.count(len(b))
			m, err := wire.Decode(b)
			pm, ok := m.(*wire.PortalMoved)
			if err != nil || !ok || p.hops == nil {
				p.st.fail(describe(b))
				continue
			}
			p.mu.Lock()
			p.hopping = true
			p.mu.Unlock()
			select {
			case p.hops <- pm:
			default:
			}
		case wire.TypePortalBlocked, wire.TypePortalTransferRejected:
			p.count(len(b))
			if p.hops != nil { // a hop that was meant to go through
				p.st.fail(describe(b))
				continue
			}
			// A random walker stepped onto a map's portal to where it may
			// not go (a template's map has its own portals): the server
			// kept it where it was and said so, as it should.
			p.st.portalRefused.Add(1)
		case wire.TypeError, wire.TypeRehello, wire.TypeAreaClosing, wire.TypeTakenOver:
			p.count(len(b))
			p.st.fail(describe(b))
		default:
			p.count(len(b))
		}
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

// describe names a rare server message for the error counts.
func describe(b []byte) string {
	m, err := wire.Decode(b)
	if err != nil {
		return "frame: " + err.Error()
	}
	switch m := m.(type) {
	case *wire.Error:
		return "error: " + m.Code.String()
	case *wire.Rehello:
		return "rehello: " + m.Code.String()
	case *wire.AreaClosing:
		return "area_closing: " + m.Reason.String()
	case *wire.TakenOver:
		return "taken_over"
	default:
		return m.Type().String()
	}
}

func (p *player) count(n int) {
	p.sh.mu.Lock()
	p.sh.frames++
	p.sh.bytes += int64(n)
	p.sh.mu.Unlock()
}

// onSnapshot records a snapshot's gap and the seqs its ack_seq answers.
func (p *player) onSnapshot(now int64, ack uint32, n int) {
	measuring := p.st.measuring.Load()
	p.mu.Lock()
	gap := int64(-1)
	if p.lastSnap != 0 {
		gap = now - p.lastSnap
	}
	p.lastSnap = now
	var rtts [8]int64 // most snapshots answer 0..2 seqs; more are recorded below
	nr := 0
	var more []int64
	if ack > p.ackHigh {
		from := p.ackHigh + 1
		if ack-from >= ringSize {
			from = ack - ringSize + 1
		}
		for s := from; s <= ack && s <= p.sent; s++ {
			sl := &p.pending[s%ringSize]
			if sl.seq == s && sl.at != 0 {
				r := now - sl.at
				sl.at = 0
				p.answered++
				p.applied++
				if nr < len(rtts) {
					rtts[nr] = r
					nr++
				} else {
					more = append(more, r)
				}
			}
		}
		p.ackHigh = ack
	}
	p.mu.Unlock()

	p.sh.mu.Lock()
	p.sh.frames++
	p.sh.bytes += int64(n)
	if gap >= 0 {
		us := max(gap/1000, histMin)
		_ = p.sh.gapSec.RecordValue(us)
		stutter := gap > int64(StutterGap)
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
	if measuring {
		for _, r := range rtts[:nr] {
			_ = p.sh.rtt.RecordValue(max(r/1000, histMin))
		}
		for _, r := range more {
			_ = p.sh.rtt.RecordValue(max(r/1000, histMin))
		}
	}
	p.sh.mu.Unlock()
}

// onResult records an intent_result: the rejection of one seq.
func (p *player) onResult(now int64, seq uint32, code wire.Code, n int) {
	measuring := p.st.measuring.Load()
	rtt := int64(-1)
	p.mu.Lock()
	if seq <= p.base || seq > p.sent || p.sent-seq >= ringSize {
		p.mu.Unlock()
		p.count(n)
		p.st.fail(fmt.Sprintf("intent_result for unknown seq (%s)", code))
		return
	}
	if sl := &p.pending[seq%ringSize]; sl.seq == seq && sl.at != 0 {
		rtt = now - sl.at
		sl.at = 0
		p.answered++
		p.rejected[min(int(code), len(p.rejected)-1)]++
	} else {
		p.dups++
	}
	p.mu.Unlock()
	p.sh.mu.Lock()
	p.sh.frames++
	p.sh.bytes += int64(n)
	if measuring && rtt >= 0 {
		_ = p.sh.rtt.RecordValue(max(rtt/1000, histMin))
	}
	p.sh.mu.Unlock()
}

// send runs the pattern until ctx ends.
func (p *player) send(ctx context.Context, pattern Pattern, rng *rand.Rand) {
	var every time.Duration
	burst := 1
	switch pattern {
	case PatternWalk:
		every = 100 * time.Millisecond
	case PatternWalk5:
		every = 200 * time.Millisecond
	case PatternBursty:
		every, burst = time.Second, 5
	default:
		return
	}
	// A random phase, so players started together do not send together.
	t := time.NewTimer(time.Duration(rng.Int64N(int64(every))))
	defer t.Stop()
	buf := make([]byte, 0, 32)
	in := wire.Intent{Kind: wire.IntentStep}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(every)
		for range burst {
			in.Dir = wire.Dir(rng.IntN(8))
			p.mu.Lock()
			p.sent++
			in.Seq = p.sent
			sl := &p.pending[in.Seq%ringSize]
			if sl.at != 0 {
				p.lost++ // ringSize seqs ago, never answered
			}
			sl.seq, sl.at = in.Seq, max(int64(time.Since(p.epoch)), 1)
			p.mu.Unlock()
			buf = wire.AppendIntent(buf[:0], &in)
			if err := p.conn.WriteMessage(buf); err != nil {
				p.mu.Lock()
				closing := p.closing
				p.sent-- // never left: not an intent sent
				sl.at = 0
				p.mu.Unlock()
				if !closing {
					p.st.fail("write: " + short(err))
				}
				return
			}
		}
	}
}

// hop runs the portal pattern until ctx ends: one move-to onto the
// Area's portal per session, then, on portal_moved, a new connection to
// the other Area with its grant; read is started anew for each connection
// by startRead. It returns each hop's latency (portal_moved to hello_ack).
func (p *player) hop(ctx context.Context, portalX, portalY int32, startRead func(), hopped func(time.Duration)) {
	buf := make([]byte, 0, 32)
	for {
		p.mu.Lock()
		p.sent++
		in := wire.Intent{Seq: p.sent, Kind: wire.IntentMoveTo, Target: wire.Cell{X: portalX, Y: portalY}}
		sl := &p.pending[in.Seq%ringSize]
		if sl.at != 0 {
			p.lost++
		}
		sl.seq, sl.at = in.Seq, max(int64(time.Since(p.epoch)), 1)
		conn := p.conn
		p.mu.Unlock()
		buf = wire.AppendIntent(buf[:0], &in)
		if err := conn.WriteMessage(buf); err != nil {
			p.mu.Lock()
			closing := p.closing
			p.sent--
			sl.at = 0
			p.mu.Unlock()
			if !closing {
				p.st.fail("write: " + short(err))
			}
			return
		}
		var moved *wire.PortalMoved
		select {
		case <-ctx.Done():
			return
		case moved = <-p.hops:
		}
		p.mu.Lock()
		if p.connected { // the old connection's reader may not have seen its end yet
			p.connected = false
			p.st.connected.Add(-1)
		}
		p.mu.Unlock()
		t0 := time.Now()
		conn.Close(1000, "crossed")
		if err := p.connect(ctx, moved.WSURL, moved.Grant, moved.JoinID); err != nil {
			if ctx.Err() == nil {
				p.st.fail("hop: " + short(err))
			}
			return
		}
		hopped(time.Since(t0))
		p.mu.Lock()
		p.hopping, p.lastSnap = false, 0 // the crossing's pause is no snapshot gap
		p.connected = true
		p.mu.Unlock()
		p.st.connected.Add(1)
		startRead()
	}
}

// close ends the connection on the driver's side.
func (p *player) close() {
	p.mu.Lock()
	p.closing = true
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		_ = c.Close(1000, "load done")
	}
}

// tally is a player's intent accounting, read after the drain.
type tally struct {
	sent, answered, applied, dups, lost int64
	rejected                            [32]int64
}

func (p *player) tally() tally {
	p.mu.Lock()
	defer p.mu.Unlock()
	return tally{sent: int64(p.sent - p.base), answered: p.answered, applied: p.applied, dups: p.dups, lost: p.lost, rejected: p.rejected}
}
