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
	"github.com/leyworks/ley/net/client"
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
	// since the drop (an overloaded driver's dial and hello), or the
	// server had closed the connection first (its grace began before the
	// driver saw the drop), so the token may rightly be gone; the player
	// joined again where the director shows its character, as a client
	// must. A refusal within the grace stays a failure, unless the body
	// may have been crossing and the director shows it in the other Area
	// (CrossedAway).
	LateResumes int64 `json:"late_resumes"`
	// HopRetries counts move-tos a hop sent again because its walk to the
	// portal had ended short of it (boxed in by other bodies).
	HopRetries int64 `json:"hop_retries"`
	// CrossingsUndecided counts hops whose crossing the realm did not
	// decide in time: portal_blocked{TIMEOUT} (no answer within the
	// transfer timeout) or portal_transfer_rejected{UNAVAILABLE} (its
	// store away), as an overloaded director or database answers. The body
	// is back beside the portal and plays on, as docs/protocol.md says; a
	// late portal_moved is followed as a stray crossing. They are not
	// counted as hops, failed or not.
	CrossingsUndecided int64 `json:"crossings_undecided"`
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
	undecided       int64
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
	out := &ChurnSummary{Seed: seed, Events: map[string]EventCount{}, GroundTruth: cs.groundTruth, Mismatches: cs.mismatches, Unanswered: cs.unanswered, Void: cs.void, CrossedAway: cs.crossedAway, MovedBack: cs.movedBack, LateResumes: cs.lateResumes, HopRetries: cs.hopRetries, CrossingsUndecided: cs.undecided, MismatchDetails: cs.mismatchDetails}
	for k, v := range cs.events {
		out.Events[k] = *v
	}
	return out
}

// cevent is one thing a churner's client handed over: a frame (decoded),
// an answer or an event.
type cevent struct {
	kind  ceventKind
	frame client.Frame // Bytes cleared (they were the reader's): m is the message, n its size
	m     wire.Message
	n     int
	err   error // the frame did not decode
	a     client.Answer
	e     client.Event
}

type ceventKind uint8

const (
	cframeKind ceventKind = iota + 1
	canswerKind
	ceventKindEvent
)

// inflight is one intent waiting for its answer, as the churner accounts
// the position it expects.
type inflight struct {
	dir wire.Dir
	to  bool // a move-to: its squares are not known, so no ground truth
}

// churner is one player of the churn pattern, run by one goroutine. The
// session itself (seqs, answers, resumes, crossings) is net/client's; the
// churner chooses what the player does and checks the ground truth: the
// position the server shows against the session's start plus the steps
// it said it applied. Its client's reader goroutines only hand it what
// they read, through in.
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

	cl      *client.Client
	in      chan cevent
	session uint64 // the current session and connection, as handled so far
	conn    uint64

	// The session's position accounting.
	seq         uint32              // the last seq sent
	pending     map[uint32]inflight // sent, not yet answered as handled so far
	v           *view.View          // the current connection's view (net/view)
	entity      uint32              // the player's entity, from hello_ack
	started     bool
	resumes     int // this session's resumes
	rejectedNow int // this session's refused intents
	expX        int32
	expY        int32
	truthful    bool             // no move-to or portal restore in this session
	you         wire.EntityState // the player's entity, as the last snapshot left the view
	snapN       int64            // snapshots this session

	joinTook []time.Duration // each join (HTTP join, dial, hello)
	everIn   bool            // bound at least once

	// Signals from what was handled.
	oldSaw     map[uint64][]string // message types each earlier connection got, for a failed takeover's report
	oldMoved   *wire.PortalMoved
	takenOver  bool
	moved      *wire.PortalMoved // portal_moved on the current connection: the client follows it
	restored   bool              // portal_blocked or portal_transfer_rejected on the current connection
	restoredBy wire.Code         // its reason
	closedConn map[uint64]bool
}

