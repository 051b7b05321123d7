package area

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/leyworks/ley/area/agones"
	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/gate"
)

// Config configures a Host. Start from DefaultConfig.
type Config struct {
	// Listen is the client WebSocket listen address.
	Listen string
	// PublicURL is the ws:// URL clients are sent to; empty means
	// ws://<listen address>/ws.
	PublicURL string
	// Director is the control address: host:port, or unix:/path. The
	// directors of a realm that runs several (one leads) are listed
	// comma-separated: the host registers with the one that leads.
	Director string
	// SpawnToken is presented by a host the director spawned; HostKey by a
	// host started on another machine. Exactly one is needed.
	SpawnToken string
	HostKey    string
	// ControlTLS, when set, is the TLS configuration the host dials its
	// directors with (see control.ClientTLS: TLS 1.3, the host's
	// certificate presented, the director's verified). Without it the
	// link is plain, and the host key goes to a director on another
	// machine only with ControlInsecure.
	ControlTLS      *tls.Config
	ControlInsecure bool
	// Name names the host in the director's registry and in logs.
	Name string
	// PoolSize caps the Areas this host runs at once (at most
	// control.MaxPoolSize).
	PoolSize int
	// TickRate is the simulation rate of active Areas, in Hz.
	TickRate int
	// SnapshotEvery is the number of ticks between client snapshots
	// (2 at 20 Hz is 10 snapshots a second).
	SnapshotEvery int
	// InterestRadius is how far a peer sees, in squares; 0 means the whole
	// Area (kept only for comparison).
	InterestRadius int
	// CellSize is the spatial hash's cell side, in squares.
	CellSize int
	// PersistEvery is the cadence of snapshots to the director while an
	// Area is active (each put off by up to a 32nd of it, to the host's
	// next persist slot); an unacked one is resent after two intervals.
	PersistEvery time.Duration
	// ResumeGrace keeps a dropped peer's body in the world this long for a
	// resume.
	ResumeGrace time.Duration
	// IntentRate and IntentBurst are each connection's token bucket for
	// intents (per second, and at once); an intent past it is refused
	// RATE_LIMITED. FloodClose is the level of the connection's flood
	// meter that closes it (1008): each refusal adds 1, and the meter
	// drains at half IntentRate whatever gets through. A client up to 1.5
	// times the rate is never closed; at twice the rate it is closed after
	// about 2*FloodClose/IntentRate seconds (20 s with the defaults), at
	// ten times after about FloodClose/(8.5*IntentRate) (1.2 s).
	IntentRate  float64
	IntentBurst int
	FloodClose  int
	// MalformedClose malformed messages close a connection (1008).
	MalformedClose int
	// HelloTimeout closes (1008) a connection that has not sent a valid
	// hello or resume this long after its upgrade; UnboundClose messages
	// answered without a session in a row (intents refused NOT_HELLO or
	// REHELLO, hellos and resumes refused before they reach an Area: a bad
	// grant, a bad token) close it too.
	HelloTimeout time.Duration
	UnboundClose int
	// FinalAckTimeout bounds the wait for the director's ack of a closing
	// Area's final snapshot.
	FinalAckTimeout time.Duration
	// TransferTimeout is how long a portal crossing waits for the director
	// before the player is restored with portal_blocked{TIMEOUT}.
	TransferTimeout time.Duration
	// ShutdownGrace is the grace peers get when the host itself stops.
	ShutdownGrace time.Duration
	// HeartbeatEvery is the control link's heartbeat period; the director
	// drops a host that misses several.
	HeartbeatEvery time.Duration
	// OrphanTimeout, when positive, stops the host (closing its Areas as
	// a shutdown does) once no director has taken it for this long: the
	// hosts a director spawns outlive it so the next director adopts
	// them, but not for ever. 0 waits for a director for ever.
	OrphanTimeout time.Duration
	// PresenceEvery is the period of presence reports per active Area
	// (each put off by up to a 32nd of it, to the host's next presence
	// slot, as PersistEvery's snapshots are).
	PresenceEvery time.Duration
	// ParkAfter is how long an Area stays frozen with nothing to do
	// before it parks: it keeps its state as the blob it persists and
	// lets go of its world, which whatever comes next (a join, a grant)
	// builds again, about 120 µs for a home (docs/operations.md, "Parked
	// Areas"). 0 never parks.
	ParkAfter time.Duration
	// TickStatsEvery, when positive, logs every active Area's tick stats
	// (p50/p95/p99/max, time per system, entities) and the host's output
	// at this period. The heartbeat carries the host's figures anyway.
	TickStatsEvery time.Duration
	// Gate configures the client WebSocket listener (its Addr is Listen).
	// Its PacedReads, when zero, becomes two ticks: the host reads its
	// clients at the start of each tick (docs/operations.md, "How a host
	// reads from players"); below zero keeps the loops event-driven.
	Gate gate.Config
	// AllowedOrigins are the web origins (scheme://host[:port], as a
	// browser sends them in the Origin header) whose pages may open player
	// connections: a page of any other site gets 403 at the upgrade, so it
	// cannot play with a visitor's grant. A connection without an Origin
	// (a program, not a browser) is always accepted. "*" allows every
	// origin. A director passes its own web origins to the hosts it
	// spawns (ley areahost --allowed-origins).
	AllowedOrigins []string
	// Content is the realm's content (maps, rule sets, creature kinds,
	// templates) the host builds Areas from: the same the director has
	// (ley areahost --content, which a director passes on to the hosts it
	// spawns). nil means the embedded content, content.Default(). It is
	// shared and never written.
	Content *content.Library
	// Agones, when set, is the Agones SDK lifecycle of the GameServer this
	// host runs in: the host calls Ready once it registered with its
	// director, reports its Areas and players with every heartbeat, and the
	// caller calls Shutdown after Run returns (drained).
	Agones *agones.Lifecycle
	// Logger receives the host's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a fresh Config with ley's defaults.
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:0",
		Director:        "127.0.0.1:7070",
		Name:            "areahost",
		PoolSize:        64,
		TickRate:        20,
		SnapshotEvery:   2,
		InterestRadius:  24,
		CellSize:        8,
		PersistEvery:    30 * time.Second,
		ResumeGrace:     30 * time.Second,
		IntentRate:      20,
		IntentBurst:     20,
		FloodClose:      200,
		MalformedClose:  10,
		HelloTimeout:    5 * time.Second,
		UnboundClose:    20,
		FinalAckTimeout: 10 * time.Second,
		TransferTimeout: 15 * time.Second,
		ShutdownGrace:   2 * time.Second,
		HeartbeatEvery:  time.Second,
		PresenceEvery:   5 * time.Second,
		ParkAfter:       10 * time.Second,
		Gate:            gate.DefaultConfig(),
	}
}

