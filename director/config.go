package director

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// Config configures a Director. Start from DefaultConfig.
type Config struct {
	// HTTP is the API listen address.
	HTTP string
	// Control is the control-channel listen address hosts dial
	// (host:port, or unix:/path).
	Control string
	// HostKey lets area hosts started elsewhere register; empty accepts
	// only hosts this director spawned, and hosts with a certificate when
	// ControlTLS is set. A host on another machine may present it only
	// over TLS, or over a plain link with ControlInsecure.
	HostKey string
	// ControlTLS, when set, serves TLS 1.3 with mutual authentication on
	// the control listener (see control.ServerTLS) to every host that
	// opens with a TLS handshake: a host whose certificate the realm's CA
	// signed registers by that certificate alone. Plain connections on
	// the same listener are still taken from the hosts this director
	// spawned (spawn token) and from hosts on this machine (host key).
	ControlTLS *tls.Config
	// ControlInsecure lets a host on another machine register with the
	// host key over a plain, unencrypted link (a private network the
	// operator trusts). Without it such a host is refused: it must come
	// over TLS.
	ControlInsecure bool
	// TrustedProxies are the addresses of the proxies in front of the
	// director whose X-Forwarded-For it believes: the other directors of
	// the realm (a follower forwards its requests here), a load balancer.
	// The client address that rate limits and login delays key on is then
	// the rightmost untrusted one. Empty: every request's peer is its
	// client.
	TrustedProxies []netip.Prefix
	// AdvertiseHTTP (a base URL, http://host:port) and AdvertiseControl
	// (host:port) are where this director is reached when it leads: other
	// directors forward API requests there, and send hosts there. Empty:
	// the listen addresses, an unspecified IP (0.0.0.0, ::) replaced by
	// the machine's hostname.
	AdvertiseHTTP    string
	AdvertiseControl string
	// WebOrigins are the origins (scheme://host[:port]) of the pages that
	// may open player connections to this realm's hosts: the web client
	// this director serves, and any site of the operator's. The director
	// passes them to the hosts it spawns (hosts started elsewhere take
	// --allowed-origins). Empty: this director's own web origin, from
	// AdvertiseHTTP and its HTTP listen address (both loopback names when
	// it listens on loopback).
	WebOrigins []string
	// Metrics is the listen address of GET /metrics (Prometheus), a
	// listener of its own apart from the public API: loopback by default,
	// a private interface at most. "" serves no metrics.
	Metrics string
	// ControlMaxUnregistered caps the control connections that have not
	// registered yet: past it a new one is closed at once.
	// ControlRegisterTimeout is how long a connection may take to
	// register. Until it registers, a connection's frames are held to
	// control.MaxRegisterFrameSize.
	ControlMaxUnregistered int
	ControlRegisterTimeout time.Duration

	// Spawn configures the area host processes the director starts.
	Spawn SpawnConfig

	// Content is the realm's content: the area kinds and templates the
	// director accepts for new Areas, and the maps whose sizes and portals
	// it reads (it runs no simulation). nil means content.Default(), the
	// embedded content. It must not define a template named "empty", the
	// built-in template (EmptyTemplate). The hosts the director spawns
	// load the same content from Spawn.Content.
	Content *content.Library

	// StarterAreas are the Areas every new account becomes a member of
	// at sign-up, so a new player has somewhere to go at once (ley run
	// adds its demo village and arena with Director.AddStarterAreas). Run
	// refuses to start while one does not exist.
	StarterAreas []store.AreaID

	// GrantHold is how long a join grant not yet used holds a seat against
	// the realm's player cap (at most GrantTTL): a player uses a grant
	// within seconds, and grants never used must not keep the realm full
	// (one used later still binds: the cap may be passed by as many).
	GrantHold time.Duration
	// GrantTTL is a join grant's life; JoinTimeout bounds each step of a
	// join (spawning a host, hydrating the Area, registering the grant).
	GrantTTL    time.Duration
	JoinTimeout time.Duration
	// AreaIdleGrace is how long an Area whose host reports zero peers stays
	// loaded before the director closes it; CloseGrace is the grace its
	// peers get in area_closing when the realm is drained.
	AreaIdleGrace time.Duration
	CloseGrace    time.Duration
	// HeartbeatTimeout marks a host gone when no heartbeat came for it.
	// HostLease is how long a host keeps its players without hearing the
	// director answer its heartbeats: a host cut off from the director (a
	// partition, a director restart) plays on that long, and the director
	// makes its Areas live elsewhere only once it ran out (and, after a
	// start, waits as long for its predecessor's hosts to come back). 0
	// turns leases off: a host cut off keeps its players for ever, even
	// once its Areas are live elsewhere; only for a realm whose hosts
	// cannot be cut off from it without dying.
	HeartbeatTimeout time.Duration
	HostLease        time.Duration

	// Session lifetimes.
	SessionIdle     time.Duration
	SessionAbsolute time.Duration
	// MaxConcurrentHashes caps argon2id hashing in flight (each takes
	// about 19 MiB).
	MaxConcurrentHashes int
	// AuthEvery and AuthBurst limit login and registration attempts per
	// client address (IPv4, or IPv6 /64): AuthBurst at once, then one per
	// AuthEvery.
	AuthEvery time.Duration
	AuthBurst int
	// APIEvery and APIBurst limit each session's authenticated requests:
	// APIBurst at once, then one per APIEvery (429 RATE_LIMITED).
	APIEvery time.Duration
	APIBurst int
	// LoginFreeFailures wrong passwords for one account from one client
	// address are answered at once; after each further one that address
	// waits before trying that account again, LoginDelay doubling up to
	// LoginMaxDelay (a 429 with Retry-After). A success clears the wait.
	// It is a delay, not a lock: other addresses, the owner's among them,
	// are not held up by it.
	LoginFreeFailures int
	LoginDelay        time.Duration
	LoginMaxDelay     time.Duration

	// Per-account quotas; 0 turns one off. MaxOwnedAreas bounds the Areas
	// an account owns (admins are exempt: they own the realm's shared and
	// provisioned Areas); MaxPendingGrants the joins answered whose grant
	// is neither used nor expired yet (each holds a live Area slot);
	// JoinsPerMinute the joins an account may ask for a minute (a burst of
	// that many, then one each 1/JoinsPerMinute minute); MaxLiveInvites
	// the invites an account (not an admin) has that can still be
	// redeemed; MaxOwnedSquares the squares an account's Areas cover
	// together (its memory on the hosts grows with them). A refusal is
	// QUOTA_EXCEEDED, naming the quota.
	MaxOwnedAreas    int
	MaxOwnedSquares  int64
	MaxPendingGrants int
	JoinsPerMinute   int
	MaxLiveInvites   int

	// HostSnapshotRate and HostSnapshotBurst are each host's snapshot
	// budget in bytes: HostSnapshotBurst at once, then HostSnapshotRate a
	// second; a snapshot past it waits unacked on its host (which sends it
	// again), never decoded here (a host's 1 MiB snapshots at 18 a second
	// cost a director 79% of a core).
	HostSnapshotRate  int64
	HostSnapshotBurst int64

	// LoadProvisioning serves POST /v1/admin/provision, the load driver's
	// bulk accounts, Areas and memberships (ley load, ley ladder): for a
	// realm run for load tests. Off (the default), the route answers 404
	// NOT_FOUND as if it did not exist.
	LoadProvisioning bool

	// SampleEvery is the director_samples cadence; StatsEvery that of the
	// director's own stats log line (0: off).
	SampleEvery time.Duration
	StatsEvery  time.Duration

	// Logger receives the director's logs; nil means slog.Default().
	Logger *slog.Logger
}