// errSession is a session that ended in a way the pattern did not choose.
var errSession = errors.New("session ended unexpectedly")

// errUndecided is a hop whose crossing the realm did not decide in time
// (see ChurnSummary.CrossingsUndecided).
var errUndecided = errors.New("the crossing was not decided in time")

// transferTimeout is the realm's --transfer-timeout, its default: a
// crossing is decided, or its body given back portal_blocked{TIMEOUT},
// within it (docs/protocol.md, Portals).
const transferTimeout = 15 * time.Second

func newChurner(r *runner, p *player, cs *churnStats, seed uint64, i int, portals bool) (*churner, error) {
	c := &churner{
		r: r, p: p, cs: cs, cfg: r.cfg.Churn, rng: rand.New(rand.NewPCG(seed, uint64(i)+1)),
		area: p.acct.Area, portals: portals, in: make(chan cevent, 256), closedConn: map[uint64]bool{}, oldSaw: map[uint64][]string{},
	}
	cfg := client.DefaultConfig()
	cfg.LocalAddr, cfg.Window = p.local, window
	cfg.Handler = client.Handler{
		Frame: func(f client.Frame) {
			m, err := f.Decode()
			n := len(f.Bytes)
			f.Bytes = nil
			c.in <- cevent{kind: cframeKind, frame: f, m: m, n: n, err: err}
		},
		Answer: func(a client.Answer) { c.in <- cevent{kind: canswerKind, a: a} },
		Event:  func(e client.Event) { c.in <- cevent{kind: ceventKindEvent, e: e} },
	}
	cl, err := client.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	c.cl, p.cl = cl, cl
	return c, nil
}

// exp draws an exponential duration of the given mean.
func (c *churner) exp(mean time.Duration) time.Duration {
	return time.Duration(-math.Log(1-c.rng.Float64()) * float64(mean))
}

// run plays the player from its arrival until end, then leaves cleanly
// (after every player still in has reached the end, see endGate).
func (c *churner) run(ctx context.Context, arrive, end time.Time) {
	defer c.r.churnEnd.finish()
	defer c.cl.Close()
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
	c.leave()
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
		if errors.Is(err, errUndecided) {
			c.cs.mu.Lock()
			c.cs.undecided++
			c.cs.mu.Unlock()
			return true // the body is back beside the portal: it plays on
		}
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
	ack, err := c.cl.Hello(ctx, j.WSURL, j.Grant, j.JoinID)
	if err != nil {
		return err
	}
	c.bound(ack)
	c.newSession()
	c.everIn = true
	return nil
}

// bound makes the client's current connection the churner's, with a
// fresh view (the server resets a new connection's view).
func (c *churner) bound(ack *wire.HelloAck) {
	st := c.cl.State()
	c.session, c.conn = st.Session, st.Conn
	c.area, c.entity = ack.Area, ack.Entity
	c.v = view.New()
	c.p.setUp(true)
}

// newSession starts a session's position accounting.
func (c *churner) newSession() {
	c.seq = 0
	c.pending = map[uint32]inflight{}
	c.started, c.truthful, c.snapN = false, true, 0
	c.resumes, c.rejectedNow = 0, 0
	c.moved, c.restored = nil, false
}

// walk steps in random directions within the budget (one step per 200
// ms) until stop, handling what comes meanwhile. A portal crossing it
// walks into is followed.
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
			if err := c.send(wire.Intent{Kind: wire.IntentStep, Dir: wire.Dir(c.rng.IntN(8))}); err != nil {
				// The session is not bound any more: what ended it is
				// still to be handled (a stray crossing's portal_moved,
				// which the client is following).
				if err := c.explain(err); err != nil {
					return err
				}
			}
		case ev := <-c.in:
			if err := c.handle(ev); err != nil {
				return err
			}
		}
		if c.moved != nil {
			if err := c.crossed(EventStray); err != nil {
				return err
			}
		}
	}
}

