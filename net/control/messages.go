package control

// Type is a control message type. Numbers are stable and never reused.
type Type uint8

// The control message types.
const (
	TypeRegister     Type = 1  // host -> director
	TypeRegistered   Type = 2  // director -> host
	TypeHeartbeat    Type = 3  // host -> director
	TypeSpawnArea    Type = 4  // director -> host
	TypeAreaReady    Type = 5  // host -> director
	TypeGrant        Type = 6  // director -> host
	TypeGrantAck     Type = 7  // host -> director
	TypeSnapshot     Type = 8  // host -> director
	TypeSnapshotAck  Type = 9  // director -> host
	TypePresence     Type = 10 // host -> director
	TypeCloseArea    Type = 11 // director -> host
	TypeAreaClosed   Type = 12 // host -> director
	TypePortalOut    Type = 13 // host -> director
	TypePortalResult Type = 14 // director -> host
	TypeInspect      Type = 15 // director -> host
	TypeInspection   Type = 16 // host -> director
	TypeEvict        Type = 17 // director -> host
	TypeEvicted      Type = 18 // host -> director
	TypeHeartbeatAck Type = 19 // director -> host
	TypeSpectate     Type = 20 // director -> host
	TypeAreaList     Type = 21 // host -> director, right after a Register
)

var typeNames = [...]string{
	TypeRegister: "register", TypeRegistered: "registered", TypeHeartbeat: "heartbeat",
	TypeSpawnArea: "spawn_area", TypeAreaReady: "area_ready", TypeGrant: "grant",
	TypeGrantAck: "grant_ack", TypeSnapshot: "snapshot", TypeSnapshotAck: "snapshot_ack",
	TypePresence: "presence", TypeCloseArea: "close_area", TypeAreaClosed: "area_closed",
	TypePortalOut: "portal_out", TypePortalResult: "portal_result",
	TypeInspect: "inspect", TypeInspection: "inspection",
	TypeEvict: "evict", TypeEvicted: "evicted", TypeHeartbeatAck: "heartbeat_ack",
	TypeSpectate: "spectate", TypeAreaList: "area_list",
}

// String returns the type's name.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "control_type(?)"
}

// Message is a control message body.
type Message interface{ Type() Type }

// AreaRef names an Area a host runs, with the incarnation (epoch) the
// director made it live with and the last snapshot seq the director acked.
type AreaRef struct {
	Area  uint32 `cbor:"1,keyasint"`
	Epoch uint64 `cbor:"2,keyasint"`
	Acked uint64 `cbor:"3,keyasint"`
	// Accounts are the accounts whose bodies the Area holds (bound, away
	// or crossing), as of its last presence: a director that adopts the
	// Area evicts those whose characters it let into another Area while
	// the host was away.
	Accounts []uint64 `cbor:"4,keyasint,omitempty"`
	// Placement is the placement credential the director gave with the
	// Area's SpawnArea: a director adopts the Area back only from the host
	// that shows it (an Area is trusted only to the host it was placed on).
	Placement string `cbor:"5,keyasint,omitempty"`
}

// Register is a host's first message. A spawned host presents the spawn
// token the director gave it; a host started elsewhere presents the realm's
// host key. Areas lists what the host still runs after a reconnect.
// PoolSize is at most [MaxPoolSize].
type Register struct {
	SpawnToken string    `cbor:"1,keyasint,omitempty"`
	HostKey    string    `cbor:"2,keyasint,omitempty"`
	Name       string    `cbor:"3,keyasint"`
	WSURL      string    `cbor:"4,keyasint"`
	PoolSize   int       `cbor:"5,keyasint"`
	PID        int       `cbor:"6,keyasint"`
	Areas      []AreaRef `cbor:"7,keyasint"`
	// Boot identifies this host process's start (a random number); a host
	// that restarted has a new Boot, so the director never resumes its
	// earlier handoffs.
	Boot uint64 `cbor:"8,keyasint"`
	// Machine identifies the machine's boot (its kernel's boot id): a
	// director on the same machine tells from PID whether the host's
	// process lives once its link ends.
	Machine string `cbor:"9,keyasint,omitempty"`
	// AreasFollow, when not 0, says that Areas is empty and that this many
	// AreaRefs follow in an [AreaList], the host's next frame: a Register
	// is read before its credentials are checked, within
	// [MaxRegisterFrameSize], and a host that runs hundreds of Areas lists
	// them past it. See [Conn.SendRegister].
	AreasFollow int `cbor:"10,keyasint,omitempty"`
}

