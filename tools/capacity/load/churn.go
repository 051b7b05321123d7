package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/leyworks/ley/director/dirclient"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/view"
	"github.com/leyworks/ley/net/wire"
)

// Churn tunes the churn pattern: players arrive over the ramp as a Poisson
// process, walk within the movement budget for sessions of random length,
// and end each session in one of five ways drawn by weight: a clean leave
// (and a later return with a new join), a dropped socket resumed within
// the grace, a dropped socket past the grace (the body goes; a new join
// brings the player back), a second login from another connection that
// takes the session over, or a hop through the Area's portal. Every draw
// comes from the run's Seed, so a run can be replayed.
type Churn struct {
	// SessionMean is the mean time a session walks (exponential).
	SessionMean time.Duration
	// AwayMean is the mean time away after a clean leave (exponential).
	AwayMean time.Duration
	// ResumeGrace is the realm's resume grace; 0 reads it from the
	// director's /director/info.
	ResumeGrace time.Duration
	// Weights of the session endings. Hop needs Areas linked by portals
	// (the runner links provisioned pairs when Hop > 0).
	Leave, Resume, Rejoin, Takeover, Hop int
}

// DefaultChurn returns the churn defaults: 6 s sessions, 3 s away, and
// endings weighted leave 3, resume 3, rejoin 1, takeover 2, hop 2.
func DefaultChurn() Churn {
	return Churn{SessionMean: 6 * time.Second, AwayMean: 3 * time.Second, Leave: 3, Resume: 3, Rejoin: 1, Takeover: 2, Hop: 2}
}

// The churn events, as counted in [ChurnSummary].
const (
	EventArrive   = "arrive"   // a join (HTTP) and hello: first arrival or return
	EventLeave    = "leave"    // a clean close
	EventResume   = "resume"   // a dropped socket, resumed within the grace
	EventRejoin   = "rejoin"   // a dropped socket past the grace, then a new join
	EventTakeover = "takeover" // a second login's connection took the session over
	EventHop      = "hop"      // a crossing through a portal, chosen
	EventStray    = "stray"    // a crossing by a random step onto a portal
)

// EventCount counts one kind of churn event and its outcomes.
type EventCount struct {
	Count  int64 `json:"count"`
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"`
}

// ChurnSummary is what the churn pattern adds to a [Summary].
type ChurnSummary struct {
	Seed   uint64                `json:"seed"`
	Events map[string]EventCount `json:"events"`
	// GroundTruth counts the checks of a player's position against its
	// session's start plus the steps the server said it applied (made at
	// every session end, with no intent in flight); Mismatches those that
	// failed.
	GroundTruth int64 `json:"ground_truth_checks"`
	Mismatches  int64 `json:"ground_truth_mismatches"`
	// Unanswered counts intents still without an answer when their
	// session had to end (5 s after the player stopped sending).
	Unanswered int64 `json:"unanswered"`
	// Void counts intents sent after the server had ended the session by
	// portal_moved (the protocol leaves those unanswered and unapplied).
	Void int64 `json:"void"`
	// CrossedAway counts resumes refused because the body was crossing a
	// portal when its socket dropped and the crossing went on without it
	// (the director then showed the character in the other Area, where
	// the player joined).
	CrossedAway int64 `json:"crossed_away"`
	// MovedBack counts takeovers whose second login joined the Area a
	// crossing of the first session had just left (committed, not yet
	// arrived): the director moved the character back by the door, and
	// the new session plays there.
	MovedBack int64 `json:"moved_back"`
	// LateResumes counts resumes refused BAD_TOKEN that the driver itself
	// made too late: the refusal came after the resume grace had run out
	// since the drop (an overloaded driver's dial and hello), so the token
	// may rightly be gone; the player joined again, as a client must. A
	// refusal within the grace stays a failure.
	LateResumes int64 `json:"late_resumes"`
	// HopRetries counts move-tos a hop sent again because its walk to the
	// portal had ended short of it (boxed in by other bodies).
	HopRetries int64 `json:"hop_retries"`
	// MismatchDetails describes the first ground-truth mismatches.
	MismatchDetails []string `json:"mismatch_details,omitempty"`
}

// churnStats is the churn run's shared counters.
type churnStats struct {
	mu              sync.Mutex
	events          map[string]*EventCount
	groundTruth     int64
	mismatches      int64
	unanswered      int64
	void            int64
	crossedAway     int64
	lateResumes     int64
	hopRetries      int64
	movedBack       int64
	mismatchDetails []string
}

func (cs *churnStats) event(kind string, err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	e := cs.events[kind]
	if e == nil {
		e = &EventCount{}
		cs.events[kind] = e
	}
	e.Count++
	if err != nil {
		e.Failed++
	} else {
		e.OK++
	}
}

func (cs *churnStats) summary(seed uint64) *ChurnSummary {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := &ChurnSummary{Seed: seed, Events: map[string]EventCount{}, GroundTruth: cs.groundTruth, Mismatches: cs.mismatches, Unanswered: cs.unanswered, Void: cs.void, CrossedAway: cs.crossedAway, MovedBack: cs.movedBack, LateResumes: cs.lateResumes, HopRetries: cs.hopRetries, MismatchDetails: cs.mismatchDetails}
	for k, v := range cs.events {
		out.Events[k] = *v
	}
	return out
}