// explain handles what the client read before a send failed (2 s at
// most), until it says why: a crossing (nil, c.moved set) or the
// session's end (its error). Without either it returns the send's error.
func (c *churner) explain(sendErr error) error {
	deadline := time.After(2 * time.Second)
	for c.moved == nil {
		select {
		case ev := <-c.in:
			if err := c.handle(ev); err != nil {
				return err
			}
		case <-deadline:
			return sendErr
		}
	}
	return nil
}

// send sends an intent in the churner's session.
func (c *churner) send(in wire.Intent) error {
	seq, err := c.cl.SendIn(c.session, in)
	if err != nil {
		return err
	}
	c.seq = seq
	c.pending[seq] = inflight{dir: in.Dir, to: in.Kind == wire.IntentMoveTo}
	if in.Kind == wire.IntentMoveTo {
		c.truthful = false
	}
	return nil
}

// handle applies one thing the client handed over to the player's state.
// What earlier connections and sessions send only closes them or
// announces a takeover.
func (c *churner) handle(ev cevent) error {
	switch ev.kind {
	case cframeKind:
		return c.onFrame(ev)
	case canswerKind:
		c.onAnswer(ev.a)
		return nil
	}
	return c.onEvent(ev.e)
}

func (c *churner) onFrame(ev cevent) error {
	f := ev.frame
	c.count(ev.n)
	if f.Conn != c.conn {
		if saw := c.oldSaw[f.Conn]; len(saw) < 16 {
			c.oldSaw[f.Conn] = append(saw, f.Type.String())
		}
		switch f.Type {
		case wire.TypeTakenOver, wire.TypePortalMoved, wire.TypeRehello, wire.TypeSnapshot, wire.TypeIntentResult,
			wire.TypePresence, wire.TypeStatic, wire.TypeAreaInfo, wire.TypeInventory, wire.TypeContainer, wire.TypeRecipes,
			wire.TypeTrade:
			return nil
		}
		return fmt.Errorf("an old connection got %s", f.Type)
	}
	if ev.err != nil {
		return fmt.Errorf("%w: decode: %v", errSession, ev.err)
	}
	if err := c.v.Apply(ev.m); err != nil {
		return fmt.Errorf("%w: the server broke the protocol: %v", errSession, err)
	}
	switch m := ev.m.(type) {
	case *wire.Snapshot:
		c.snapshot(f, m)
	case *wire.AreaInfo:
		c.p.noteRound(m)
	}
	return nil
}

// snapshot records the gap, and the player's entity as the view shows
// it; the first snapshot of a connection is the new baseline of the
// position accounting (its position holds the effect of every intent it
// acknowledges: answers sent on a lost connection were lost with it).
func (c *churner) snapshot(f client.Frame, _ *wire.Snapshot) {
	if !f.First {
		sh := c.p.sh
		sh.mu.Lock()
		c.p.recordGap(f, c.p.st.measuring.Load())
		sh.mu.Unlock()
	}
	c.snapN++
	you, ok := c.v.Entities[c.entity]
	if !ok {
		c.p.st.fail("churn: the player's own entity is not in its view")
		return
	}
	if f.First {
		c.started = true
		c.expX, c.expY = you.X, you.Y
	}
	c.you = you
}

// onAnswer records one intent's answer: an applied step moves the
// expected position.
func (c *churner) onAnswer(a client.Answer) {
	switch a.Outcome {
	case client.Void:
		// Sent after the crossing's last snapshot, or after a takeover or
		// a rehello ended the session: neither applied nor answered.
		c.cs.mu.Lock()
		c.cs.void++
		c.cs.mu.Unlock()
	case client.Abandoned:
		// Left unanswered by a new hello or a close: the churner counted
		// what it still waited for (lose), and forgot it.
	}
	if a.Outcome == client.Refused {
		c.p.refused(a.Code)
	}
	if (a.Outcome == client.Applied || a.Outcome == client.Refused) && c.p.st.measuring.Load() {
		sh := c.p.sh
		sh.mu.Lock()
		_ = sh.rtt.RecordValue(max(a.RTT.Microseconds(), histMin))
		sh.mu.Unlock()
	}
	if a.Session != c.session {
		return
	}
	in, ok := c.pending[a.Intent.Seq]
	if !ok {
		return
	}
	delete(c.pending, a.Intent.Seq)
	switch a.Outcome {
	case client.Refused:
		c.rejectedNow++
	case client.Applied:
		if in.to {
			c.truthful = false
			return
		}
		dx, dy := in.dir.Delta()
		c.expX += dx
		c.expY += dy
	}
}