// AreaList carries the Areas of the Register before it (its AreasFollow),
// read once the director has checked the host's credentials.
type AreaList struct {
	Areas []AreaRef `cbor:"1,keyasint"`
}

// Registered answers Register. A non-empty Error refuses the host, which
// then exits with that error, unless NotLeader is set: that director is
// not the realm's leader (Error says so), and the host registers with the
// leader instead, at Leader's control address when it is known, else with
// the next director it knows of.
type Registered struct {
	HostID    uint32 `cbor:"1,keyasint"`
	Error     string `cbor:"2,keyasint,omitempty"`
	NotLeader bool   `cbor:"3,keyasint,omitempty"`
	Leader    string `cbor:"4,keyasint,omitempty"`
	// Close are the Areas of Register.Areas the director does not adopt
	// (stale incarnations, or Areas live elsewhere now): the host closes
	// them at once. Evict are the bodies of adopted Areas whose characters
	// the director let into other Areas while the host was away: the host
	// lets go of them (as for an Evict message, unanswered). Both are
	// carried out before the host takes any resume on the new link.
	Close []uint32 `cbor:"5,keyasint,omitempty"`
	Evict []Evict  `cbor:"6,keyasint,omitempty"`
	// LeaseMS is the host's lease: as long as the director answers its
	// heartbeats (HeartbeatAck) the lease runs on; a host that heard
	// nothing for LeaseMS ends its sessions (the director may have made
	// its Areas live elsewhere by then) and keeps its Areas, frozen, for
	// the director to adopt. 0 is no lease (sessions never end for want of
	// the director).
	LeaseMS int64 `cbor:"7,keyasint,omitempty"`
}

// HeartbeatAck answers a Heartbeat: the director heard the host, and its
// lease (Registered.LeaseMS) runs on from when the host sent it.
type HeartbeatAck struct {
	// SentMS echoes the heartbeat's UnixMS, the time the lease runs from.
	SentMS int64 `cbor:"1,keyasint"`
}

// Heartbeat is sent every second; a host missing heartbeats is considered
// gone and its Areas unregistered.
type Heartbeat struct {
	UnixMS  int64 `cbor:"1,keyasint"`
	Areas   int   `cbor:"2,keyasint"`
	Active  int   `cbor:"3,keyasint"`
	Peers   int   `cbor:"4,keyasint"`
	RSSKiB  int64 `cbor:"5,keyasint"`
	TickP99 int64 `cbor:"6,keyasint"` // worst active Area's p99 tick, in µs
	// The worst active Area's other tick percentiles and maximum, in µs.
	TickP50 int64 `cbor:"7,keyasint"`
	TickP95 int64 `cbor:"8,keyasint"`
	TickMax int64 `cbor:"9,keyasint"`
	// BytesOut and FramesOut count what the host has sent to clients
	// since it started (snapshots and reliable messages).
	BytesOut  uint64 `cbor:"10,keyasint"`
	FramesOut uint64 `cbor:"11,keyasint"`
	Entities  int    `cbor:"12,keyasint"`
	// AreaFailures counts the Areas that panicked on this host and were
	// failed alone, since it started.
	AreaFailures uint64 `cbor:"13,keyasint"`
	// AreaBytes is the host's estimate of the memory its live Areas hold,
	// in bytes: the sum of each Area's estimate from its size (grid
	// layers, static map, path-finding buffers, interest cells; see
	// area.Host), so that a director can place by cost.
	AreaBytes int64 `cbor:"14,keyasint"`
	// Parked counts the host's Areas that are parked (frozen long enough
	// to keep only their state's blob; AreaBytes counts them as live, as
	// one may be built again at any moment).
	Parked int `cbor:"15,keyasint,omitempty"`
}

