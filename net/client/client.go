package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
)

// Errors of the client.
var (
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("client: closed")
	// ErrNotBound: no session is bound (none yet, or it dropped, ended
	// or is crossing to another Area); wrapped with the phase.
	ErrNotBound = errors.New("client: no session bound")
	// ErrFull: Config.Window intents are unanswered; a client must keep
	// them all (to send them again after a resume), so it sends no more.
	ErrFull = errors.New("client: window of unanswered intents full")
	// ErrNotDropped: Resume needs a dropped session.
	ErrNotDropped = errors.New("client: no dropped session to resume")
)

// RefusedError is a hello or a resume the server refused with an error
// message: BAD_GRANT, GRANT_EXPIRED, BAD_TOKEN, AREA_FULL,
// VERSION_UNSUPPORTED, ...
type RefusedError struct {
	Code   wire.Code
	Detail string
}

func (e *RefusedError) Error() string {
	if e.Detail == "" {
		return "client: refused: " + e.Code.String()
	}
	return "client: refused: " + e.Code.String() + ": " + e.Detail
}

// Config configures a [Client]. Start from [DefaultConfig].
type Config struct {
	// LocalAddr is the source address of every connection (nil: any). A
	// load driver on one machine spreads its players over loopback
	// addresses with it, as players at home would be.
	LocalAddr net.Addr
	// TLS verifies the server of a wss:// URL (nil: the system's roots).
	TLS *tls.Config
	// Versions are the protocol versions a hello offers (nil:
	// wire.Versions). A hello_ack naming another is a protocol error.
	Versions []uint16
	// HelloTimeout bounds each dial and its wait for hello_ack.
	HelloTimeout time.Duration
	// Window bounds the unanswered intents of a session (a power of two;
	// 8 KiB of memory per 256). Past it Send refuses with ErrFull.
	Window int
	// FollowPortals makes the client follow a portal_moved on its
	// current connection: dial its ws_url and say hello with its grant.
	FollowPortals bool
	// Handler receives frames, answers and events.
	Handler Handler
}

// DefaultConfig returns a fresh Config: any source address, this
// package's versions, 15 s to get a hello_ack, 256 intents in flight, and
// portals followed.
func DefaultConfig() Config {
	return Config{HelloTimeout: 15 * time.Second, Window: 256, FollowPortals: true}
}

// Client is one player's client of area hosts: one session at a time
// (what a hello starts and a resume continues: a body, a seq space, a
// resume token), on one connection at a time, except that a connection a
// newer one replaced (a takeover's old connection) reads on until it ends.
//
// Concurrency: every method is safe for concurrent use. A goroutine per
// open connection reads it and calls the Handler (see [Handler] for what
// a handler may call). Send writes from the caller's goroutine.
//
// Ownership: the Client owns its connections; Close releases them.
type Client struct {
	cfg    Config
	h      Handler
	epoch  time.Time
	ctx    context.Context // ends with Close: bounds portal follows
	cancel context.CancelFunc

	// sendMu orders the writes of intents: a seq, its encoding and its
	// write are one step, and a resume's copies go out before any newer
	// seq. It is taken before mu.
	sendMu sync.Mutex
	wbuf   []byte // guarded by sendMu

	// cbMu makes handler calls one at a time. It is taken without mu held.
	cbMu sync.Mutex

	mu     sync.Mutex
	phase  Phase
	cur    *conn    // the current connection (nil before the first)
	sess   *session // the current session
	conns  []*conn  // every connection whose reader runs
	gen    uint64   // the last connection number handed out
	nsess  uint64   // the last session number handed out
	stats  Stats
	notify chan struct{} // closed on every change while a waiter wants it
	// delivering counts the changes whose handler calls (answers, events)
	// are being made after the change: Wait holds until they are done, so
	// a waiter that sees a state has had every callback leading to it.
	delivering int
	resend     []wire.Intent // a resume's scratch
}