// cframe is one message read from one of a churner's connections.
type cframe struct {
	gen int
	m   wire.Message
	n   int
	err error // the connection ended (m is nil)
}

// inflight is one intent waiting for its answer.
type inflight struct {
	at  time.Time
	dir wire.Dir
	to  bool // a move-to: its squares are not known, so no ground truth
}

// churner is one player of the churn pattern, run by one goroutine; only
// its connections' reader goroutines share in (and they only send).
type churner struct {
	r    *runner
	p    *player
	cs   *churnStats
	cfg  Churn
	rng  *rand.Rand
	area uint32
	// portals: the Area's portal square, when the roster's Areas are
	// linked in pairs.
	portals bool

	in    chan cframe
	gen   int
	conn  *gate.ClientConn
	wsURL string
	token string // this session's resume token

	// The session: seqs and their answers, the position accounting.
	seq         uint32
	pending     map[uint32]inflight
	v           *view.View // the current connection's view (net/view)
	entity      uint32     // the player's entity, from hello_ack
	started     bool
	rebase      bool                // resumed: the next snapshot is the new baseline (answers sent on the lost connection were lost with it)
	resent      map[uint32]struct{} // seqs sent again after a resume: a STALE_SEQ for one says only that the server had the first copy
	resumes     int                 // this session's resumes
	rejectedNow int                 // this session's refused intents
	expX        int32
	expY        int32
	truthful    bool             // no move-to or portal restore in this session
	you         wire.EntityState // the player's entity, as the last snapshot left the view
	snapAt      time.Time        // the last snapshot's arrival
	snapN       int64            // snapshots this session

	// Intent accounting, added to the run's summary at the end.
	sent, answered, applied, dups int64
	rejected                      [32]int64

	joinTook []time.Duration // each join (HTTP join, dial, hello)
	everIn   bool            // bound at least once

	// Signals from the frames handled.
	oldSaw    map[int][]string // message types each earlier connection got, for a failed takeover's report
	oldMoved  *wire.PortalMoved
	takenOver bool
	moved     *wire.PortalMoved
	restored  bool
	closedGen map[int]bool
}

// refusal is a join or resume the server answered with an error.
type refusal struct{ code wire.Code }

func (r *refusal) Error() string { return "refused: " + r.code.String() }

// errSession is a session that ended in a way the pattern did not choose.
var errSession = errors.New("session ended unexpectedly")

func newChurner(r *runner, p *player, cs *churnStats, seed uint64, i int, portals bool) *churner {
	return &churner{
		r: r, p: p, cs: cs, cfg: r.cfg.Churn, rng: rand.New(rand.NewPCG(seed, uint64(i)+1)),
		area: p.acct.Area, portals: portals, in: make(chan cframe, 256), closedGen: map[int]bool{}, oldSaw: map[int][]string{},
	}
}

// exp draws an exponential duration of the given mean.
func (c *churner) exp(mean time.Duration) time.Duration {
	return time.Duration(-math.Log(1-c.rng.Float64()) * float64(mean))
}

// run plays the player from its arrival until end, then leaves cleanly
// (after every player still in has reached the end, see endGate).
func (c *churner) run(ctx context.Context, arrive, end time.Time) {
	defer c.r.churnEnd.finish()
	if !sleepUntil(ctx, arrive) {
		return
	}
	for {
		err := c.join(ctx)
		c.cs.event(EventArrive, err)
		if err == nil {
			break
		}
		c.p.st.fail("churn arrive: " + short(err))
		if !sleepUntil(ctx, time.Now().Add(time.Second)) || time.Now().After(end) {
			return
		}
	}
	for {
		stop := time.Now().Add(c.exp(c.cfg.SessionMean))
		last := stop.After(end)
		if last {
			stop = end
		}
		if err := c.walk(ctx, stop); err != nil {
			c.p.st.fail("churn walk: " + short(err))
			if !c.recover(ctx, end) {
				return
			}
			continue
		}
		c.quiesce()
		if last || ctx.Err() != nil {
			c.r.churnEnd.arrive(c.area)
			c.leave()
			return
		}
		if !c.depart(ctx, end) {
			return
		}
	}
}

// recover brings a player whose session broke back with a new join.
func (c *churner) recover(ctx context.Context, end time.Time) bool {
	c.closeConn()
	for time.Now().Before(end) && ctx.Err() == nil {
		err := c.join(ctx)
		c.cs.event(EventArrive, err)
		if err == nil {
			return true
		}
		sleepUntil(ctx, time.Now().Add(time.Second))
	}
	return false
}