// SpawnArea asks a host to make an Area live (hydrate it from Blob at Seq,
// or build it fresh when Blob is empty).
type SpawnArea struct {
	Area  uint32 `cbor:"1,keyasint"`
	Epoch uint64 `cbor:"2,keyasint"`
	Kind  string `cbor:"3,keyasint"`
	W     int    `cbor:"4,keyasint"`
	H     int    `cbor:"5,keyasint"`
	Seq   uint64 `cbor:"6,keyasint"`
	Blob  []byte `cbor:"7,keyasint"`
	Seed  uint64 `cbor:"8,keyasint"`
	// Portals are the Area's portal squares.
	Portals []Portal `cbor:"9,keyasint,omitempty"`
	// Template names the Area's content (its map, creatures, rules);
	// "" is its kind's default.
	Template string `cbor:"10,keyasint,omitempty"`
	// Placement is this incarnation's placement credential (a random
	// token, whose hash the store keeps with the epoch): the host shows it
	// to have the Area adopted back after a reconnect (AreaRef.Placement).
	Placement string `cbor:"11,keyasint,omitempty"`
}

// Portal is a square of an Area leading to a square of another Area.
type Portal struct {
	X      int32  `cbor:"1,keyasint"`
	Y      int32  `cbor:"2,keyasint"`
	ToArea uint32 `cbor:"3,keyasint"`
	ToX    int32  `cbor:"4,keyasint"`
	ToY    int32  `cbor:"5,keyasint"`
}

// PortalOut asks the director to move a player through a portal: from
// Area (at its incarnation Epoch), whose body stood on (FromX, FromY)
// before stepping onto the portal, to (ToX, ToY) of ToArea. Transfer names
// the crossing; the director's answer is idempotent on it, so the host
// resends until it gets one.
type PortalOut struct {
	Transfer string `cbor:"1,keyasint"`
	Area     uint32 `cbor:"2,keyasint"`
	Epoch    uint64 `cbor:"3,keyasint"`
	Account  uint64 `cbor:"4,keyasint"`
	FromX    int32  `cbor:"5,keyasint"`
	FromY    int32  `cbor:"6,keyasint"`
	ToArea   uint32 `cbor:"7,keyasint"`
	ToX      int32  `cbor:"8,keyasint"`
	ToY      int32  `cbor:"9,keyasint"`
	State    []byte `cbor:"10,keyasint,omitempty"`
	// SentMS is when the host first sent it, and DeadlineMS when the host
	// will give up and restore the player (Unix ms): the director lets the
	// crossing happen only well before that deadline.
	SentMS     int64 `cbor:"11,keyasint"`
	DeadlineMS int64 `cbor:"12,keyasint"`
	// Seq is the Area's snapshot (sent before this message) that holds the
	// character's state as it stepped onto the portal: the move happens
	// only once the store holds it (the character's state goes with its
	// Area's blob, never with a move).
	Seq uint64 `cbor:"13,keyasint,omitempty"`
}

// PortalResult answers a PortalOut. OK: the character is in ToArea, where
// a grant (Grant, JoinID at WSURL) awaits the player. Otherwise Code (a
// wire code) says why, and the player stays in Area.
type PortalResult struct {
	Transfer string `cbor:"1,keyasint"`
	Area     uint32 `cbor:"2,keyasint"`
	Account  uint64 `cbor:"3,keyasint"`
	OK       bool   `cbor:"4,keyasint"`
	Code     uint16 `cbor:"5,keyasint"`
	ToArea   uint32 `cbor:"6,keyasint"`
	WSURL    string `cbor:"7,keyasint"`
	Grant    string `cbor:"8,keyasint"`
	JoinID   uint64 `cbor:"9,keyasint"`
}

// AreaReady answers SpawnArea; Error is empty on success.
type AreaReady struct {
	Area  uint32 `cbor:"1,keyasint"`
	Epoch uint64 `cbor:"2,keyasint"`
	Error string `cbor:"3,keyasint,omitempty"`
}

// Character is one player's state as the director stores it.
type Character struct {
	Account uint64 `cbor:"1,keyasint"`
	X       int32  `cbor:"2,keyasint"`
	Y       int32  `cbor:"3,keyasint"`
	State   []byte `cbor:"4,keyasint,omitempty"`
	// Placed is false for a character never placed in this Area: the host
	// picks a free square near the Area's entry.
	Placed bool `cbor:"5,keyasint"`
	// Builder marks a character its Area's rules let build there when
	// they build by builders (a home's owner and the members it named):
	// set by the director in a grant.
	Builder bool `cbor:"6,keyasint,omitempty"`
	// New marks a character this grant's join made: the Area gives it the
	// content's starter kit when it binds.
	New bool `cbor:"7,keyasint,omitempty"`
}

