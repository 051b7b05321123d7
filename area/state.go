package area

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/build"
	"github.com/leyworks/ley/systems/flowfield"
	"github.com/leyworks/ley/systems/interest"
)

// Host runs a pool of Areas behind one WebSocket listener, driven by one
// ecs.Clock, and keeps a control link to the director.
//
// Concurrency: the gate's event loops run the session callbacks; the
// clock's workers tick the Areas; the link's goroutines talk to the
// director. They meet only through each Area's inbox (PostControl, Post),
// the peers' atomic bindings, and the indexes below under mu.
type Host struct {
	cfg   Config
	log   *slog.Logger
	clock *ecs.Clock
	gate  *gate.Server
	link  *link
	boot  uint64

	hostID    atomic.Uint32
	peers     atomic.Int64 // connected peers
	bytesOut  atomic.Uint64
	framesOut atomic.Uint64
	// census counts the bodies of the host's Areas, areaBytes their
	// memory estimates (areaBytes), for the heartbeat.
	census    ecs.Census
	areaBytes atomic.Int64
	// areaFailures counts Areas that panicked and were failed alone;
	// helloTimeouts connections closed for not saying hello in time.
	areaFailures  atomic.Uint64
	helloTimeouts atomic.Uint64
	wsURL         string
	// spectators counts the spectators bound on the host (spectate.go);
	// parked its parked Areas (park.go).
	spectators atomic.Int32
	parked     atomic.Int64
	// letGo counts the memory (Area estimates) parked Areas let go of
	// since the host last gave memory back to the system; giveBack is
	// armed while a give-back is due (park.go).
	letGo    atomic.Int64
	giveBack atomic.Bool

	mu      sync.Mutex // guards areas, grants, resumes, closed
	areas   map[uint32]*hostArea
	grants  map[string]*hostArea // grant token -> Area holding it
	resumes map[string]*hostArea // resume token -> Area holding the body
	expired map[string]time.Time // grant tokens that expired unused, and when
	closed  bool
	allGone chan struct{} // closed when the last Area unloaded after shutdown began
}

// hostArea is one Area of the pool with its sessions and persistence.
// Everything but the atomics is owned by the goroutine ticking the Area.
type hostArea struct {
	h     *Host
	id    uint32
	epoch uint64
	kind  string
	// eng is the Area as the engine built it (systems/build): its world,
	// static map, creature and action systems; a is its ecs.Area.
	eng      *build.Built
	a        *ecs.Area
	interest *interest.System
	// spec is what the Area is built from (newHostArea), kept to build it
	// again when it was parked; parked is its state while it is (nil
	// otherwise), and parkAt when it parks if it stays frozen with
	// nothing to do (park.go). persistedSum is the hash of the blob of
	// its last snapshot (blobSum): it parks only the state the director
	// holds.
	spec         build.Spec
	parked       []byte
	parkAt       time.Time
	persistedSum uint64
	// parkedView is what an inspection reads of the Area while it is
	// parked, from any goroutine, without building it again; nil when it
	// is not parked.
	parkedView atomic.Pointer[parkedView]
	snaps      snapshots
	static     wire.Static // scratch of sendStatic
	// joins counts bodies spawned for a join (it picks the spawn point of
	// the next one with no place of its own).
	joins uint32

	grants  map[string]*grant
	bodies  map[uint64]*body // by account
	order   []*body          // the same bodies, for iteration in a stable order
	routes  []route          // by entity ID
	bound   int
	seq     uint64
	acked   uint64
	unacked *control.Snapshot
	sentAt  time.Time // when unacked was last sent
	// departed holds the final state of each character whose body left
	// other than through a portal (it quit, its resume grace ended, it was
	// evicted), from the snapshot that first held it until one holding it
	// is acked: every snapshot until then holds it too (a newer snapshot
	// replaces an unacked older one, which must not take the state with
	// it), and an eviction of the account names that snapshot
	// (docs/items.md, "Departures, rejoins, doubt and cut-off hosts").
	departed map[uint64]departure
	fenced   bool // the director refused our epoch: never write again
	// bytes is the estimate of the memory the Area holds (areaBytes),
	// fixed at its spawn; read by the heartbeat from any goroutine.
	bytes int64
	// unloaded is set when the host forgot the Area (Host.unload): work
	// that reaches it after (a grant posted in the meantime) is refused.
	unloaded bool

	lastPersist  time.Time
	lastPresence time.Time
	// snapTick is the tick the rounds count from (roundAt): the tick the
	// last round was due at, which is the tick it ran at unless it ran
	// late; the next is due SnapshotEvery ticks after it. unrounded is
	// set when a tick ran since the last round run.
	snapTick  uint64
	unrounded bool
	// lastPresenceMsg is the encoded presence list last sent to peers.
	lastPresenceMsg string
	// nextChores is when the chores run next: choresEvery after they
	// last ran (choresRan), or sooner when something asks
	// (scheduleChores).
	nextChores time.Time
	choresRan  time.Time
	closing    *closing
	answerBuf  []byte

	intents   ecs.Map[ecs.Intents]
	players   ecs.Map[ecs.Player]
	positions ecs.Map[ecs.Position]
	paths     ecs.Map[ecs.Path]

	portals   []control.Portal
	portalAt  []int16 // per square: index into portals, or -1
	crossings map[string]*crossing
	settling  map[string]*crossing // timed out, still asking the director for the outcome

	// placed is the incarnation the director placed here last, with its
	// placement credential; ackedSeen the last snapshot seq it acked: for
	// re-registration, read off the Area's goroutine.
	placed    atomic.Pointer[placement]
	ackedSeen atomic.Uint64
	// bodiesSeen are the accounts of the Area's bodies as of its last
	// presence report, for re-registration.
	bodiesSeen atomic.Pointer[[]uint64]

	// panicPoint names the armed failpoint that panics in this Area's tick
	// ("" when none is armed, the normal case).
	panicPoint string

	// watchers are the Area's spectators (spectate.go).
	watchers watchers

	joinMu  sync.Mutex       // guards waiting: event loops add, the Area removes
	waiting map[*peer]uint64 // hellos and resumes posted to the Area, by join id
}