// session is what a hello starts and a resume continues. Guarded by the
// Client's mu.
type session struct {
	w           window
	wsURL       string
	token       string
	area        uint32
	entity      uint32
	version     uint16
	tick        uint64
	snapshots   int64
	closing     bool
	closingCode wire.Code
	ended       bool
	endCode     wire.Code
	endErr      error
}

// conn is one connection. Its reader goroutine alone uses ws's reads and
// out; the rest is guarded by the Client's mu.
type conn struct {
	gen      uint64
	ws       *gate.ClientConn
	s        *session
	resumed  bool      // bound by a resume: its first snapshot settles as Unseen
	snapped  bool      // a snapshot came on it
	lastSnap time.Time // the last snapshot's arrival
	lastTick uint64    // the last snapshot's tick
	lastAck  uint32    // and its ack_seq (a short snapshot counts from both)
	done     bool      // the client closed or dropped it: its reader stops quietly
	ended    bool      // the server ended the session on it: its close is expected
	out      []Answer  // the reader's scratch
}

// New returns a Client with cfg, or an error if cfg is invalid. It dials
// nothing: call Hello.
func New(cfg Config) (*Client, error) {
	if cfg.Window < 1 || cfg.Window&(cfg.Window-1) != 0 || cfg.Window > 1<<20 {
		return nil, fmt.Errorf("client: config: window %d: want a power of two up to 2^20", cfg.Window)
	}
	if cfg.HelloTimeout <= 0 {
		return nil, fmt.Errorf("client: config: hello timeout %v: want it positive", cfg.HelloTimeout)
	}
	if cfg.Versions == nil {
		cfg.Versions = wire.Versions
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{cfg: cfg, h: cfg.Handler, epoch: time.Now(), ctx: ctx, cancel: cancel}, nil
}

// Hello connects to wsURL and starts a fresh session with a join grant
// (from the director's join: grant, ws_url, join_id): its seqs start at 1.
// It returns the hello_ack once the server sent it; EventBound follows on
// the Handler. A refusal is a *RefusedError.
//
// A session still bound on another connection is left to the server (the
// same account's second hello takes it over: that connection reads on
// until its taken_over and close); a dropped one's unanswered intents are
// Abandoned. ctx bounds the dial and the wait (and so does
// Config.HelloTimeout). Not to be called from a Handler function.
func (c *Client) Hello(ctx context.Context, wsURL, grant string, joinID uint64) (*wire.HelloAck, error) {
	k, ack, err := c.dialHello(ctx, wsURL, &wire.Hello{Grant: grant, JoinID: joinID, Versions: c.cfg.Versions}, joinID)
	if err != nil {
		return nil, err
	}
	if err := c.install(k, c.newSession(wsURL), ack, nil, Event{Kind: EventBound}); err != nil {
		return nil, err
	}
	return ack, nil
}

// Resume continues the dropped session on a new connection to its ws_url
// with its resume token: its seqs go on, and its unanswered intents are
// sent again, in order, with their seqs (docs/protocol.md, Resuming). It
// returns the hello_ack; EventBound (Resumed) follows. A refusal is a
// *RefusedError (BAD_TOKEN past the grace, or when a crossing went on
// without the player) and ends the session; a failed dial leaves it
// dropped, to try again. Not to be called from a Handler function.
func (c *Client) Resume(ctx context.Context) (*wire.HelloAck, error) {
	c.mu.Lock()
	s, phase := c.sess, c.phase
	var wsURL, token string
	if s != nil {
		wsURL, token = s.wsURL, s.token
	}
	c.mu.Unlock()
	if phase != Dropped {
		return nil, fmt.Errorf("%w (%s)", ErrNotDropped, phase)
	}
	joinID := rand.Uint64N(1 << 53)
	k, ack, err := c.dialHello(ctx, wsURL, &wire.Resume{Token: token, JoinID: joinID}, joinID)
	if err != nil {
		if r := (*RefusedError)(nil); errors.As(err, &r) {
			c.mu.Lock()
			if c.sess == s && c.phase == Dropped {
				c.phase, s.ended, s.endCode = Ended, true, r.Code
				c.wakeLocked()
			}
			c.mu.Unlock()
		}
		return nil, err
	}
	k.resumed = true
	if err := c.install(k, s, ack, s, Event{Kind: EventBound, Resumed: true}); err != nil {
		return nil, err
	}
	return ack, nil
}

// newSession returns a fresh session at wsURL with the next number.
func (c *Client) newSession(wsURL string) *session {
	c.mu.Lock()
	c.nsess++
	id := c.nsess
	c.mu.Unlock()
	s := &session{w: newWindow(c.cfg.Window), wsURL: wsURL}
	s.w.id = id
	return s
}

// install makes k, bound by ack, the current connection of session s and
// starts its reader. want, if set, is the session k continues or follows
// from: if another one became current meanwhile, k is stale and closed.
// A resume's copies are written before anything newer.
func (c *Client) install(k *conn, s *session, ack *wire.HelloAck, want *session, bound Event) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.mu.Lock()
	if c.phase == Closed || (want != nil && c.sess != want) || (bound.Followed && c.phase != Moving) {
		c.mu.Unlock()
		_ = k.ws.Close(1000, "")
		if c.phase == Closed {
			return ErrClosed
		}
		return fmt.Errorf("client: a newer session replaced the one on %s", s.wsURL)
	}
	var abandoned []Answer
	if old := c.sess; old != nil && old != s && (c.cur == nil || c.cur.done || c.cur.ended) {
		abandoned = old.w.drain(Abandoned, 0, nil) // no connection will answer them
		c.count(abandoned)
	}
	k.s = s
	s.token, s.area, s.entity, s.version = ack.ResumeToken, ack.Area, ack.Entity, ack.Version
	s.ended, s.endErr, s.endCode = false, nil, 0
	c.cur, c.sess, c.phase = k, s, Bound
	c.conns = append(c.conns, k)
	switch {
	case bound.Resumed:
		c.stats.Resumes++
		c.resend = s.w.pending(c.resend[:0], true)
	case bound.Followed:
		c.stats.Follows++
	default:
		c.stats.Hellos++
	}
	resend := c.resend
	if !bound.Resumed {
		resend = nil
	}
	c.stats.Resent += int64(len(resend))
	c.wakeLocked()
	c.deliverLocked()
	c.mu.Unlock()
	c.emitAnswers(abandoned)
	c.delivered()
	for i := range resend {
		c.wbuf = wire.AppendIntent(c.wbuf[:0], &resend[i])
		if err := k.ws.WriteMessage(c.wbuf); err != nil {
			break // the reader sees the connection end: dropped again
		}
	}
	bound.Session, bound.Conn, bound.Ack, bound.At = s.w.id, k.gen, ack, time.Now()
	go c.read(k, bound)
	return nil
}

