package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leyworks/ley/internal/keylock"
	"github.com/leyworks/ley/internal/loglimit"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

// Store is what the registry needs of the director's store: the Areas'
// records and snapshots, their characters (to adopt a host's Areas), and
// the records of the hosts the realm's directors spawned.
type Store interface {
	Area(ctx context.Context, id store.AreaID) (store.Area, error)
	BeginIncarnation(ctx context.Context, area store.AreaID, placement store.TokenHash) (store.Epoch, error)
	AreaSnapshot(ctx context.Context, area store.AreaID) ([]byte, store.Seq, store.Epoch, error)
	WriteSnapshot(ctx context.Context, s store.Snapshot) (store.SnapshotResult, error)
	WriteSnapshots(ctx context.Context, snaps []store.Snapshot) ([]store.SnapshotWrite, error)
	CharactersIn(ctx context.Context, area store.AreaID) ([]store.Character, error)
	PutHost(ctx context.Context, h store.HostRecord) error
	Hosts(ctx context.Context) ([]store.HostRecord, error)
	DeleteHost(ctx context.Context, credential store.TokenHash) error
}

// Plan is what an Area is made live with beyond its stored record: the
// size it runs at and its portals (from the realm's content and the
// owner's rules).
type Plan struct {
	W, H    int
	Portals []control.Portal
	// Stale reports a stored blob the Area's map has no place for (an
	// Area stored before templates): it starts from its map.
	Stale bool
	// NPCs bounds the creatures and wanderers the Area's snapshots may
	// hold (what its map's spawners make, or the wanderers of an Area of
	// no template); a snapshot past it is refused. Bounded says the bound
	// is known (else there is none).
	NPCs    int
	Bounded bool
}

// maxNPCs is the bound of p, -1 for none.
func (p Plan) maxNPCs() int {
	if !p.Bounded {
		return -1
	}
	return p.NPCs
}

// Starter starts area host processes on demand (the director's spawner).
type Starter interface {
	// StartExtra starts one more host, or fails (the process rail);
	// others is the number of running hosts it did not start (adopted).
	StartExtra(others int) error
}