// depart ends the session in a way drawn by weight and starts the next;
// it reports false when the run is over.
func (c *churner) depart(ctx context.Context, end time.Time) bool {
	cfg := c.cfg
	hop := cfg.Hop
	if !c.portals {
		hop = 0
	}
	total := cfg.Leave + cfg.Resume + cfg.Rejoin + cfg.Takeover + hop
	if total <= 0 {
		return true
	}
	n := c.rng.IntN(total)
	var kind string
	switch {
	case n < cfg.Leave:
		kind = EventLeave
	case n < cfg.Leave+cfg.Resume:
		kind = EventResume
	case n < cfg.Leave+cfg.Resume+cfg.Rejoin:
		kind = EventRejoin
	case n < cfg.Leave+cfg.Resume+cfg.Rejoin+cfg.Takeover:
		kind = EventTakeover
	default:
		kind = EventHop
	}
	var err error
	switch kind {
	case EventLeave:
		c.leave()
		c.cs.event(EventLeave, nil)
		if !sleepUntil(ctx, time.Now().Add(c.exp(cfg.AwayMean))) || time.Now().After(end) {
			return false
		}
		err = c.join(ctx)
		c.cs.event(EventArrive, err)
	case EventResume:
		err = c.resume(ctx)
		c.cs.event(EventResume, err)
	case EventRejoin:
		c.drop()
		if !sleepUntil(ctx, time.Now().Add(cfg.ResumeGrace+1500*time.Millisecond+time.Duration(c.rng.Int64N(int64(time.Second))))) {
			return false
		}
		err = c.join(ctx)
		c.cs.event(EventRejoin, err)
	case EventTakeover:
		err = c.takeover(ctx)
		c.cs.event(EventTakeover, err)
	case EventHop:
		err = c.hop(ctx)
		c.cs.event(EventHop, err)
	}
	if err != nil {
		c.p.st.fail("churn " + kind + ": " + short(err))
		return c.recover(ctx, end)
	}
	return true
}

// join asks the director for a grant to the player's Area and says hello:
// a fresh session.
func (c *churner) join(ctx context.Context) error {
	t0 := time.Now()
	defer func() { c.joinTook = append(c.joinTook, time.Since(t0)) }()
	dc := dirclient.New(c.r.cfg.Director)
	dc.Token = c.p.token
	var j dirclient.Join
	err := retry(ctx, func() error { var err error; j, err = dc.Join(ctx, c.area); return err })
	if err != nil {
		return fmt.Errorf("join: %s", errCode(err))
	}
	return c.hello(ctx, j.WSURL, j.Grant, j.JoinID)
}

// hello opens a connection and binds it with grant: a fresh session.
func (c *churner) hello(ctx context.Context, wsURL, grant string, joinID uint64) error {
	conn, gen, err := c.dial(ctx, wsURL)
	if err != nil {
		return err
	}
	if err := send(conn, &wire.Hello{Grant: grant, JoinID: joinID, Versions: []uint16{wire.Version}}); err != nil {
		return err
	}
	ack, err := c.awaitAck(gen, joinID)
	if err != nil {
		return err
	}
	c.switchTo(conn, wsURL, ack)
	c.newSession()
	c.everIn = true
	return nil
}

// dial opens a connection with its reader goroutine.
func (c *churner) dial(ctx context.Context, wsURL string) (*gate.ClientConn, int, error) {
	conn, err := gate.DialFrom(ctx, wsURL, c.p.local)
	if err != nil {
		return nil, 0, fmt.Errorf("dial: %w", err)
	}
	c.v = view.New() // the server resets a new connection's view
	c.gen++
	gen := c.gen
	go func() {
		for {
			b, err := conn.ReadMessage()
			if err != nil {
				c.in <- cframe{gen: gen, err: err}
				return
			}
			m, err := wire.Decode(b)
			if err != nil {
				c.in <- cframe{gen: gen, err: fmt.Errorf("decode: %w", err)}
				conn.Close(1000, "")
				return
			}
			c.in <- cframe{gen: gen, m: m, n: len(b)}
		}
	}()
	return conn, gen, nil
}

// awaitAck handles frames until the connection gen answers the join
// joinID with hello_ack (or refuses it).
func (c *churner) awaitAck(gen int, joinID uint64) (*wire.HelloAck, error) {
	timeout := time.After(15 * time.Second)
	for {
		select {
		case f := <-c.in:
			if f.gen != gen {
				c.handle(f)
				continue
			}
			if f.err != nil {
				return nil, fmt.Errorf("before hello_ack: %w", f.err)
			}
			c.count(f.n)
			switch m := f.m.(type) {
			case *wire.HelloAck:
				if m.JoinID != joinID {
					return nil, fmt.Errorf("hello_ack for join %d; want %d", m.JoinID, joinID)
				}
				return m, nil
			case *wire.Error:
				return nil, &refusal{m.Code}
			}
		case <-timeout:
			return nil, errors.New("no hello_ack within 15 s")
		}
	}
}

// switchTo makes conn (generation gen) the player's connection. The
// caller has closed or dropped the previous one, or expects the server to
// (a takeover).
func (c *churner) switchTo(conn *gate.ClientConn, wsURL string, ack *wire.HelloAck) {
	if c.conn == nil {
		c.p.st.connected.Add(1) // a takeover replaces a connection the count has
	}
	c.conn, c.wsURL, c.token = conn, wsURL, ack.ResumeToken
	c.area, c.entity = ack.Area, ack.Entity
	c.snapAt = time.Time{}
}