// dialHello dials wsURL and sends msg (a hello or a resume for joinID),
// then reads until its hello_ack or its refusal.
func (c *Client) dialHello(ctx context.Context, wsURL string, msg wire.Message, joinID uint64) (*conn, *wire.HelloAck, error) {
	c.mu.Lock()
	closed := c.phase == Closed
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	if closed {
		return nil, nil, ErrClosed
	}
	what := msg.Type().String()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HelloTimeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel) // Close ends a dial in progress
	defer stop()
	ws, err := gate.DialWith(ctx, wsURL, gate.DialOptions{LocalAddr: c.cfg.LocalAddr, TLS: c.cfg.TLS})
	if err != nil {
		return nil, nil, fmt.Errorf("client: %s: %w", what, err)
	}
	ws.SetMaxMessageSize(wire.MaxServerMessageSize)
	fail := func(err error) (*conn, *wire.HelloAck, error) {
		_ = ws.Close(1000, "")
		return nil, nil, fmt.Errorf("client: %s to %s: %w", what, wsURL, err)
	}
	b, err := wire.Encode(msg)
	if err != nil {
		return fail(err)
	}
	if err := ws.WriteMessage(b); err != nil {
		return fail(err)
	}
	unblock := context.AfterFunc(ctx, func() { _ = ws.NetConn().SetReadDeadline(time.Now()) })
	defer unblock()
	for {
		b, err := ws.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("no hello_ack: %w", ctx.Err())
			}
			return fail(err)
		}
		t, err := wire.Peek(b)
		if err != nil {
			return fail(fmt.Errorf("before hello_ack: %w", err))
		}
		switch t {
		case wire.TypeHelloAck:
			m, err := wire.Decode(b)
			if err != nil {
				return fail(err)
			}
			ack := m.(*wire.HelloAck)
			if ack.JoinID != joinID {
				return fail(fmt.Errorf("hello_ack for join %d; want %d", ack.JoinID, joinID))
			}
			if !c.offered(ack.Version) {
				return fail(fmt.Errorf("hello_ack chose version %d; offered %v", ack.Version, c.cfg.Versions))
			}
			if !unblock() {
				return fail(fmt.Errorf("no hello_ack in time: %w", ctx.Err()))
			}
			_ = ws.NetConn().SetReadDeadline(time.Time{})
			return &conn{gen: gen, ws: ws, out: make([]Answer, 0, 8)}, ack, nil
		case wire.TypeError:
			m, err := wire.Decode(b)
			if err != nil {
				return fail(err)
			}
			e := m.(*wire.Error)
			_ = ws.Close(1000, "")
			return nil, nil, &RefusedError{Code: e.Code, Detail: e.Detail}
		default:
			return fail(fmt.Errorf("%s before hello_ack", t))
		}
	}
}