func (c *churner) onEvent(e client.Event) error {
	current := e.Conn == c.conn
	switch e.Kind {
	case client.EventBound:
		if e.Followed && e.Session != c.session {
			// The client followed the crossing of c.moved: a fresh
			// session in the next Area.
			c.bound(e.Ack)
			c.newSession()
		}
	case client.EventMoved:
		if current {
			c.moved = e.Moved
		} else {
			// A crossing the old session began (a step onto the portal still
			// in flight) ended it first: its body lives in e.Moved.Area now.
			c.oldMoved = e.Moved
		}
	case client.EventEnded:
		switch {
		case e.Session == c.session && e.Err != nil:
			c.p.setUp(false)
			return fmt.Errorf("%w: %v", errSession, e.Err)
		case current && e.Type == wire.TypeTakenOver:
			return fmt.Errorf("%w: taken_over", errSession)
		case current:
			return fmt.Errorf("%w: rehello: %s", errSession, e.Code)
		case e.Type == wire.TypeTakenOver:
			c.takenOver = true
		}
	case client.EventDropped, client.EventDisconnected:
		c.closedConn[e.Conn] = true
		if current && e.Kind == client.EventDropped {
			return fmt.Errorf("%w: %v", errSession, e.Err)
		}
	case client.EventRestored:
		if current {
			c.restored, c.restoredBy, c.truthful = true, e.Code, false
		}
	case client.EventClosing:
		if current {
			return fmt.Errorf("%w: area_closing: %s", errSession, e.Code)
		}
	case client.EventError:
		if !current {
			return fmt.Errorf("an old connection got error %s", e.Code)
		}
		return fmt.Errorf("%w: error: %s", errSession, e.Code)
	case client.EventUnmatched:
		c.p.st.fail(fmt.Sprintf("intent_result for a seq not in flight (%s)", e.Code))
	case client.EventProtocol:
		if current {
			return fmt.Errorf("%w: the server broke the protocol: %v", errSession, e.Err)
		}
	}
	return nil
}

func (c *churner) count(n int) {
	sh := c.p.sh
	sh.mu.Lock()
	sh.frames++
	sh.bytes += int64(n)
	sh.mu.Unlock()
}