// Grant registers a join grant for an account in an Area (and wakes a
// frozen Area). The token is single-use and expires after TTLMS.
type Grant struct {
	Area      uint32    `cbor:"1,keyasint"`
	Token     string    `cbor:"2,keyasint"`
	JoinID    uint64    `cbor:"3,keyasint"`
	TTLMS     int64     `cbor:"4,keyasint"`
	Name      string    `cbor:"5,keyasint"`
	Character Character `cbor:"6,keyasint"`
	// Portal marks the grant of a player arriving through a portal.
	Portal bool `cbor:"7,keyasint,omitempty"`
}

// Spectate registers a spectator grant in an Area for an admin of the
// realm (the console's Spectate): the hello that uses it binds a
// spectator, a peer with no body that is sent the Area's map, snapshots
// and presence and whose intents are refused. It is single use, expires
// after TTLMS, and does not wake a frozen Area. The host answers
// GrantAck: Error is set when the Area is not here, is closing, or has
// its maximum of spectators.
type Spectate struct {
	Area    uint32 `cbor:"1,keyasint"`
	Token   string `cbor:"2,keyasint"`
	JoinID  uint64 `cbor:"3,keyasint"`
	TTLMS   int64  `cbor:"4,keyasint"`
	Account uint64 `cbor:"5,keyasint"` // the admin's account, for the host's log
}

// MaxPoolSize bounds the Areas a host may run at once (Register.PoolSize):
// the director keeps room per host by it (its link's backlog holds a few
// messages per Area slot).
const MaxPoolSize = 65536

// ErrorSpectatorsFull is the GrantAck.Error of a Spectate refused because
// the Area or its host has its maximum of spectators.
const ErrorSpectatorsFull = "spectators full: the area or its host has its maximum of spectators"

// GrantAck answers Grant (and Spectate) once the Area registered it; Error is empty on
// success.
type GrantAck struct {
	Area  uint32 `cbor:"1,keyasint"`
	Token string `cbor:"2,keyasint"`
	Error string `cbor:"3,keyasint,omitempty"`
}

// Snapshot is an Area's persistent state at Seq (monotonic per Area), with
// the characters of the players in it. The director's write is idempotent
// on (Area, Seq) and fenced by Epoch.
type Snapshot struct {
	Area       uint32      `cbor:"1,keyasint"`
	Epoch      uint64      `cbor:"2,keyasint"`
	Seq        uint64      `cbor:"3,keyasint"`
	Blob       []byte      `cbor:"4,keyasint"`
	Characters []Character `cbor:"5,keyasint"`
	Final      bool        `cbor:"6,keyasint"`
}

// SnapshotAck acknowledges the snapshot (Area, Seq) as durable. Error is
// set when the director refused it (a fenced, stale epoch): the host stops
// sending that Area's snapshots.
type SnapshotAck struct {
	Area  uint32 `cbor:"1,keyasint"`
	Seq   uint64 `cbor:"2,keyasint"`
	Error string `cbor:"3,keyasint,omitempty"`
}

// Presence reports an Area's connected peers and the accounts whose
// bodies are in it: Accounts are bound to a connection, Away wait for a
// resume (their connection dropped, within the resume grace) or cross a
// portal. A character has a body in at most one Area: the director
// evicts it from wherever presence (or a grant) says it may be before it
// lets the character into another (see Evict).
type Presence struct {
	Area     uint32   `cbor:"1,keyasint"`
	Peers    int      `cbor:"2,keyasint"`
	Accounts []uint64 `cbor:"3,keyasint"`
	Away     []uint64 `cbor:"4,keyasint,omitempty"`
}

// Evict asks the host of Area (at its incarnation Epoch) to let go of the
// character of Account, because the account joined another Area: its
// session there ends (the connection gets taken_over), its resume token
// dies, its grants there are dropped, its final state goes out in a
// snapshot, and its body leaves the world. The host answers Evicted.
//
// Elsewhere says the store already has the character in another Area (a
// director adopting the Area found it let the account in elsewhere while
// the host was away): no crossing of this body can commit any more, so
// even a body crossing a portal leaves, its crossing dropped, rather than
// be answered Busy and restored here once the crossing is refused.
type Evict struct {
	Area      uint32 `cbor:"1,keyasint"`
	Epoch     uint64 `cbor:"2,keyasint"`
	Account   uint64 `cbor:"3,keyasint"`
	Elsewhere bool   `cbor:"4,keyasint,omitempty"`
}