// newSession starts a session's seq space and position accounting.
func (c *churner) newSession() {
	c.seq = 0
	c.pending = map[uint32]inflight{}
	c.started, c.truthful, c.snapN = false, true, 0
	c.resent, c.resumes, c.rejectedNow = map[uint32]struct{}{}, 0, 0
	c.moved, c.restored = nil, false
}

// walk steps in random directions within the budget (one step per 200
// ms) until stop, handling frames meanwhile. A portal crossing it walks
// into is followed.
func (c *churner) walk(ctx context.Context, stop time.Time) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(time.Until(stop))
	defer end.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-end.C:
			return nil
		case <-tick.C:
			if !c.started || len(c.pending) > 2 {
				continue // no view yet, or answers lagging: do not pile up
			}
			if err := c.step(wire.Dir(c.rng.IntN(8))); err != nil {
				if !c.crossedBeforeClose() {
					return err
				}
				if err := c.follow(ctx, EventStray); err != nil {
					return err
				}
			}
		case f := <-c.in:
			if err := c.handle(f); err != nil {
				return err
			}
			if c.moved != nil {
				if err := c.follow(ctx, EventStray); err != nil {
					return err
				}
			}
		}
	}
}

// crossedBeforeClose reads what the server sent on the current connection
// before closing it (2 s at most), after a write on it failed: a stray
// crossing's portal_moved can still be unread when the next step goes out
// (the server closes the connection right after it). It reports whether
// one was there.
func (c *churner) crossedBeforeClose() bool {
	deadline := time.After(2 * time.Second)
	for c.moved == nil {
		select {
		case f := <-c.in:
			if err := c.handle(f); err != nil {
				return c.moved != nil // the close: nothing more comes
			}
		case <-deadline:
			return false
		}
	}
	return true
}

// step sends one step intent.
func (c *churner) step(d wire.Dir) error {
	c.seq++
	c.pending[c.seq] = inflight{at: time.Now(), dir: d}
	c.sent++
	return send(c.conn, &wire.Intent{Seq: c.seq, Kind: wire.IntentStep, Dir: d})
}

// handle applies one frame to the player's state. Frames of earlier
// connections only close or announce a takeover.
func (c *churner) handle(f cframe) error {
	if f.err != nil {
		c.closedGen[f.gen] = true
		if f.gen == c.gen {
			return fmt.Errorf("%w: %v", errSession, f.err)
		}
		return nil
	}
	c.count(f.n)
	if f.gen != c.gen {
		if saw := c.oldSaw[f.gen]; len(saw) < 16 {
			c.oldSaw[f.gen] = append(saw, f.m.Type().String())
		}
		switch m := f.m.(type) {
		case *wire.TakenOver:
			c.takenOver = true
		case *wire.PortalMoved:
			// A crossing the old session began (a step onto the portal still
			// in flight) ended it first: its body lives in m.Area now.
			c.oldMoved = m
		case *wire.Rehello, *wire.Snapshot, *wire.IntentResult, *wire.Presence, *wire.Static, *wire.AreaInfo:
		default:
			return fmt.Errorf("an old connection got %s", f.m.Type())
		}
		return nil
	}
	if err := c.v.Apply(f.m); err != nil {
		return fmt.Errorf("%w: the server broke the protocol: %v", errSession, err)
	}
	switch m := f.m.(type) {
	case *wire.Snapshot:
		c.snapshot(m)
	case *wire.IntentResult:
		c.result(m)
	case *wire.PortalMoved:
		c.moved = m
	case *wire.PortalBlocked, *wire.PortalTransferRejected:
		c.restored, c.truthful = true, false
	case *wire.Presence, *wire.Static, *wire.AreaInfo:
	default:
		return fmt.Errorf("%w: %s", errSession, describeMsg(f.m))
	}
	return nil
}

// snapshot records the gap and the seqs its ack_seq answers (applied),
// moving the expected position by their steps.
func (c *churner) snapshot(s *wire.Snapshot) {
	now := time.Now()
	sh := c.p.sh
	sh.mu.Lock()
	if !c.snapAt.IsZero() {
		gap := now.Sub(c.snapAt)
		us := max(gap.Microseconds(), histMin)
		_ = sh.gapSec.RecordValue(us)
		stutter := gap > StutterGap
		if stutter {
			sh.stutters++
		}
		if c.p.st.measuring.Load() {
			_ = sh.gap.RecordValue(us)
			if stutter {
				sh.steadyStutters++
			}
		}
	}
	sh.mu.Unlock()
	c.snapAt = now
	c.snapN++
	you, ok := c.v.Entities[c.entity]
	if !ok {
		c.p.st.fail("churn: the player's own entity is not in its view")
		return
	}
	if !c.started || c.rebase {
		// The first snapshot of a session, or of a resumed connection: its
		// position already holds the effect of every intent it acknowledges
		// (answers sent on a lost connection were lost with it).
		c.started, c.rebase = true, false
		c.expX, c.expY = you.X, you.Y
		for seq := range c.pending {
			if seq <= s.AckSeq {
				delete(c.pending, seq)
				c.answered++
			}
		}
	}
	for seq, in := range c.pending {
		if seq > s.AckSeq {
			continue
		}
		delete(c.pending, seq)
		c.answered++
		c.applied++
		c.rtt(in.at)
		if in.to {
			c.truthful = false
			continue
		}
		dx, dy := stepDelta(in.dir)
		c.expX += dx
		c.expY += dy
	}
	c.you = you
}