func (c *Client) offered(v uint16) bool {
	for _, o := range c.cfg.Versions {
		if o == v {
			return true
		}
	}
	return false
}

// Send sends in (its Seq is ignored) as the session's next seq and
// returns that seq. The Handler gets exactly one Answer for it, unless
// Send returns an error: then it never left, and no answer comes. It
// allocates nothing (after the first few calls). Safe from a Handler.
func (c *Client) Send(in wire.Intent) (uint32, error) { return c.SendIn(0, in) }

// SendIn is Send, only while session (a [State].Session; 0: any) is the
// current one, else ErrNotBound: a caller that acts on events it has not
// all handled yet (a crossing the client already followed) keeps its
// intents in the session it means.
func (c *Client) SendIn(session uint64, in wire.Intent) (uint32, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	now := time.Now()
	c.mu.Lock()
	if c.phase != Bound || (session != 0 && c.sess.w.id != session) {
		err := ErrClosed
		if c.phase != Closed {
			err = fmt.Errorf("%w (%s)", ErrNotBound, c.phase)
			if c.phase == Bound {
				err = fmt.Errorf("%w (session %d is over)", ErrNotBound, session)
			}
		}
		c.mu.Unlock()
		return 0, err
	}
	k, s := c.cur, c.sess
	seq, ok := s.w.add(&in, int64(now.Sub(c.epoch)))
	if !ok {
		c.mu.Unlock()
		return 0, ErrFull
	}
	c.stats.Sent++
	c.mu.Unlock()
	in.Seq = seq
	c.wbuf = wire.AppendIntent(c.wbuf[:0], &in)
	if err := k.ws.WriteMessage(c.wbuf); err != nil {
		c.mu.Lock()
		unsent := s.w.unsend(seq)
		if unsent {
			c.stats.Sent--
		}
		c.mu.Unlock()
		if unsent {
			return 0, fmt.Errorf("client: send intent %d: %w", seq, err)
		}
		// The session ended meanwhile and its answer (Void) is given.
	}
	return seq, nil
}

