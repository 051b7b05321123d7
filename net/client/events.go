package client

import (
	"time"

	"github.com/leyworks/ley/net/wire"
)

// Outcome is how an intent's seq was settled. Every intent Send sent gets
// exactly one [Answer] with one of these.
type Outcome uint8

// The outcomes.
const (
	// Applied: a snapshot's ack_seq reached the seq.
	Applied Outcome = iota + 1
	// Refused: an intent_result (or an error naming the seq) refused it;
	// [Answer.Code] says why.
	Refused
	// Unseen: the answer went out on a connection that dropped before it
	// arrived; the first snapshot of the resumed connection acknowledged the
	// seq, so it was applied or refused, and which one the client cannot
	// know (docs/protocol.md, Resuming). That snapshot's state is the
	// truth it made.
	Unseen
	// Void: the session ended (portal_moved, taken_over, rehello) before
	// the server answered the seq; it was not applied.
	Void
	// Abandoned: the client left the session with the seq unanswered
	// (Close, or a new Hello instead of a resume): its fate is unknown.
	Abandoned
)

var outcomeNames = [...]string{Applied: "applied", Refused: "refused", Unseen: "unseen", Void: "void", Abandoned: "abandoned"}

// String returns the outcome's name, such as "applied".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return "outcome(?)"
}

// Answer is the settlement of one intent.
type Answer struct {
	// Intent is the intent as sent; Intent.Seq is its seq.
	Intent  wire.Intent
	Outcome Outcome
	// Code is the refusal's code for Refused, CodeOK otherwise.
	Code wire.Code
	// RTT is the time from the intent's first send to the message that
	// answered it, for Applied and Refused; 0 otherwise.
	RTT time.Duration
	// Session is the session it was sent in; Conn the connection whose
	// message settled it (0 when the client settled it itself: Abandoned).
	Session, Conn uint64
}

// Frame is one message as it arrived, handed to [Handler.Frame] after the
// client has acted on it.
type Frame struct {
	// Session and Conn are the session and connection it came on.
	Session, Conn uint64
	Type          wire.Type
	// Bytes is the whole message. It points into the connection's read
	// buffer: valid only during the call, and never to be written.
	Bytes []byte
	At    time.Time
	// Tick, AckSeq and Flags are a snapshot's header (zero for another
	// type); First is set on the first snapshot of the connection (after
	// its hello or resume), Gap is the time since the connection's
	// previous snapshot and Ticks the ticks between the two (both 0 for
	// the first). A server sends no snapshot in a round with nothing new
	// for the session, so Ticks may span several rounds.
	Tick   uint64
	AckSeq uint32
	Flags  wire.SnapshotFlags
	First  bool
	Gap    time.Duration
	Ticks  uint64
}

// Decode decodes the frame's message (it allocates: for a handler that
// draws what it reads). A snapshot comes back a whole [*wire.Snapshot]
// even when it came in the short form: its tick and ack_seq are the
// frame's header, which the client counted from the connection's snapshot
// before it.
func (f Frame) Decode() (wire.Message, error) {
	m, err := wire.Decode(f.Bytes)
	if s, ok := m.(*wire.ShortSnapshot); ok {
		m = &wire.Snapshot{Tick: f.Tick, AckSeq: f.AckSeq, Flags: f.Flags, Records: s.Records}
	}
	return m, err
}

// EventKind says what an [Event] reports.
type EventKind uint8

// The events.
const (
	// EventBound: a hello or resume was answered; a session is bound on
	// Conn (Ack is its hello_ack; Resumed or Followed say how it came).
	EventBound EventKind = iota + 1
	// EventClosing: area_closing: the Area closes in Grace for Code. Play
	// goes on until the rehello that ends the session (EventEnded).
	EventClosing
	// EventRestored: portal_blocked or portal_transfer_rejected (Type)
	// for Code: the crossing did not happen, the body is back on the
	// square it stepped from, and the session goes on.
	EventRestored
	// EventMoved: portal_moved (Moved): the session ended by a crossing;
	// its unanswered intents are void. On the current connection, with
	// Config.FollowPortals, the client then connects to Moved.WSURL and
	// says hello with its grant: EventBound (Followed) or EventEnded (Err)
	// follows.
	EventMoved
	// EventEnded: the server ended the session: taken_over (Code
	// TAKEN_OVER) or rehello (its Code), or a crossing could not be
	// followed (Err). The client must join again through the director.
	EventEnded
	// EventDropped: the connection ended while its session was bound,
	// with no word from the server (Err says how: a *gate.CloseError when
	// the server closed it). Resume the session within the grace, or join
	// again.
	EventDropped
	// EventDisconnected: a connection whose session had ended (the close
	// that follows taken_over, rehello or portal_moved), or that a newer
	// connection had replaced, ended (Err).
	EventDisconnected
	// EventError: an error message that settled no intent (Code, Detail).
	EventError
	// EventUnmatched: an intent_result naming no unanswered seq: a second
	// answer to a seq already answered (Duplicate), or a seq this session
	// never sent (Seq, Code).
	EventUnmatched
	// EventProtocol: a message that breaks the protocol (Err): one that
	// does not decode, or a snapshot acknowledging a seq never sent. The
	// client skips it; the connection goes on.
	EventProtocol
)