// result records a rejection.
func (c *churner) result(r *wire.IntentResult) {
	if _, copied := c.resent[r.Seq]; copied {
		delete(c.resent, r.Seq)
		if r.Code == wire.CodeStaleSeq {
			return // the server had the first copy; its answer is the one that counts
		}
	}
	in, ok := c.pending[r.Seq]
	if !ok {
		c.dups++
		c.p.st.fail(fmt.Sprintf("intent_result for a seq not in flight (%s)", r.Code))
		return
	}
	delete(c.pending, r.Seq)
	c.answered++
	c.rejectedNow++
	c.rejected[min(int(r.Code), len(c.rejected)-1)]++
	c.rtt(in.at)
}

func (c *churner) rtt(at time.Time) {
	if !c.p.st.measuring.Load() {
		return
	}
	sh := c.p.sh
	sh.mu.Lock()
	_ = sh.rtt.RecordValue(max(time.Since(at).Microseconds(), histMin))
	sh.mu.Unlock()
}

func (c *churner) count(n int) {
	sh := c.p.sh
	sh.mu.Lock()
	sh.frames++
	sh.bytes += int64(n)
	sh.mu.Unlock()
}

// quiesce stops sending and waits (5 s at most) for every answer, then
// for one more snapshot, and checks the ground truth: the position the
// server shows equals the session's start plus the steps it applied. A
// body that stepped onto a portal waits for the crossing's outcome first
// (20 s at most), as a client must: a crossing under way ends the session
// one way or the other.
func (c *churner) quiesce() {
	deadline := time.After(5 * time.Second)
	crossing := time.After(20 * time.Second)
	for {
		for c.onPortal() && c.moved == nil && !c.restored {
			select {
			case f := <-c.in:
				if !c.quiesceTake(f) {
					return
				}
			case <-crossing:
				c.p.st.fail("churn: a crossing never ended")
				return
			}
		}
		if c.moved != nil {
			break
		}
		before := c.snapN
		// A crossing that ends meanwhile ends the session: what is still
		// in flight after its last snapshot is void (see follow), and
		// the connection's close follows portal_moved.
		for (len(c.pending) > 0 || c.snapN == before) && c.moved == nil {
			select {
			case f := <-c.in:
				if !c.quiesceTake(f) {
					return
				}
				if len(c.pending) > 0 {
					before = c.snapN // the check needs a snapshot after the last answer
				}
			case <-deadline:
				c.lose()
				return
			}
		}
		// The answers may have put the body on the portal: then its
		// crossing's outcome comes first.
		if !c.onPortal() || c.moved != nil || c.restored {
			break
		}
	}
	if c.moved != nil {
		if err := c.follow(context.Background(), EventStray); err != nil {
			c.p.st.fail("churn follow: " + short(err))
		}
		return
	}
	if !c.truthful || !c.started {
		return
	}
	c.cs.mu.Lock()
	c.cs.groundTruth++
	if c.you.X != c.expX || c.you.Y != c.expY {
		c.cs.mismatches++
	}
	c.cs.mu.Unlock()
	if c.you.X != c.expX || c.you.Y != c.expY {
		c.p.st.fail("ground truth: position differs from start plus applied steps")
		c.cs.mu.Lock()
		if len(c.cs.mismatchDetails) < 10 {
			c.cs.mismatchDetails = append(c.cs.mismatchDetails, fmt.Sprintf("%s in Area %d at (%d,%d), want (%d,%d): %d snapshots, %d resumes, %d refused, %d sent",
				c.p.acct.Email, c.area, c.you.X, c.you.Y, c.expX, c.expY, c.snapN, c.resumes, c.rejectedNow, c.seq))
		}
		c.cs.mu.Unlock()
	}
}

// quiesceTake handles f while quiescing; on an error it counts the
// failure and what is still in flight, and reports false.
func (c *churner) quiesceTake(f cframe) bool {
	if err := c.handle(f); err != nil {
		c.p.st.fail("churn quiesce: " + short(err))
		c.lose()
		return false
	}
	return true
}

// onPortal reports whether the body is crossing a portal as far as the
// client knows: a snapshot showed it in transit, or the steps the server
// applied put it on the portal square (a crossing can end between two
// snapshots, so that none shows the transit: its last snapshot, sent
// reliably, acknowledges the step and portal_moved follows).
func (c *churner) onPortal() bool {
	return c.you.Flags&wire.FlagTransit != 0 || (c.started && c.expX == portalX && c.expY == portalY)
}

// mayBeCrossing reports whether the body may be crossing a portal the
// client has not heard the end of: onPortal, or an intent still in flight
// (a move-to, or a step that, applied in order, lands on the portal).
func (c *churner) mayBeCrossing() bool {
	if c.onPortal() {
		return true
	}
	seqs := make([]uint32, 0, len(c.pending))
	for seq := range c.pending {
		seqs = append(seqs, seq)
	}
	slices.SortFunc(seqs, func(a, b uint32) int { return cmp.Compare(c.seq-b, c.seq-a) }) // oldest first
	x, y := c.expX, c.expY
	for _, seq := range seqs {
		in := c.pending[seq]
		if in.to {
			return true
		}
		dx, dy := stepDelta(in.dir)
		x, y = x+dx, y+dy
		if x == portalX && y == portalY {
			return true
		}
	}
	return false
}