// Evicted answers Evict. Seq is the snapshot carrying the evicted
// character's final state (0 when the Area held no body of the account:
// Absent). Busy reports a body the host cannot let go of now (it is
// crossing a portal): the join that asked must wait for the crossing.
type Evicted struct {
	Area    uint32 `cbor:"1,keyasint"`
	Account uint64 `cbor:"2,keyasint"`
	Seq     uint64 `cbor:"3,keyasint"`
	Absent  bool   `cbor:"4,keyasint,omitempty"`
	Busy    bool   `cbor:"5,keyasint,omitempty"`
}

// CloseArea asks a host to unload an Area: peers get area_closing{Reason,
// GraceMS}, the Area runs through the grace, sends its final snapshot and
// waits (bounded) for the ack, then answers AreaClosed.
//
// Epoch, when set, names the incarnation to close: a host running another
// one of the Area ignores it (the director closes an incarnation whose
// area_ready came after it gave up on it, and may have placed a newer one
// on the same host since).
type CloseArea struct {
	Area    uint32 `cbor:"1,keyasint"`
	Reason  uint16 `cbor:"2,keyasint"` // a wire code, e.g. AREA_CLOSING or REALM_CLOSED
	GraceMS int64  `cbor:"3,keyasint"`
	Epoch   uint64 `cbor:"4,keyasint,omitempty"`
}

// AreaClosed reports an Area unloaded; Seq is its final snapshot's seq and
// Acked whether the director acknowledged it. Failed reports an Area that
// panicked and was failed alone (Reason says how): it sent no final
// snapshot, Seq is its last acknowledged one, and the director makes it
// live again from that snapshot on the next join.
type AreaClosed struct {
	Area   uint32 `cbor:"1,keyasint"`
	Seq    uint64 `cbor:"2,keyasint"`
	Acked  bool   `cbor:"3,keyasint"`
	Failed bool   `cbor:"4,keyasint,omitempty"`
	Reason string `cbor:"5,keyasint,omitempty"`
	Epoch  uint64 `cbor:"6,keyasint,omitempty"`
}

// Inspect asks a host for the ground truth of every Area it runs (an admin
// query, for operators and soak tests); the host answers Inspection with
// the same ID.
type Inspect struct {
	ID uint64 `cbor:"1,keyasint"`
	// Items asks each Area for its items as they are now
	// (AreaState.Items): the director's live count.
	Items bool `cbor:"2,keyasint,omitempty"`
}

// Inspection answers Inspect: each Area's bodies as its world holds them,
// next to the host's session bookkeeping.
type Inspection struct {
	ID    uint64      `cbor:"1,keyasint"`
	Areas []AreaState `cbor:"2,keyasint"`
}

// AreaState is one Area's ground truth, read on the Area's own goroutine
// in one go. Players, Creatures and Bodies are counted in the ECS world;
// the rest is the host's bookkeeping of who drives those bodies. A healthy
// Area has Players == Bound + Dropped and Overdue == 0.
type AreaState struct {
	Area  uint32 `cbor:"1,keyasint" json:"area"`
	Epoch uint64 `cbor:"2,keyasint" json:"epoch"`
	// Active is false for a frozen Area.
	Active    bool   `cbor:"3,keyasint" json:"active"`
	Tick      uint64 `cbor:"4,keyasint" json:"tick"`
	Players   int    `cbor:"5,keyasint" json:"players"`   // player bodies in the world
	Creatures int    `cbor:"6,keyasint" json:"creatures"` // creature bodies in the world
	Bodies    int    `cbor:"7,keyasint" json:"bodies"`    // every body in the world
	Bound     int    `cbor:"8,keyasint" json:"bound"`     // bodies driven by a connected peer
	// Dropped counts bodies whose peer left less than the resume grace
	// ago; Overdue those whose grace ended more than a second ago and are
	// still in the world (a leak).
	Dropped  int `cbor:"9,keyasint" json:"dropped"`
	Overdue  int `cbor:"10,keyasint" json:"overdue"`
	Crossing int `cbor:"11,keyasint" json:"crossing"` // bodies in a portal crossing
	Grants   int `cbor:"12,keyasint" json:"grants"`   // join grants registered, not yet used
	// Error is set when the Area did not answer in time.
	Error string `cbor:"13,keyasint,omitempty" json:"error,omitempty"`
	// Accounts are the accounts of the player bodies in the world, in
	// order: a character has a body in at most one Area of the realm.
	Accounts []uint64 `cbor:"14,keyasint,omitempty" json:"accounts,omitempty"`
	// SinceUS holds, for each of Accounts, when its body came into this
	// Area, and ReadUS when the Area was read (Unix µs, the host's clock):
	// two Areas' readings, taken at different instants, show one body in
	// both at once only if both bodies were there before both readings.
	SinceUS []int64 `cbor:"15,keyasint,omitempty" json:"since_us,omitempty"`
	ReadUS  int64   `cbor:"16,keyasint,omitempty" json:"read_us,omitempty"`
	// Items, when the Inspect asked for them, are the Area's items as its
	// world holds them at the reading, what its next snapshot would carry.
	Items *AreaItems `cbor:"17,keyasint,omitempty" json:"-"`
}