var eventNames = [...]string{
	EventBound: "bound", EventClosing: "closing", EventRestored: "restored", EventMoved: "moved",
	EventEnded: "ended", EventDropped: "dropped", EventDisconnected: "disconnected", EventError: "error",
	EventUnmatched: "unmatched", EventProtocol: "protocol",
}

// String returns the kind's name, such as "bound".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "event(?)"
}

// Event is a change of a session or a connection; which fields are set
// depends on Kind (see each EventKind).
type Event struct {
	Kind EventKind
	// Session and Conn are the session and the connection it is about.
	Session, Conn uint64
	At            time.Time
	// Type is the message that caused it (0 for a connection's end).
	Type wire.Type
	Code wire.Code
	// Grace is an area_closing's grace.
	Grace time.Duration
	// Seq and Duplicate describe an EventUnmatched.
	Seq       uint32
	Duplicate bool
	// Ack is an EventBound's hello_ack; Resumed and Followed say whether a
	// resume or a portal crossing bound it.
	Ack      *wire.HelloAck
	Resumed  bool
	Followed bool
	// Moved is an EventMoved's portal_moved.
	Moved *wire.PortalMoved
	// Detail is an error message's detail.
	Detail string
	Err    error
}

// Handler receives what a [Client] reads. Every function is optional. The
// client calls them from its reader goroutines, one call at a time (never
// two at once, whichever connection they come from), and for one message
// in this order: Frame, then the Answers it settled, then its Event. A
// function may call Send, Step, MoveTo, Pending, State and Stats; it must
// not call Hello, Resume, Drop, Close or the Waits (they wait for it), and
// should return quickly: the connection is not read meanwhile.
type Handler struct {
	Frame  func(Frame)
	Answer func(Answer)
	Event  func(Event)
}

// Phase is where a Client's current session stands.
type Phase uint8

// The phases.
const (
	// Idle: no session yet.
	Idle Phase = iota
	// Bound: a session is bound on the current connection.
	Bound
	// Moving: a portal_moved ended the session; the client is connecting
	// to the next Area.
	Moving
	// Dropped: the connection dropped under a bound session: Resume it.
	Dropped
	// Ended: the server ended the session (or a crossing could not be
	// followed, or a resume was refused): join again.
	Ended
	// Closed: Close was called.
	Closed
)

var phaseNames = [...]string{Idle: "idle", Bound: "bound", Moving: "moving", Dropped: "dropped", Ended: "ended", Closed: "closed"}

// String returns the phase's name, such as "bound".
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "phase(?)"
}

// State is a copy of a Client's current session, as of its last message.
type State struct {
	Phase Phase
	// Session and Conn number the current session and connection (0
	// before the first); only Hello, Resume (Conn) and a followed crossing
	// change them.
	Session, Conn uint64
	// The session: its Area, the player's entity, its ws_url and the
	// negotiated version (from its hello_ack).
	Area, Entity uint32
	WSURL        string
	Version      uint16
	// Tick and AckSeq are its last snapshot's; Snapshots counts them.
	Tick      uint64
	AckSeq    uint32
	Snapshots int64
	// LastSeq is the last seq it sent (0 before the first); Outstanding
	// counts its unanswered intents.
	LastSeq     uint32
	Outstanding int
	// Closing is set once an area_closing came (ClosingCode its reason).
	Closing     bool
	ClosingCode wire.Code
	// EndCode and EndErr say why the session ended (TAKEN_OVER, a
	// rehello's code, a refused resume's code; a failed crossing's error).
	EndCode wire.Code
	EndErr  error
}

// Stats are a Client's counters over its whole life (every session).
// Every intent sent ends as exactly one of Applied, Refused, Unseen, Void
// or Abandoned, unless it is still outstanding.
type Stats struct {
	Sent, Applied, Refused, Unseen, Void, Abandoned int64
	// Resent counts copies of unanswered intents a resume sent again;
	// Copies the STALE_SEQ refusals of such copies (the first copy's
	// answer is the one that counts).
	Resent, Copies int64
	// Duplicates and Strays count intent_results naming no unanswered seq
	// (see EventUnmatched).
	Duplicates, Strays int64
	// Frames and Bytes count the messages received (Bytes their payload);
	// Snapshots the snapshots among them.
	Frames, Bytes, Snapshots int64
	// Hellos, Resumes and Follows count the sessions bound by each way.
	Hellos, Resumes, Follows int64
	// Protocol counts messages that broke the protocol (EventProtocol).
	Protocol int64
}

// GapLessQuiet is a snapshot's gap as a capacity SLO counts it: gap, the
// time since the connection's previous snapshot, less the ticks between
// the two beyond one round's, in which nothing new came for the session
// (a round with nothing new sends it no snapshot, and an Area at rest runs
// no round until something changes, so the next snapshot may come any
// tick: docs/protocol.md, "When a snapshot is sent"). ticks is
// [Frame.Ticks]; a round is roundTicks ticks long and lasts round. A late
// host's skipped clock slots count as ticks too, so a host stall shows in
// the intents' round trip, not here. With roundTicks 0 (the rates not yet
// known) it is gap.
func GapLessQuiet(gap time.Duration, ticks, roundTicks uint64, round time.Duration) time.Duration {
	if roundTicks == 0 || ticks <= roundTicks {
		return gap
	}
	return max(gap-time.Duration(ticks-roundTicks)*round/time.Duration(roundTicks), 0)
}