// lose counts what is still in flight as unanswered.
func (c *churner) lose() {
	if n := len(c.pending); n > 0 {
		c.cs.mu.Lock()
		c.cs.unanswered += int64(n)
		c.cs.mu.Unlock()
		c.p.st.fail("intents unanswered at session end")
		clear(c.pending)
	}
}

// leave closes the connection cleanly.
func (c *churner) leave() { c.closeConn() }

func (c *churner) closeConn() {
	if c.conn != nil {
		c.conn.Close(1000, "bye")
		c.conn = nil
		c.p.st.connected.Add(-1)
	}
}

// drop cuts the connection without a close handshake, as a lost network
// would.
func (c *churner) drop() {
	if c.conn != nil {
		c.conn.NetConn().Close()
		c.conn = nil
		c.p.st.connected.Add(-1)
	}
}

// resume drops the socket and resumes within the grace on a new one: the
// same session (its seqs and position go on).
func (c *churner) resume(ctx context.Context) error {
	wsURL, token := c.wsURL, c.token
	c.drop()
	dropped := time.Now()
	wait := time.Duration(float64(c.cfg.ResumeGrace) * (0.1 + 0.3*c.rng.Float64()))
	if !sleepUntil(ctx, time.Now().Add(wait)) {
		return ctx.Err()
	}
	conn, gen, err := c.dial(ctx, wsURL)
	if err != nil {
		return err
	}
	joinID := c.rng.Uint64() >> 12
	if err := send(conn, &wire.Resume{Token: token, JoinID: joinID}); err != nil {
		return err
	}
	ack, err := c.awaitAck(gen, joinID)
	inTransit := c.mayBeCrossing()
	if r := (*refusal)(nil); errors.As(err, &r) && r.code == wire.CodeBadToken && inTransit {
		// The body was (or may have been) crossing a portal when the socket
		// dropped: the crossing went on without its player and its token
		// died with it (docs/protocol.md, Resuming). A client asks the
		// director where its character lives now and joins there; the
		// director must show it in another Area (rejoinAfterCrossing
		// fails otherwise: a token lost without a crossing).
		conn.Close(1000, "")
		return c.rejoinAfterCrossing(ctx)
	}
	if r := (*refusal)(nil); errors.As(err, &r) && r.code == wire.CodeBadToken && time.Since(dropped) > c.cfg.ResumeGrace {
		// The grace ran out before the answer came: the server may have
		// taken the resume in after it (this driver, overloaded, dialled
		// late). A client joins again.
		conn.Close(1000, "")
		c.cs.mu.Lock()
		c.cs.lateResumes++
		c.cs.mu.Unlock()
		return c.join(ctx)
	}
	if err != nil {
		return fmt.Errorf("%w (%v after the drop, grace %v, in transit %v, %d intents in flight)", err, time.Since(dropped).Round(time.Millisecond),
			c.cfg.ResumeGrace, inTransit, len(c.pending))
	}
	c.switchTo(conn, wsURL, ack)
	// Intents in flight at the drop may not have reached the server: send
	// them again, in order, with their seqs (docs/protocol.md, Resuming).
	seqs := make([]uint32, 0, len(c.pending))
	for seq := range c.pending {
		seqs = append(seqs, seq)
	}
	slices.SortFunc(seqs, func(a, b uint32) int { return cmp.Compare(c.seq-b, c.seq-a) }) // oldest first (serial order, ending at c.seq)
	c.resumes++
	for _, seq := range seqs {
		in := c.pending[seq]
		c.resent[seq] = struct{}{}
		it := &wire.Intent{Seq: seq, Kind: wire.IntentStep, Dir: in.dir}
		if in.to {
			it = &wire.Intent{Seq: seq, Kind: wire.IntentMoveTo, Target: wire.Cell{X: portalX, Y: portalY}}
		}
		if err := send(conn, it); err != nil {
			return err
		}
	}
	c.rebase = true
	return nil
}