// Config configures a Registry. Start from DefaultConfig.
type Config struct {
	// HostKey lets hosts started elsewhere register; empty: only spawned
	// hosts and hosts with a certificate of the realm's CA.
	HostKey string
	// ControlTLS is the control listener's TLS configuration (nil: plain
	// connections only); ControlInsecure lets a host on another machine
	// register with the host key over a plain link.
	ControlTLS      *tls.Config
	ControlInsecure bool
	// MaxUnregistered caps the control connections waiting to register
	// (the oldest is shed for a new one past it); MaxUnregisteredPerAddr
	// caps one source address's share. RegisterTimeout bounds a
	// registration.
	MaxUnregistered        int
	MaxUnregisteredPerAddr int
	RegisterTimeout        time.Duration
	// HeartbeatTimeout is how long a host may stay silent before its link
	// is dropped. Lease is how long a host keeps its sessions without the
	// director's answer to its heartbeats (Registered.LeaseMS): a host
	// whose link ended while its process may still live (on another
	// machine, or alive on this one) has its Areas made live elsewhere, and
	// its characters moved, only once its lease ran out. After a start,
	// the director waits as long for the hosts of its predecessor to come
	// back before it makes their Areas live elsewhere.
	HeartbeatTimeout time.Duration
	Lease            time.Duration
	// JoinTimeout bounds each step of making an Area live and of a grant.
	// GrantTTL is a grant's life; GrantHold how long an unused grant
	// counts towards the realm's head count (Inside).
	JoinTimeout time.Duration
	GrantTTL    time.Duration
	GrantHold   time.Duration
	// AreaIdleGrace is how long an Area whose host reports nobody stays
	// loaded before it is closed.
	AreaIdleGrace time.Duration
	// SpawnedTickRate is the tick rate of the hosts the director spawns
	// (the seq bound of their snapshots).
	SpawnedTickRate int
	// SnapshotRate and SnapshotBurst are each host's snapshot budget, in
	// bytes (blobs and characters' states): SnapshotBurst at once, then
	// SnapshotRate a second. A snapshot past it is neither decoded nor
	// written nor acked: the host keeps it and sends it (or a newer one)
	// again. A host's Areas snapshot every PersistEvery (30 s): a full host
	// needs a small part of the default; a forger's flood gets no more.
	SnapshotRate  float64
	SnapshotBurst float64
	// Leading reports whether this director leads the realm now, and if
	// not, what to tell a host (refusal) and where the leader's control
	// address is ("" unknown). nil: it always leads.
	Leading func() (leading bool, refusal, leader string)
	// Plan says how an Area is made live (size, portals); nil: its stored
	// size, no portals.
	Plan func(ctx context.Context, a store.Area) Plan
	// Starter starts hosts on demand; nil: the registry starts none.
	Starter Starter
	// OnPortalOut receives the crossings a host asks for (the transfer
	// owner answers them); it runs on the host's link reader and must not
	// block.
	OnPortalOut func(ctx context.Context, h *Host, m *control.PortalOut)
	// Registerer takes the registry's metrics (nil: none registered).
	Registerer prometheus.Registerer
	// Logger receives the registry's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a fresh Config with ley's defaults.
func DefaultConfig() Config {
	return Config{
		MaxUnregistered:        64,
		MaxUnregisteredPerAddr: 8,
		RegisterTimeout:        5 * time.Second,
		HeartbeatTimeout:       5 * time.Second,
		Lease:                  10 * time.Second,
		JoinTimeout:            10 * time.Second,
		GrantTTL:               90 * time.Second,
		GrantHold:              15 * time.Second,
		AreaIdleGrace:          60 * time.Second,
		SpawnedTickRate:        20,
		SnapshotRate:           4 << 20,
		SnapshotBurst:          128 << 20,
	}
}

func (c *Config) validate() error {
	switch {
	case c.MaxUnregistered < 1 || c.MaxUnregisteredPerAddr < 1 || c.RegisterTimeout <= 0:
		return fmt.Errorf("registry: control: %d unregistered connections (%d per address), %v to register", c.MaxUnregistered, c.MaxUnregisteredPerAddr, c.RegisterTimeout)
	case c.HeartbeatTimeout <= 0 || c.JoinTimeout <= 0 || c.GrantTTL <= 0 || c.GrantHold <= 0 || c.AreaIdleGrace < 0:
		return errors.New("registry: durations must be positive")
	case c.Lease < 0:
		return errors.New("registry: the host lease must not be negative")
	case c.SnapshotRate <= 0 || c.SnapshotBurst < blob.MaxBlob:
		return fmt.Errorf("registry: a snapshot budget of %v bytes a second, %v at once: want a positive rate and a burst of at least one largest blob (%d bytes)", c.SnapshotRate, c.SnapshotBurst, blob.MaxBlob)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Registry is the director's record of the realm's area hosts and live
// Areas: it serves the control channel hosts register on, decides where
// an Area goes live (placement, by memory room) and with which credential,
// registers join grants, evicts a character's bodies from wherever it was
// before it goes elsewhere, persists the hosts' snapshots, and keeps its
// word to hosts that outlive a director (host records, placement
// credentials, leases).
//
// Concurrency: control links (one goroutine each), HTTP handlers and the
// loops of Run share the Registry; mu guards the registry's maps and every
// Host's and Live's fields noted as such. It never holds mu across I/O.
type Registry struct {
	cfg     Config
	log     *slog.Logger
	links   sync.WaitGroup // the control connections being served (WaitLinks)
	store   Store
	metrics *metrics
	logs    loglimit.Limiter

	// accounts are the account locks: a join's, a crossing's (package
	// transfer takes them through LockAccount) and an adoption's of the
	// bodies it adopts.
	accounts keylock.Map[store.AccountID]

	waiting  waitingConns // control connections not registered yet
	started  time.Time
	inDoubt  atomic.Bool // the store is unavailable (snapshots wait)
	pendingW pendingWrites

	mu          sync.Mutex // guards everything below, and Host and Live fields as noted
	hosts       map[uint32]*Host
	nextHost    uint32
	areas       map[store.AreaID]*Live
	lost        map[store.AreaID]time.Time   // Areas of hosts cut off: not made live elsewhere before
	ending      map[store.AreaID]int         // Areas whose incarnation a move by the door is ending (EndIncarnation)
	ended       map[store.AreaID]store.Epoch // the incarnation such a move ended: never adopted
	spawned     map[store.TokenHash]*child   // the spawn credentials this director issued
	recorded    map[store.TokenHash]store.HostRecord
	adoptUntil  time.Time // until then, recorded hosts may still come back
	changed     chan struct{}
	recalled    chan struct{} // closed once Recall read the recorded hosts
	hostFailure *HostFailure
	inspectSeq  uint64
}

// child is a host this director started, by its credential's hash.
type child struct {
	registered chan struct{} // closed when it registered
	host       *Host
}

// HostFailure says why spawned hosts exit before they register: the last
// one's reason, when, and how many did in a row. Immutable.
type HostFailure struct {
	Reason string
	At     time.Time
	Count  int
}

// LockAccount takes acct's lock and returns its release: a join's or a
// crossing's of one account never interleave with each other, nor with
// the adoption of an Area holding a body of the account (see
// lockBodies).
func (r *Registry) LockAccount(acct store.AccountID) func() { return r.accounts.Lock(acct) }

// notify wakes everyone waiting for the host registry. r.mu held.
func (r *Registry) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// wait waits (bounded) for the host registry to change.
func (r *Registry) wait(ctx context.Context, max time.Duration) {
	r.mu.Lock()
	ch := r.changed
	r.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-time.After(min(max, 250*time.Millisecond)):
	}
}

// Recall reads the hosts the realm's directors spawned that are still
// recorded (a director that stopped or died left them running) and gives
// them Lease to come back and be adopted: until then their Areas are not
// made live elsewhere (and Adopted counts them). Call it once, before
// serving.
func (r *Registry) Recall(ctx context.Context) error {
	hs, err := r.store.Hosts(ctx)
	if err != nil {
		return fmt.Errorf("registry: recall hosts: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range hs {
		r.recorded[h.Credential] = h
	}
	if len(hs) > 0 {
		r.adoptUntil = time.Now().Add(r.cfg.Lease + r.cfg.HeartbeatTimeout)
	}
	select {
	case <-r.recalled:
	default:
		close(r.recalled)
	}
	return nil
}

// SetStarter sets the Starter the registry starts hosts with on demand
// (Config.Starter); call it before it serves joins.
func (r *Registry) SetStarter(s Starter) {
	r.mu.Lock()
	r.cfg.Starter = s
	r.mu.Unlock()
}

// SetPortalHandler sets the handler of crossings (Config.OnPortalOut);
// call it before Serve.
func (r *Registry) SetPortalHandler(f func(ctx context.Context, h *Host, m *control.PortalOut)) {
	r.cfg.OnPortalOut = f
}

// starter is Config.Starter, under r.mu.
func (r *Registry) starter() Starter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.Starter
}

// DropLinks closes the link of every registered host: they register
// again, with whichever director leads next. A director calls it as it
// stops (its hosts keep running).
func (r *Registry) DropLinks() {
	r.mu.Lock()
	hosts := make([]*Host, 0, len(r.hosts))
	for _, h := range r.hosts {
		hosts = append(hosts, h)
	}
	r.mu.Unlock()
	for _, h := range hosts {
		h.conn.Close()
	}
}

// Failure reports why spawned hosts cannot start (nil when they can):
// /readyz shows it.
func (r *Registry) Failure() *HostFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hostFailure
}

// SetStoreInDoubt records whether the store is unavailable (the director
// tells it so from its own store calls): snapshots then wait in memory,
// and health says so.
func (r *Registry) SetStoreInDoubt(on bool) { r.inDoubt.Store(on) }

// Host is a registered area host. Its fields are the registry's (under
// its mu), but conn, which is safe for concurrent sends, and the
// immutable ones set at registration.
type Host struct {
	// Immutable once registered.
	ID      uint32
	Name    string
	WSURL   string
	PID     int
	Machine string
	Pool    int
	conn    *control.Conn
	cred    store.TokenHash // its spawn credential's hash; zero for a host started elsewhere
	spawned bool            // this director started it (its exit is known at once)
	gone    chan struct{}   // closed when it is unregistered
	// linkDone is closed when its link's reader has ended (readLink):
	// what the link carried handled, the host unregistered. nil for a
	// host whose link no reader serves.
	linkDone chan struct{}

	// heard is when the director last read a message of the host (ns
	// since the registry started: a monotonic clock): any message is proof
	// it lived then. soon holds the answers the link's reader has for the
	// host (heartbeat and snapshot acks), written by the host's own
	// goroutine (sendSoon, sender): the reader never waits on a write to
	// the host.
	heard atomic.Int64
	// answering holds while the director adopts the host's Areas and
	// answers its register: it reads none of the host's messages then, so
	// silence is not the host's (watchHeartbeats); the wait for a
	// heartbeat begins at the answer. Under r.mu.
	answering bool
	soon      chan control.Message
	// backlog is the bytes of the snapshots the link's reader has handed
	// its handler and the handler has not finished (see take).
	backlog atomic.Int64
	// budget is the host's snapshot budget (Config.SnapshotRate), used
	// only by its link's handler.
	budget bucket

	// Under Registry.mu.
	lastBeat time.Time // the last heartbeat's arrival (its figures: beat)
	beat     control.Heartbeat
	areas    map[store.AreaID]*Live
	// placing counts the Areas picked for the host and not yet in areas
	// (their incarnation and snapshot are being read), placingCost their
	// areaCost: pickHost counts them taken, or joins arriving together
	// would all find the same last free slot.
	placing     int
	placingCost int64
	// givenUp holds the incarnations the registry spawned on the host and
	// gave up on before their area_ready came (the spawn timed out; at
	// most maxGivenUp, the oldest forgotten first): the host may still
	// make one live, and then its area_ready is answered close_area and
	// its last words (a presence, a final snapshot, the area_closed) are
	// the answer asked for, not refused messages. Only what the registry
	// spawned is here: a host cannot mute its refusals by claiming Areas.
	givenUp []incarnation

	// Correlated answers (control.Calls: safe for concurrent use).
	ready       control.Calls[store.AreaID, *control.AreaReady]
	grants      control.Calls[string, *control.GrantAck]
	inspections control.Calls[uint64, *control.Inspection]
	evictions   control.Calls[evictKey, *control.Evicted]
}

// Live is an Area live on a host: one incarnation (Epoch) of it. Its
// fields are the registry's (under its mu), but the immutable ones set when
// it was placed.
type Live struct {
	// Immutable once placed.
	ID       store.AreaID
	Kind     string
	Template string
	Host     *Host
	Epoch    store.Epoch
	portals  []control.Portal // the portals it was spawned with
	width    int              // its size: a snapshot's blob and characters must fit it
	height   int
	// ready is closed once the Area is live on Host (err nil) or failed.
	ready chan struct{}
	err   error

	// Under Registry.mu.
	peers     int
	accounts  []store.AccountID // bound there (presence)
	away      []store.AccountID // bodies waiting for a resume there
	storedSeq store.Seq         // the newest of its snapshots the store holds
	zeroSince time.Time         // since when its host reported nobody
	closing   bool
	lastSnap  time.Time // when a snapshot of this incarnation was last applied
	// seqFrom, seqSince and tickRate bound the seq of its snapshots (see
	// seqLimit).
	seqFrom  store.Seq
	seqSince time.Time
	tickRate int
	// maxNPCs bounds the creatures and wanderers its blobs may hold (its
	// map's spawners' counts); -1: no bound known.
	maxNPCs int
	// grants holds the expiry of each grant registered for this Area that
	// its player has not used yet (by account): an Area is never closed
	// while someone is on their way in.
	grants map[store.AccountID]time.Time
	// known are the accounts this incarnation may have a body of, each
	// with until when it may get one without being reported: granted
	// here (while the host could still take the grant's hello), or found
	// here when it was adopted (while an earlier director's grant could).
	// A presence report is believed for them alone (a host cannot fill
	// the realm's head count with accounts it invents); an account stays
	// known while reported, and past its time once not.
	known map[store.AccountID]time.Time
}

// incarnation names one incarnation of an Area.
type incarnation struct {
	area  uint32
	epoch uint64
}

// evictKey names one eviction: an account's body in an Area.
type evictKey struct {
	area    store.AreaID
	account store.AccountID
}

// bucket is a token bucket of bytes.
type bucket struct {
	tokens float64
	last   time.Time
}

// waitingConns are the control connections that have not registered yet:
// at most MaxUnregistered in all, MaxUnregisteredPerAddr per source
// address. Past the first bound the oldest is shed for the newcomer, so
// strangers holding connections open cannot keep a host from registering
// (a host's registration takes a round trip; a stranger's slot is only
// ever the oldest for a moment).
type waitingConns struct {
	mu     sync.Mutex
	order  []*waitingConn // oldest first
	byAddr map[netip.Addr]int
}

type waitingConn struct {
	nc   net.Conn
	addr netip.Addr
	done bool
	shed bool // closed for a newcomer (counted then, not again as it fails)
}

// pendingWrites are the newest snapshot of each Area the store could not
// take (it was unavailable), written again as soon as it comes back: the
// host keeps its unacked snapshot too and resends it, but not before two
// of its persistence intervals, and an Area's play since must reach the
// store as soon as it can. A host that is gone does not resend: what it
// left here is written all the same, and before its Area's next
// incarnation begins (flushPending). Newest wins (the write is idempotent
// and monotonic on seq).
type pendingWrites struct {
	mu sync.Mutex
	m  map[store.AreaID]pendingWrite
}

type pendingWrite struct {
	h *Host
	m *control.Snapshot
}