// AreaItems is what an Area holds of the realm's items at one reading:
// its blob (W x H squares) and the states of the characters its next
// snapshot would write, as a Snapshot carries them.
type AreaItems struct {
	W          int         `cbor:"1,keyasint"`
	H          int         `cbor:"2,keyasint"`
	Blob       []byte      `cbor:"3,keyasint"`
	Characters []Character `cbor:"4,keyasint"`
}

// Type implements Message.
func (*HeartbeatAck) Type() Type { return TypeHeartbeatAck }

// Type implements Message.
func (*Spectate) Type() Type { return TypeSpectate }

// Type implements Message.
func (*Evict) Type() Type { return TypeEvict }

// Type implements Message.
func (*Evicted) Type() Type { return TypeEvicted }

// Type implements Message.
func (*Inspect) Type() Type { return TypeInspect }

// Type implements Message.
func (*Inspection) Type() Type { return TypeInspection }

// Type implements Message.
func (*Register) Type() Type { return TypeRegister }

// Type implements Message.
func (*AreaList) Type() Type { return TypeAreaList }

// Type implements Message.
func (*Registered) Type() Type { return TypeRegistered }

// Type implements Message.
func (*Heartbeat) Type() Type { return TypeHeartbeat }

// Type implements Message.
func (*SpawnArea) Type() Type { return TypeSpawnArea }

// Type implements Message.
func (*AreaReady) Type() Type { return TypeAreaReady }

// Type implements Message.
func (*Grant) Type() Type { return TypeGrant }

// Type implements Message.
func (*GrantAck) Type() Type { return TypeGrantAck }

// Type implements Message.
func (*Snapshot) Type() Type { return TypeSnapshot }

// Type implements Message.
func (*SnapshotAck) Type() Type { return TypeSnapshotAck }

// Type implements Message.
func (*Presence) Type() Type { return TypePresence }

// Type implements Message.
func (*CloseArea) Type() Type { return TypeCloseArea }

// Type implements Message.
func (*AreaClosed) Type() Type { return TypeAreaClosed }

// Type implements Message.
func (*PortalOut) Type() Type { return TypePortalOut }

// Type implements Message.
func (*PortalResult) Type() Type { return TypePortalResult }

func newMessage(t Type) Message {
	switch t {
	case TypeRegister:
		return new(Register)
	case TypeRegistered:
		return new(Registered)
	case TypeHeartbeat:
		return new(Heartbeat)
	case TypeSpawnArea:
		return new(SpawnArea)
	case TypeAreaReady:
		return new(AreaReady)
	case TypeGrant:
		return new(Grant)
	case TypeGrantAck:
		return new(GrantAck)
	case TypeSnapshot:
		return new(Snapshot)
	case TypeSnapshotAck:
		return new(SnapshotAck)
	case TypePresence:
		return new(Presence)
	case TypeCloseArea:
		return new(CloseArea)
	case TypeAreaClosed:
		return new(AreaClosed)
	case TypePortalOut:
		return new(PortalOut)
	case TypePortalResult:
		return new(PortalResult)
	case TypeInspect:
		return new(Inspect)
	case TypeInspection:
		return new(Inspection)
	case TypeEvict:
		return new(Evict)
	case TypeEvicted:
		return new(Evicted)
	case TypeHeartbeatAck:
		return new(HeartbeatAck)
	case TypeSpectate:
		return new(Spectate)
	case TypeAreaList:
		return new(AreaList)
	}
	return nil
}