// rejoinAfterCrossing joins the Area the player's character crossed to
// while its connection was down: the director must show it in an Area
// other than the one it left (within 5 s: the crossing may be settling).
func (c *churner) rejoinAfterCrossing(ctx context.Context) error {
	dc := dirclient.New(c.r.cfg.Director)
	dc.Token = c.p.token
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, ch, err := dc.Me(ctx)
		if err != nil {
			return fmt.Errorf("after a refused resume: me: %s", errCode(err))
		}
		if ch != nil && ch.Area != c.area {
			c.cs.mu.Lock()
			c.cs.crossedAway++
			c.cs.mu.Unlock()
			c.area = ch.Area
			return c.join(ctx)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("resume refused BAD_TOKEN while crossing, but the character is still in Area %d after 5 s", c.area)
		}
		if !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// takeover logs in a second time and binds a second connection while the
// first is still open: the first must be told taken_over and closed.
func (c *churner) takeover(ctx context.Context) error {
	old, oldConn := c.gen, c.conn
	c.takenOver, c.oldMoved = false, nil
	defer oldConn.Close(1000, "") // the server closed it; free the socket
	lc := c.r.churnLoginClient()
	err := retry(ctx, func() error { _, err := lc.Login(ctx, c.p.acct.Email, c.r.cfg.Password); return err })
	if err != nil {
		return fmt.Errorf("second login: %s", errCode(err))
	}
	c.p.token = lc.Token
	if err := c.join(ctx); err != nil {
		return err
	}
	deadline := time.After(5 * time.Second)
	for !(c.takenOver || c.oldMoved != nil) || !c.closedGen[old] {
		select {
		case f := <-c.in:
			if err := c.handle(f); err != nil {
				return err
			}
		case <-deadline:
			return fmt.Errorf("old connection: taken_over %v, closed %v; it got %v", c.takenOver, c.closedGen[old], c.oldSaw[old])
		}
	}
	if m := c.oldMoved; m != nil && !c.takenOver && m.Area != c.area {
		// The old session crossed to m.Area while the second login joined
		// the Area it left. That is right only if the join came after the
		// crossing committed and before the player arrived (bound nowhere),
		// so that the director moved the character back by the door: then
		// the store has it here, with the new session. Anything else is
		// a second body left behind.
		dc := dirclient.New(c.r.cfg.Director)
		dc.Token = c.p.token
		_, ch, err := dc.Me(ctx)
		if err != nil {
			return fmt.Errorf("after a takeover that raced a crossing: me: %s", errCode(err))
		}
		if ch == nil || ch.Area != c.area {
			return fmt.Errorf("the old session crossed to Area %d, the new one is bound in Area %d, and the director has the character in %v", m.Area, c.area, ch)
		}
		c.cs.mu.Lock()
		c.cs.movedBack++
		c.cs.mu.Unlock()
	}
	return nil
}

// hop walks onto the Area's portal and follows the crossing.
func (c *churner) hop(ctx context.Context) error {
	moveTo := func() error {
		c.seq++
		c.pending[c.seq] = inflight{at: time.Now(), to: true}
		c.sent++
		c.truthful = false
		return send(c.conn, &wire.Intent{Seq: c.seq, Kind: wire.IntentMoveTo, Target: wire.Cell{X: portalX, Y: portalY}})
	}
	if err := moveTo(); err != nil {
		return err
	}
	deadline := time.After(20 * time.Second)
	check := time.NewTicker(500 * time.Millisecond)
	defer check.Stop()
	at, still := [2]int32{c.you.X, c.you.Y}, time.Now()
	for c.moved == nil {
		select {
		case f := <-c.in:
			if err := c.handle(f); err != nil {
				return err
			}
			if c.restored {
				return errors.New("the crossing was refused or timed out")
			}
		case <-check.C:
			// A walk that finds its way shut for good (boxed in by other
			// bodies) ends where it is, without a message
			// (docs/protocol.md, Intents): a body that stood still for 2 s,
			// its move-to applied and not on the portal, is sent again.
			if now := [2]int32{c.you.X, c.you.Y}; now != at {
				at, still = now, time.Now()
			} else if time.Since(still) > 2*time.Second && len(c.pending) == 0 && !c.onPortal() {
				c.cs.mu.Lock()
				c.cs.hopRetries++
				c.cs.mu.Unlock()
				if err := moveTo(); err != nil {
					return err
				}
				still = time.Now()
			}
		case <-deadline:
			return errors.New("no portal_moved within 20 s")
		}
	}
	return c.follow(ctx, "")
}

// follow reconnects in the Area a portal_moved names, with its grant.
// kind, if set, counts the crossing as that event.
func (c *churner) follow(ctx context.Context, kind string) error {
	m := c.moved
	// What the server took in before the crossing was answered before
	// portal_moved (its last snapshot is reliable); intents still in flight
	// reached it after it ended the session, and are void.
	if n := len(c.pending); n > 0 {
		c.cs.mu.Lock()
		c.cs.void += int64(n)
		c.cs.mu.Unlock()
		c.sent -= int64(n)
		clear(c.pending)
	}
	c.closeConn()
	err := c.hello(ctx, m.WSURL, m.Grant, m.JoinID)
	if kind != "" {
		c.cs.event(kind, err)
	}
	return err
}

// churnLoginClient returns a director client on a source address of its
// own, so that second logins stay within the per-address login limit.
func (r *runner) churnLoginClient() *dirclient.Client {
	r.cmu.Lock()
	r.churnLogins++
	n := r.churnLogins
	r.cmu.Unlock()
	return r.client((1 << 20) + n*loginsPerAddr)
}

// runChurn plays the churn pattern with the logged-in players: Poisson
// arrivals over the ramp, then sessions and their endings until the end
// of the steady phase, when everyone still in quiesces, the AtEnd hook
// sees them, and they leave cleanly. It returns the churn summary, every
// join's duration and the players that never got in.
func (r *runner) runChurn(ctx context.Context, players []*player, portals bool) (*ChurnSummary, []time.Duration, int) {
	cfg := r.cfg
	cs := &churnStats{events: map[string]*EventCount{}}
	master := rand.New(rand.NewPCG(cfg.Seed, 0x6c6579))
	start := time.Now()
	end := start.Add(cfg.Ramp + cfg.Duration)
	rate := float64(len(players)) / max(cfg.Ramp.Seconds(), 0.001)
	at := start
	var wg sync.WaitGroup
	var churners []*churner
	for i, p := range players {
		if p.token == "" {
			continue
		}
		at = at.Add(time.Duration(-math.Log(1-master.Float64()) / rate * float64(time.Second)))
		churners = append(churners, newChurner(r, p, cs, cfg.Seed, i, portals))
		arrive := at
		if last := start.Add(cfg.Ramp); arrive.After(last) {
			arrive = last
		}
		c := churners[len(churners)-1]
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx, arrive, end)
		}()
	}
	r.churnEnd.start(len(churners))
	r.churnPhases(ctx, start)
	r.churnEnd.wait(ctx, cfg.AtEnd)
	wg.Wait()
	var joins []time.Duration
	never := len(players) - len(churners)
	for _, c := range churners {
		joins = append(joins, c.joinTook...)
		if !c.everIn {
			never++
		}
		c.p.mu.Lock()
		c.p.sent += uint32(c.sent)
		c.p.answered += c.answered
		c.p.applied += c.applied
		c.p.dups += c.dups
		for i, n := range c.rejected {
			c.p.rejected[i] += n
		}
		c.p.mu.Unlock()
	}
	return cs.summary(cfg.Seed), joins, never
}