// Step sends a step in d (see Send).
func (c *Client) Step(d wire.Dir) (uint32, error) {
	return c.Send(wire.Intent{Kind: wire.IntentStep, Dir: d})
}

// MoveTo sends a move-to (x, y) (see Send).
func (c *Client) MoveTo(x, y int32) (uint32, error) {
	return c.Send(wire.Intent{Kind: wire.IntentMoveTo, Target: wire.Cell{X: x, Y: y}})
}

// Drop cuts the current connection without a close handshake, as a lost
// network would: the session stays, to Resume within the grace. No event
// comes for it; frames it read before may still be handed over.
func (c *Client) Drop() {
	c.mu.Lock()
	k := c.cur
	if k == nil || k.done || c.phase != Bound {
		c.mu.Unlock()
		return
	}
	k.done, c.phase = true, Dropped
	c.wakeLocked()
	c.mu.Unlock()
	_ = k.ws.NetConn().Close()
}

// Leave closes the current connection with a close handshake (1000), as
// a player who quits: the session ends (its unanswered intents are
// Abandoned) and the Client stays, for a later Hello. No event comes for
// the connection. Not to be called from a Handler function.
func (c *Client) Leave() error {
	c.mu.Lock()
	k, s := c.cur, c.sess
	if c.phase == Closed || k == nil {
		c.mu.Unlock()
		return nil
	}
	open := !k.done
	k.done = true
	c.phase = Ended // a crossing being followed is not installed either
	s.ended = true
	abandoned := s.w.drain(Abandoned, 0, nil)
	c.count(abandoned)
	c.wakeLocked()
	c.deliverLocked()
	c.mu.Unlock()
	var err error
	if open {
		err = k.ws.Close(1000, "bye")
	}
	c.emitAnswers(abandoned)
	c.delivered()
	return err
}

// Close closes every connection (1000) and ends the Client: unanswered
// intents are Abandoned (their answers are handed over before Close
// returns), and every later call fails with ErrClosed. Not to be called
// from a Handler function.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.phase == Closed {
		c.mu.Unlock()
		return nil
	}
	c.phase = Closed
	var abandoned []Answer
	if c.sess != nil {
		abandoned = c.sess.w.drain(Abandoned, 0, nil)
	}
	conns := c.conns
	c.conns = nil
	var open []*conn // the ones not closed yet: a Leave or Drop closed the others, and their readers may not have ended
	for _, k := range conns {
		if !k.done {
			open = append(open, k)
		}
		k.done = true
		if k.s != c.sess {
			abandoned = k.s.w.drain(Abandoned, 0, abandoned)
		}
	}
	c.count(abandoned)
	c.wakeLocked()
	c.mu.Unlock()
	c.cancel()
	var errs []error
	for _, k := range open {
		// One closed meanwhile (a crossing being followed closes the
		// connection it leaves) has ended as Close wants.
		if err := k.ws.Close(1000, "bye"); err != nil && !closedAlready(err) {
			errs = append(errs, err)
		}
	}
	c.emitAnswers(abandoned)
	return errors.Join(errs...)
}

// closedAlready reports whether err, a connection's close, says only
// that it was closed already (each of its parts is net.ErrClosed).
func closedAlready(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !closedAlready(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, net.ErrClosed)
}

// State returns a copy of the current session's state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateLocked()
}

func (c *Client) stateLocked() State {
	st := State{Phase: c.phase}
	if c.cur != nil {
		st.Conn = c.cur.gen
	}
	if s := c.sess; s != nil {
		st.Session = s.w.id
		st.Area, st.Entity, st.WSURL, st.Version = s.area, s.entity, s.wsURL, s.version
		st.Tick, st.AckSeq, st.Snapshots = s.tick, s.w.acked, s.snapshots
		st.LastSeq, st.Outstanding = s.w.last, s.w.open
		st.Closing, st.ClosingCode = s.closing, s.closingCode
		st.EndCode, st.EndErr = s.endCode, s.endErr
	}
	return st
}