// SpawnConfig describes the area host children.
type SpawnConfig struct {
	// Binary is the ley executable to run ("" means this process's own).
	Binary string
	// MinHosts are kept running (restarted with backoff when they die);
	// MaxHosts is the process rail: more are never started.
	MinHosts, MaxHosts int
	// PoolSize, TickRate, InterestRadius, PersistEvery, ResumeGrace are
	// passed to every host. PoolSize 0 sizes pools by capacity (Pool).
	PoolSize       int
	TickRate       int
	InterestRadius int
	CellSize       int
	SnapshotEvery  int // ticks between client snapshots
	PersistEvery   time.Duration
	ResumeGrace    time.Duration
	// TransferTimeout is how long a host waits for a crossing's answer.
	TransferTimeout time.Duration
	// ParkAfter is how long a host keeps an Area frozen with nothing to
	// do before it parks it (area.Config.ParkAfter; 0 never parks).
	ParkAfter time.Duration
	// Listen is the host for the children's client listeners (each takes a
	// free port on it); PublicHost, if set, replaces it in the ws:// URLs.
	Listen string
	// MemLimit is each host's GOMEMLIMIT ("" for none), NoFile its file
	// descriptor limit, OOMScoreAdj its oom_score_adj (so the kernel's OOM
	// killer takes a host before the director).
	MemLimit    string
	NoFile      uint64
	OOMScoreAdj int
	// LogLevel is the hosts' log level.
	LogLevel string
	// MaxConnsPerAddr, when positive, is the handshakes and connections
	// one client address may hold on each host (the hosts' default, 256,
	// otherwise): raise it for players behind one NAT, or a load driver.
	MaxConnsPerAddr int
	// MaxHandshakesPerAddr, when positive, is the handshakes one client
	// address may have in progress on each host at a time (the hosts'
	// default, 16, otherwise): players behind one NAT who all reconnect
	// at once (their host stopped) are shed past it and join again.
	MaxHandshakesPerAddr int
	// OrphanTimeout is how long a spawned host waits for a director to
	// take it after its own stopped or died, before it closes its Areas
	// and exits (the next director adopts it within that time).
	OrphanTimeout time.Duration
	// Content is the operator's content folder passed to every host as
	// --content, the folder Config.Content was loaded from; "" for the
	// embedded content.
	Content string
	// Writev has the hosts write each connection with its own writev(2)
	// rather than one io_uring submission per batch (their --writev).
	Writev bool
	// HugePages has the hosts advise the kernel to back their Go heaps
	// with transparent huge pages (their --huge-pages); on by default.
	HugePages bool
	// ShutdownGrace is how long the players of a host that stops (the
	// realm stopping) are told their Area closes before it does
	// (area_closing, then the final snapshot): the hosts'
	// --shutdown-grace, 0..MaxShutdownGrace.
	ShutdownGrace time.Duration
}