// endGate holds the players still in at the end of a churn run until
// every player has either arrived at it or finished, so that the AtEnd
// hook sees them all in, quiet, at once.
type endGate struct {
	mu      sync.Mutex
	total   int
	done    int            // finished (left, or never in at the end)
	in      map[uint32]int // arrived, by Area
	changed chan struct{}
	open    chan struct{}
}

func (g *endGate) init() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.in == nil {
		g.in, g.changed, g.open = map[uint32]int{}, make(chan struct{}, 1), make(chan struct{})
	}
}

func (g *endGate) start(total int) {
	g.init()
	g.mu.Lock()
	g.total = total
	g.mu.Unlock()
}

func (g *endGate) ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	arrived := 0
	for _, n := range g.in {
		arrived += n
	}
	return arrived+g.done >= g.total
}

func (g *endGate) poke() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// arrive records a player still in its Area at the end and waits for the
// gate to open (bounded: 30 s).
func (g *endGate) arrive(area uint32) {
	g.init()
	g.mu.Lock()
	g.in[area]++
	g.mu.Unlock()
	g.poke()
	select {
	case <-g.open:
	case <-time.After(30 * time.Second):
	}
}

// finish records that a player's run is over.
func (g *endGate) finish() {
	g.init()
	g.mu.Lock()
	g.done++
	g.mu.Unlock()
	g.poke()
}

// wait waits (30 s at most) until every player arrived or finished, calls
// atEnd with the players in by Area, and opens the gate.
func (g *endGate) wait(ctx context.Context, atEnd func(map[uint32]int)) {
	g.init()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
wait:
	for !g.ready() {
		select {
		case <-g.changed:
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	if atEnd != nil {
		g.mu.Lock()
		in := make(map[uint32]int, len(g.in))
		for a, n := range g.in {
			in[a] = n
		}
		g.mu.Unlock()
		atEnd(in)
	}
	close(g.open)
}

// churnPhases marks the ramp and steady phases of a churn run (the
// measurement covers the steady phase).
func (r *runner) churnPhases(ctx context.Context, start time.Time) {
	r.setPhase("ramp")
	if !sleepUntil(ctx, start.Add(r.cfg.Ramp)) {
		return
	}
	r.setPhase("steady")
	if r.cfg.OnSteady != nil {
		r.cfg.OnSteady(true)
	}
	r.st.startSteady()
	sleepUntil(ctx, start.Add(r.cfg.Ramp+r.cfg.Duration))
	r.st.endSteady()
	if r.cfg.OnSteady != nil {
		r.cfg.OnSteady(false)
	}
	r.setPhase("drain")
}

// stepDelta is a step's move on the grid (north is -y).
func stepDelta(d wire.Dir) (int32, int32) {
	return [8]int32{0, 1, 1, 1, 0, -1, -1, -1}[d&7], [8]int32{-1, -1, 0, 1, 1, 1, 0, -1}[d&7]
}

// send encodes m and writes it.
func send(conn *gate.ClientConn, m wire.Message) error {
	b, err := wire.Encode(m)
	if err != nil {
		return err
	}
	return conn.WriteMessage(b)
}

// describeMsg names a message for the error counts.
func describeMsg(m wire.Message) string {
	switch m := m.(type) {
	case *wire.Error:
		return "error: " + m.Code.String()
	case *wire.Rehello:
		return "rehello: " + m.Code.String()
	case *wire.AreaClosing:
		return "area_closing: " + m.Reason.String()
	default:
		return m.Type().String()
	}
}

// sleepUntil sleeps until t; it reports false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