// crossed waits for the client to follow the crossing c.moved ended the
// session with (portal_moved on the current connection) into the next
// Area; kind, if set, counts it as that event.
func (c *churner) crossed(kind string) error {
	deadline := time.After(30 * time.Second) // the client's hello is bounded by 15 s
	var err error
	for c.moved != nil && err == nil {
		select {
		case ev := <-c.in:
			err = c.handle(ev)
		case <-deadline:
			err = fmt.Errorf("the crossing to Area %d was not followed within 30 s", c.moved.Area)
		}
	}
	if kind != "" {
		c.cs.event(kind, err)
	}
	return err
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
			case ev := <-c.in:
				if !c.quiesceTake(ev) {
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
		// in flight after its last snapshot is void (the client says so),
		// and the client follows portal_moved.
		for (len(c.pending) > 0 || c.snapN == before) && c.moved == nil {
			select {
			case ev := <-c.in:
				if !c.quiesceTake(ev) {
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
		if err := c.crossed(EventStray); err != nil {
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

// quiesceTake handles ev while quiescing; on an error it counts the
// failure and what is still in flight, and reports false.
func (c *churner) quiesceTake(ev cevent) bool {
	if err := c.handle(ev); err != nil {
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
	slices.SortFunc(seqs, func(a, b uint32) int { return cmp.Compare(c.seq-b, c.seq-a) }) // oldest first (serial order, ending at c.seq)
	x, y := c.expX, c.expY
	for _, seq := range seqs {
		in := c.pending[seq]
		if in.to {
			return true
		}
		dx, dy := in.dir.Delta()
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
func (c *churner) leave() {
	clear(c.pending) // what is left unanswered was counted lost, or is Abandoned by the client
	_ = c.cl.Leave()
	c.p.setUp(false)
}

// drop cuts the connection without a close handshake, as a lost network
// would.
func (c *churner) drop() {
	c.cl.Drop()
	c.p.setUp(false)
}

// resume drops the socket and resumes within the grace on a new one: the
// same session (its seqs and position go on; the client sends what was
// in flight again).
func (c *churner) resume(ctx context.Context) error {
	// A connection the server closed first (its end not handled yet)
	// started the grace before this drop: a refusal then says so.
	phase := c.cl.State().Phase
	c.drop()
	dropped := time.Now()
	wait := time.Duration(float64(c.cfg.ResumeGrace) * (0.1 + 0.3*c.rng.Float64()))
	if !sleepUntil(ctx, time.Now().Add(wait)) {
		return ctx.Err()
	}
	ack, err := c.cl.Resume(ctx)
	inTransit := c.mayBeCrossing()
	var re *client.RefusedError
	badToken := errors.As(err, &re) && re.Code == wire.CodeBadToken
	if badToken && (time.Since(dropped) > c.cfg.ResumeGrace || phase == client.Dropped) {
		// The grace ran out before the answer came, or the server had
		// closed the connection first and began its grace before the drop
		// here: the server may have let the body go first (this driver,
		// overloaded, dialled late). A client joins again, where the
		// director says its character is (a crossing under way may have
		// gone on without it).
		c.cs.mu.Lock()
		c.cs.lateResumes++
		c.cs.mu.Unlock()
		if inTransit {
			return c.rejoinWhereItIs(ctx, false, dropped, phase)
		}
		return c.join(ctx)
	}
	if badToken && inTransit {
		// The body was (or may have been) crossing a portal when the socket
		// dropped: the crossing went on without its player and its token
		// died with it (docs/protocol.md, Resuming). A client asks the
		// director where its character lives now and joins there; the
		// director must show it in another Area (rejoinWhereItIs fails
		// otherwise: a token lost within the grace without a crossing).
		return c.rejoinWhereItIs(ctx, true, dropped, phase)
	}
	if err != nil {
		return fmt.Errorf("%w (%v after the drop, grace %v, in transit %v, %d intents in flight, the session %s when the driver dropped it)", err, time.Since(dropped).Round(time.Millisecond),
			c.cfg.ResumeGrace, inTransit, len(c.pending), phase)
	}
	c.bound(ack)
	c.resumes++
	return nil
}

// rejoinWhereItIs joins the Area the director shows the player's
// character in, after a resume refused while its body may have been
// crossing a portal. With crossed the refusal came within the grace, so
// the crossing must have gone on: the director must show the character in
// an Area other than the one it left (within 5 s: the crossing may be
// settling). Without, the grace may have run out first: the character
// is wherever the director says.
func (c *churner) rejoinWhereItIs(ctx context.Context, crossed bool, dropped time.Time, phase client.Phase) error {
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
		if !crossed {
			return c.join(ctx) // still here: the director moves it back should the crossing commit yet
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("resume refused BAD_TOKEN %v after the drop (grace %v, the session %s when the driver dropped it) while crossing, but the character is still in Area %d after 5 s",
				time.Since(dropped).Round(time.Millisecond), c.cfg.ResumeGrace, phase, c.area)
		}
		if !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// takeover logs in a second time and binds a second connection while the
// first is still open: the first must be told taken_over and closed.
func (c *churner) takeover(ctx context.Context) error {
	old := c.conn
	c.takenOver, c.oldMoved = false, nil
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
	for !(c.takenOver || c.oldMoved != nil) || !c.closedConn[old] {
		select {
		case ev := <-c.in:
			if err := c.handle(ev); err != nil {
				return err
			}
		case <-deadline:
			return fmt.Errorf("old connection: taken_over %v, closed %v; it got %v", c.takenOver, c.closedConn[old], c.oldSaw[old])
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

// hop walks onto the Area's portal and waits for the client to follow
// the crossing.
func (c *churner) hop(ctx context.Context) error {
	moveTo := func() error {
		err := c.send(wire.Intent{Kind: wire.IntentMoveTo, Target: wire.Cell{X: portalX, Y: portalY}})
		if err != nil {
			return c.explain(err)
		}
		return nil
	}
	c.restored = false // an earlier crossing's of this session
	if err := moveTo(); err != nil {
		return err
	}
	// 20 s to get onto the portal and across; a wait behind a body
	// crossing on the portal square, or for this body's own crossing to
	// be decided, does not count (each is bounded by the transfer
	// timeout), up to 2 minutes in all.
	const checkEvery = 500 * time.Millisecond
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	check := time.NewTicker(checkEvery)
	defer check.Stop()
	at, still := [2]int32{c.you.X, c.you.Y}, start
	snaps, retries := c.snapN, 0
	var holder uint32 // the other body on the portal square, 0 for none
	var held, onPortal time.Time
	for c.moved == nil {
		select {
		case ev := <-c.in:
			if err := c.handle(ev); err != nil {
				return err
			}
			if c.restored {
				if c.restoredBy == wire.CodeTimeout || c.restoredBy == wire.CodeUnavailable {
					return fmt.Errorf("%w (%s)", errUndecided, c.restoredBy)
				}
				return fmt.Errorf("the crossing was refused %s", c.restoredBy)
			}
		case <-check.C:
			now := time.Now()
			switch id := c.portalHolder(); {
			case id == 0:
				holder = 0
			case id != holder:
				holder, held = id, now
			case now.Sub(held) > transferTimeout+5*time.Second:
				return fmt.Errorf("entity %d has stood on the portal square for %v: a crossing ends within %v", id, now.Sub(held).Round(time.Millisecond), transferTimeout)
			}
			if holder != 0 {
				deadline = deadline.Add(checkEvery)
			}
			if c.onPortal() && onPortal.IsZero() {
				onPortal = now
				if decided := now.Add(transferTimeout + 5*time.Second); decided.After(deadline) {
					deadline = decided
				}
			}
			if now.After(deadline) || now.Sub(start) > 2*time.Minute {
				// What the player saw, so that a stall says where it stood.
				return fmt.Errorf("no portal_moved after %v (at %d,%d, still for %v, on the portal %v, %d intents in flight, %d move-tos sent again, %d snapshots, entity %d on the portal square)",
					now.Sub(start).Round(time.Millisecond), c.you.X, c.you.Y, now.Sub(still).Round(time.Millisecond), c.onPortal(), len(c.pending), retries, c.snapN-snaps, holder)
			}
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
				still, retries = time.Now(), retries+1
			}
		}
	}
	return c.crossed("")
}

// portalHolder returns the other body the view shows on the portal
// square (one crossing there), or 0.
func (c *churner) portalHolder() uint32 {
	for id, e := range c.v.Entities {
		if id != c.entity && e.X == portalX && e.Y == portalY {
			return id
		}
	}
	return 0
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
		c, err := newChurner(r, p, cs, cfg.Seed, i, portals)
		if err != nil {
			r.st.fail(err.Error())
			continue
		}
		churners = append(churners, c)
		arrive := at
		if last := start.Add(cfg.Ramp); arrive.After(last) {
			arrive = last
		}
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