// MaxShutdownGrace bounds SpawnConfig.ShutdownGrace: a realm that stops
// waits 15 s for each host, its final snapshots' acks included (10 s at
// most), before killing it.
const MaxShutdownGrace = 2 * time.Second

// DefaultConfig returns a fresh Config with ley's defaults.
func DefaultConfig() Config {
	return Config{
		HTTP:                   "127.0.0.1:8080",
		Control:                "127.0.0.1:7070",
		Metrics:                "127.0.0.1:0",
		ControlMaxUnregistered: 64,
		ControlRegisterTimeout: 5 * time.Second,
		GrantTTL:               90 * time.Second,
		GrantHold:              15 * time.Second,
		JoinTimeout:            10 * time.Second,
		AreaIdleGrace:          60 * time.Second,
		CloseGrace:             10 * time.Second,
		HeartbeatTimeout:       5 * time.Second,
		HostLease:              10 * time.Second,
		SessionIdle:            7 * 24 * time.Hour,
		SessionAbsolute:        30 * 24 * time.Hour,
		MaxConcurrentHashes:    4,
		AuthEvery:              6 * time.Second,
		AuthBurst:              10,
		APIEvery:               20 * time.Millisecond,
		APIBurst:               200,
		LoginFreeFailures:      5,
		LoginDelay:             time.Second,
		LoginMaxDelay:          15 * time.Minute,
		Content:                content.Default(),
		MaxOwnedAreas:          16,
		MaxLiveInvites:         50,
		MaxOwnedSquares:        4 << 20, // four 1024x1024 Areas, ~150 MiB of host memory
		HostSnapshotRate:       4 << 20,
		HostSnapshotBurst:      128 << 20,
		MaxPendingGrants:       3,
		JoinsPerMinute:         30,
		SampleEvery:            time.Minute,
		StatsEvery:             time.Minute,
		Spawn: SpawnConfig{
			MinHosts:        1,
			MaxHosts:        4,
			PoolSize:        0, // by capacity
			TickRate:        20,
			InterestRadius:  24,
			CellSize:        8,
			SnapshotEvery:   2,
			PersistEvery:    30 * time.Second,
			ResumeGrace:     30 * time.Second,
			TransferTimeout: 15 * time.Second,
			ParkAfter:       10 * time.Second,
			Listen:          "127.0.0.1",
			MemLimit:        "1GiB",
			NoFile:          65536,
			OOMScoreAdj:     500,
			LogLevel:        "info",
			OrphanTimeout:   5 * time.Minute,
			ShutdownGrace:   MaxShutdownGrace,
			HugePages:       true,
		},
	}
}