// closing is an Area's shutdown in progress.
type closing struct {
	reason   uint16
	graceEnd time.Time
	released bool   // the peers were let go (the grace is over)
	finalSeq uint64 // the final snapshot's seq, once sent
	ackBy    time.Time
}

// body is a player's body in the Area and the peer driving it, if any.
//
// A session is what a hello starts and a resume continues: its seqs, its
// ack_seq and its mark (session, carried by its intents as ecs.Intent.Tag
// and checked against ecs.Player.Session). seqs packs the session's mark
// (high 32 bits) and the last intent seq the session accepted (low 32
// bits): the connection's event loop advances it with a compare-and-swap,
// so an intent of a session taken over meanwhile can never move the new
// session's seqs.
type body struct {
	account   uint64
	name      string
	entity    ecs.Entity
	peer      *peer
	session   uint32
	version   uint16 // the session's protocol version
	seqs      atomic.Uint64
	resume    string
	droppedAt time.Time // when its peer left; zero while bound
	since     time.Time // when it came into the Area
}

// route maps an entity ID to the body it was last given to, so answers
// reach the session that sent the intent (see ecs.Intent.Tag).
type route struct {
	entity ecs.Entity
	b      *body
}

// grant is a join grant registered by the director: single use, expiring.
type grant struct {
	token   string
	joinID  uint64
	expires time.Time
	name    string
	char    control.Character
}

// binding ties a connection to a body in an Area. It is immutable: a new
// binding replaces it whole, so the event loop reads it with one atomic load.
type binding struct {
	ha      *hostArea
	b       *body
	entity  ecs.Entity
	session uint32 // the session's mark, carried by its intents (ecs.Intent.Tag)
}

// peer is one client connection.
type peer struct {
	h    *Host
	conn *gate.Conn

	bind   atomic.Pointer[binding]
	lost   atomic.Uint32 // wire code of why a binding was lost; 0 if never bound or bound now
	closed atomic.Bool
	// pending is set while a hello or resume is being answered, so a
	// second one is refused rather than raced.
	pending atomic.Bool
	// leaving is set while a leave waits for its Area, so a stream of
	// them posts one piece of work there, not one each.
	leaving atomic.Bool
	// spec is set while the peer is a spectator (spectate.go).
	spec atomic.Pointer[spectator]

	// Owned by the connection's event loop (OnMessage runs one at a time).
	tokens    float64
	refilled  time.Time
	flood     float64   // the flood meter (see refused)
	floodAt   time.Time // when it was last drained
	malformed int
	unbound   int         // NOT_HELLO and REHELLO answers, and joins refused, in a row without a session
	helloBy   *time.Timer // closes the connection if no hello binds it in time
	intent    wire.Intent
	scratch   []byte

	// Owned by the goroutine of the Area the peer is bound to.
	version     uint16
	view        interest.View
	hasPresence bool // the Area's presence list was sent to it
}