// Stats returns a copy of the counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Pending appends the current session's unanswered intents to dst, oldest
// first (each with its seq), and returns it.
func (c *Client) Pending(dst []wire.Intent) []wire.Intent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return dst
	}
	return c.sess.w.pending(dst, false)
}

// Wait blocks until cond holds for the state (checked now and after each
// message and change) and returns that state, or the last one with an
// error when ctx ends first; the Handler has been called for everything
// that led to the state it returns. cond runs with the Client locked: it
// must only look at its argument. Made for tests; it costs the reader
// nothing while no one waits.
func (c *Client) Wait(ctx context.Context, cond func(State) bool) (State, error) {
	for {
		c.mu.Lock()
		st := c.stateLocked()
		if c.delivering == 0 && cond(st) {
			c.mu.Unlock()
			return st, nil
		}
		if c.notify == nil {
			c.notify = make(chan struct{})
		}
		ch := c.notify
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return st, fmt.Errorf("client: waiting (%s, ack_seq %d, last seq %d): %w", st.Phase, st.AckSeq, st.LastSeq, ctx.Err())
		}
	}
}

// WaitAck waits until the current session's ack_seq reaches seq (in
// serial order), failing if the session stops being bound first.
func (c *Client) WaitAck(ctx context.Context, seq uint32) error {
	st, err := c.Wait(ctx, func(s State) bool {
		return s.Phase != Bound || s.AckSeq == seq || wire.SeqAfter(s.AckSeq, seq)
	})
	if err == nil && st.Phase != Bound {
		err = fmt.Errorf("%w (%s) before ack_seq %d", ErrNotBound, st.Phase, seq)
	}
	return err
}

// WaitAnswer waits until the current session's seq is answered and
// returns its answer (without RTT or Conn); as with Wait, the Handler has
// had the answer by then.
func (c *Client) WaitAnswer(ctx context.Context, seq uint32) (Answer, error) {
	for {
		c.mu.Lock()
		var a Answer
		ok := false
		if c.sess != nil {
			a, ok = c.sess.w.answer(seq)
		}
		if ok && c.delivering == 0 {
			c.mu.Unlock()
			return a, nil
		}
		if c.notify == nil {
			c.notify = make(chan struct{})
		}
		ch := c.notify
		st := c.stateLocked()
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Answer{}, fmt.Errorf("client: no answer to seq %d (%s, ack_seq %d): %w", seq, st.Phase, st.AckSeq, ctx.Err())
		}
	}
}

// wakeLocked wakes the waiters, if any.
func (c *Client) wakeLocked() {
	if c.notify != nil {
		close(c.notify)
		c.notify = nil
	}
}

// deliverLocked marks a change whose handler calls follow once mu is
// released; the caller calls delivered when they are made. mu is held.
func (c *Client) deliverLocked() { c.delivering++ }

// delivered ends what deliverLocked began, and wakes the waiters.
func (c *Client) delivered() {
	c.mu.Lock()
	c.delivering--
	c.wakeLocked()
	c.mu.Unlock()
}

// count adds settled answers to the counters; mu is held.
func (c *Client) count(as []Answer) {
	for i := range as {
		switch as[i].Outcome {
		case Applied:
			c.stats.Applied++
		case Refused:
			c.stats.Refused++
		case Unseen:
			c.stats.Unseen++
		case Void:
			c.stats.Void++
		case Abandoned:
			c.stats.Abandoned++
		}
	}
}

func (c *Client) emitAnswers(as []Answer) {
	if c.h.Answer == nil || len(as) == 0 {
		return
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	for _, a := range as {
		c.h.Answer(a)
	}
}

func (c *Client) emitEvent(e Event) {
	if c.h.Event == nil {
		return
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	c.h.Event(e)
}