func (c *Config) validate() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	if c.Spawn.SnapshotEvery < 1 || c.Spawn.TickRate < 4 {
		bad("hosts: snapshot every %d ticks at %d Hz", c.Spawn.SnapshotEvery, c.Spawn.TickRate)
	}
	if c.Spawn.ParkAfter < 0 {
		bad("hosts: park after %v: want 0 (never) or more", c.Spawn.ParkAfter)
	}
	if c.Spawn.ShutdownGrace < 0 || c.Spawn.ShutdownGrace > MaxShutdownGrace {
		bad("hosts: shutdown grace %v: must be 0..%v", c.Spawn.ShutdownGrace, MaxShutdownGrace)
	}
	if c.Spawn.MinHosts < 0 || c.Spawn.MaxHosts < c.Spawn.MinHosts {
		bad("hosts: min %d, max %d", c.Spawn.MinHosts, c.Spawn.MaxHosts)
	}
	if c.Spawn.MaxHosts == 0 && c.HostKey == "" && c.ControlTLS == nil {
		bad("no host can ever serve: max hosts is 0, and neither a host key nor control TLS lets others register")
	}
	if c.ControlTLS != nil && (c.ControlTLS.ClientAuth != tls.RequireAndVerifyClientCert || c.ControlTLS.MinVersion < tls.VersionTLS13) {
		bad("control TLS must be TLS 1.3 and require and verify client certificates (see control.ServerTLS)")
	}
	if c.AdvertiseHTTP != "" && !strings.HasPrefix(c.AdvertiseHTTP, "http://") && !strings.HasPrefix(c.AdvertiseHTTP, "https://") {
		bad("advertised HTTP address %q: want an http:// or https:// URL", c.AdvertiseHTTP)
	}
	if c.ControlMaxUnregistered < 1 || c.ControlRegisterTimeout <= 0 {
		bad("control: %d unregistered connections, %v to register", c.ControlMaxUnregistered, c.ControlRegisterTimeout)
	}
	if c.GrantTTL <= 0 || c.GrantHold <= 0 || c.JoinTimeout <= 0 || c.AreaIdleGrace < 0 || c.CloseGrace < 0 || c.HeartbeatTimeout <= 0 {
		bad("durations must be positive")
	}
	if c.Spawn.PoolSize < 0 || c.Spawn.PoolSize > control.MaxPoolSize {
		bad("hosts: pool size %d: want 0 (by capacity) to %d", c.Spawn.PoolSize, control.MaxPoolSize)
	}
	if c.HostLease != 0 && c.HostLease < c.HeartbeatTimeout {
		bad("the host lease (%v) must be at least the heartbeat timeout (%v): a host must not give up its players before the director could see it gone", c.HostLease, c.HeartbeatTimeout)
	}
	if c.SessionIdle <= 0 || c.SessionAbsolute < c.SessionIdle {
		bad("sessions: idle %v, absolute %v", c.SessionIdle, c.SessionAbsolute)
	}
	if c.APIEvery <= 0 || c.APIBurst < 1 {
		bad("the API's rate (every %v, burst %d) must be positive", c.APIEvery, c.APIBurst)
	}
	if c.MaxConcurrentHashes < 1 || c.AuthEvery <= 0 || c.AuthBurst < 1 {
		bad("auth limits")
	}
	if c.LoginFreeFailures < 0 || c.LoginDelay <= 0 || c.LoginMaxDelay < c.LoginDelay {
		bad("login delays: %d free failures, delay %v, max delay %v", c.LoginFreeFailures, c.LoginDelay, c.LoginMaxDelay)
	}
	if c.MaxOwnedAreas < 0 || c.MaxPendingGrants < 0 || c.JoinsPerMinute < 0 || c.MaxLiveInvites < 0 || c.MaxOwnedSquares < 0 {
		bad("quotas must not be negative")
	}
	if c.Content == nil {
		c.Content = content.Default()
	}
	if _, err := c.Content.Template(EmptyTemplate); err == nil {
		bad("content: a template named %q: that name is the built-in open floor of any size; rename the template", EmptyTemplate)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("director: config: %w", err)
	}
	return nil
}

// Pool returns the Areas each host runs: PoolSize if set, else the host's
// memory limit over registry.NominalAreaCost (between 64 and 16,384; 1,024
// without a limit). The slots are only a bound: the registry places Areas
// by the room they take, their size and their bodies (a live home with its
// player some 125 KiB, a village of 20 some 650 KiB: bench/RESULTS.md), so
// a host's memory, not its slot count, says when it is full. CPU does not
// size it: a host process already uses every core of its machine, so a
// second host on the same machine adds no CPU, only another process.
func (c *SpawnConfig) Pool() int {
	if c.PoolSize > 0 {
		return c.PoolSize
	}
	limit, ok := parseMemLimit(c.MemLimit)
	if !ok {
		return 1024
	}
	return int(min(max(limit/registry.NominalAreaCost, 64), 16384))
}

// parseMemLimit reads a GOMEMLIMIT value: bytes, or a number with a B,
// KiB, MiB, GiB or TiB suffix.
func parseMemLimit(s string) (int64, bool) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n * mult, true
}

// EmptyTemplate is the built-in template outside the content: an open
// floor of any size (8..1024 squares a side, given with the Area), with
// players only: no walls, objects, creatures or portals of a map. The
// Area's kind still sets its rules. Benchmarks and the load driver's
// players-only workloads use it.
const EmptyTemplate = "empty"