// link is the host's control connection to the director: it registers,
// heartbeats, reconnects with backoff, and feeds received messages to the
// host. send may be called from any goroutine and never blocks.
//
// It also keeps the host's lease (control.Registered.LeaseMS): the time
// the director last answered a heartbeat, counted on this host's
// monotonic clock from when the heartbeat left. Past the lease the host
// is out of touch: the director may have made its Areas live elsewhere,
// so its sessions end and it binds no one until the director answers
// again (see Host.watchLink).
type link struct {
	h       *Host
	out     chan control.Message
	flushes chan chan struct{} // flush's requests to the writer, each answered by closing it
	dropped atomic.Uint64
	up      atomic.Bool

	mu   sync.Mutex // guards conn
	conn *control.Conn

	born       time.Time    // the monotonic origin of the times below
	leaseMS    atomic.Int64 // the lease the director gave (0: none)
	leaseEnd   atomic.Int64 // ns since born: the lease runs to here
	outOfTouch atomic.Bool  // the lease ran out and no answer came since
	downSince  atomic.Int64 // ns since born when the link last went down
	beatsMu    sync.Mutex   // guards beats, nextBeat
	beats      [16]sentBeat // the last heartbeats sent, for their acks
	nextBeat   int
}

// sentBeat is a heartbeat sent: its UnixMS and when, on the monotonic
// clock (ns since born).
type sentBeat struct {
	unixMS int64
	at     int64
}

// crossing is a player on their way through a portal: their body stands on
// the portal square, in transit, until the director answers.
type crossing struct {
	b        *body
	out      *control.PortalOut
	from     ecs.Cell
	deadline time.Time
	sentAt   time.Time
}

// spectator is a peer watching an Area. ha and p never change; the rest
// belongs to the Area's goroutine, but for written, which the
// connection's writer sets.
type spectator struct {
	ha      *hostArea
	p       *peer
	account uint64

	// watch is the player whose point of view it is sent; the zero
	// entity: the whole Area.
	watch ecs.Entity
	// view is its interest view while it watches a player.
	view interest.View
	// staticVer is the map version of each hash cell it was sent (0:
	// none), while it watches the whole Area.
	staticVer []uint32
	// needReset: its next frame drops its view first (a new choice of
	// watch); resetAt is the round (tick, for the whole Area) of the last
	// frame that did, until one of them is written whole.
	needReset bool
	resetAt   uint64
	// written is the tick of the last whole-Area frame written whole to
	// its socket (the reliable first one counts as written): it holds
	// every cell as of then.
	written atomic.Uint64
	// hasPresence: it was sent the Area's presence list.
	hasPresence bool
	// flowOf is the creature whose flow field it is sent (the zero
	// entity: none); flowSent the last flow message sent it.
	flowOf   ecs.Entity
	flowSent []byte
	// flowKey is what the field sent was swept for: the target, its
	// square and the map's generation; a round that finds them unchanged
	// sweeps nothing.
	flowKey flowKey
}

// spectatorGrant is a spectator grant the director registered: single
// use, expiring.
type spectatorGrant struct {
	joinID  uint64
	expires time.Time
	account uint64 // the admin's
}

// watchers are an Area's spectators and their pending grants. Owned by
// the Area's goroutine.
type watchers struct {
	grants map[string]*spectatorGrant
	list   []*spectator
	// whole is the scratch of a whole-Area frame sent reliably (a first
	// frame).
	whole []byte
	// The cells as the last round encoded them: prev holds each cell's
	// record (at span[hc]; next is the spare buffer of the swap), changed
	// the tick of the round that found it different, cur where this
	// round's records are in the round's arena. fresh: nothing to compare
	// with (the first round watched), every cell counts as changed.
	prev, next []byte
	span, cur  []cellSpan
	changed    []uint64
	fresh      bool
	// The flow fields' scratch: the creatures' component map (made at
	// the first use), a window of the floor layer and its field.
	creatures *ecs.Map[ecs.Creature]
	flowFloor []int32
	flowField *flowfield.Field
	flowDirs  []byte
}

// flowKey names what a flow field depends on.
type flowKey struct {
	target ecs.Entity
	square ecs.Cell
	gen    uint64
}

// cellSpan is where one cell's record is in a buffer.
type cellSpan struct{ off, len int32 }

// snapshots delivers an Area's snapshot rounds (systems/interest builds
// them) to its bound sessions: one shared arena per round, each peer's
// frame written with writev from it, latest-wins. Owned by the Area's
// goroutine, but for its pool of arenas, which the gate's event loops
// give back to.
type snapshots struct {
	frame interest.Frame

	mu   sync.Mutex // guards free: a Shared's OnFree runs on event loops
	free []*gate.Shared
}

// departure is a departed character's final state and the seq of the
// first snapshot that held it.
type departure struct {
	char  control.Character
	since uint64
}

// parkedView is a parked Area as an inspection reads it: its state is its
// blob, and nobody is in it or coming (mayPark).
type parkedView struct {
	epoch             uint64
	blob              []byte
	w, h              int
	tick              uint64
	bodies, creatures int
}

// placement is one incarnation of an Area as the director placed it on
// this host: its epoch and placement credential (control.SpawnArea).
type placement struct {
	epoch      uint64
	credential string
}