func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.SpawnToken == "" && c.HostKey == "" && c.ControlTLS == nil {
		bad("a spawn token, a host key or a control TLS certificate is needed to register")
	}
	if c.PoolSize < 1 || c.PoolSize > control.MaxPoolSize {
		bad("pool size %d: want 1 to %d", c.PoolSize, control.MaxPoolSize)
	}
	if c.TickRate < 4 || c.TickRate > 1000 || c.TickRate%4 != 0 {
		bad("tick rate %d Hz: must be 4..1000 and a multiple of the 4 Hz frozen poll", c.TickRate)
	}
	if c.SnapshotEvery < 1 {
		bad("snapshot every %d ticks < 1", c.SnapshotEvery)
	}
	if c.InterestRadius < 0 || c.CellSize < 1 {
		bad("interest radius %d and cell size %d", c.InterestRadius, c.CellSize)
	}
	if c.PersistEvery <= 0 || c.ResumeGrace < 0 || c.FinalAckTimeout <= 0 || c.TransferTimeout <= 0 || c.HeartbeatEvery <= 0 || c.PresenceEvery <= 0 || c.OrphanTimeout < 0 {
		bad("intervals must be positive")
	}
	if c.ParkAfter < 0 {
		bad("park after %v: want 0 (never) or more", c.ParkAfter)
	}
	if c.HelloTimeout <= 0 || c.UnboundClose < 1 {
		bad("hello timeout %v and unbound close %d must be positive", c.HelloTimeout, c.UnboundClose)
	}
	if c.IntentRate <= 0 || c.IntentBurst < 1 || c.FloodClose < 1 || c.MalformedClose < 1 {
		bad("intent rate %v, burst %d, flood close %d, malformed close %d", c.IntentRate, c.IntentBurst, c.FloodClose, c.MalformedClose)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("area: config: %w", err)
	}
	return nil
}

// SnapshotKeepAlive is the longest a bound session goes without a
// snapshot: a round with nothing new for it (no record, no map, the same
// ack_seq) sends none, unless its last one is this old (docs/protocol.md,
// "When a snapshot is sent").
const SnapshotKeepAlive = time.Second

// KeepAliveTicks is the keep-alive the interest system is given
// (interest.System.SetKeepAlive): the ticks since a session's last
// snapshot from which a round sends it one even with nothing new. It is a
// round's ticks short of [SnapshotKeepAlive], less one: the first round at
// or after it, whether by the cadence or after a rest (whose rounds may
// come off the cadence), comes within SnapshotKeepAlive.
func (c *Config) KeepAliveTicks() int {
	perTick := time.Second / time.Duration(max(c.TickRate, 1))
	return max(int(SnapshotKeepAlive/perTick)-c.SnapshotEvery+1, 1)
}
